// Package pixtest is a conformance double of a PSP's API Pix, written from the Banco Central's
// public specification (the OpenAPI document and the API Pix manual), for tests and `troco dev
// psp`. It serves the OAuth token endpoint and /cob, /cobv, /pix, /pix/{e2eid}/devolucao/{id},
// /webhook/{chave} and Pix Automático (/locrec, /rec, /cobr, /webhookrec, /webhookcobr: rec.go)
// in memory over mutual TLS, and plays the payer: Pay settles a charge and
// posts the webhook to the registered URL with the PSP's client certificate.
package pixtest

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"troco/server/pix"
)

// Double is the PSP double.
type Double struct {
	ClientID, ClientSecret, Chave string
	// Host is the payload location host of the charges (pix.example.com).
	Host string
	// TokenLife is the lifetime of issued tokens.
	TokenLife time.Duration
	// WebhookClient posts webhooks (with the PSP's client certificate).
	WebhookClient *http.Client
	// OmitPixInCob leaves the received PIX out of GET /cob answers (the API Pix makes the
	// list optional), so clients must find them with GET /pix.
	OmitPixInCob bool

	mu         sync.Mutex
	tokens     map[string]time.Time
	cobs       map[string]*cob
	pixes      map[string]*received
	webhooks   map[string]string
	locrecs    map[int64]*locRec
	locSeq     int64
	recs       map[string]*rec
	cobrs      map[string]*cobr
	dropCob    int
	dropRec    int
	hang       time.Duration
	down       bool
	Notified   int
	TokenCalls int
}

type cob struct {
	TxID          string         `json:"txid"`
	Revisao       int            `json:"revisao"`
	Calendario    map[string]any `json:"calendario"`
	Status        string         `json:"status"`
	Valor         map[string]any `json:"valor"`
	Chave         string         `json:"chave"`
	Location      string         `json:"location"`
	PixCopiaECola string         `json:"pixCopiaECola"`
	Pix           []*received    `json:"pix,omitempty"`
	Devedor       map[string]any `json:"devedor,omitempty"`
	kind          string
	amount        int64
	created       time.Time
	expires       time.Duration
}

type received struct {
	EndToEndID string       `json:"endToEndId"`
	TxID       string       `json:"txid"`
	Valor      string       `json:"valor"`
	Horario    string       `json:"horario"`
	Devolucoes []*devolucao `json:"devolucoes,omitempty"`
	amount     int64
	devolvido  int64
}

type devolucao struct {
	ID      string         `json:"id"`
	RtrID   string         `json:"rtrId"`
	Valor   string         `json:"valor"`
	Horario map[string]any `json:"horario"`
	Status  string         `json:"status"`
}

// New returns a double with these OAuth credentials and receiving key.
func New(clientID, clientSecret, chave string) *Double {
	return &Double{ClientID: clientID, ClientSecret: clientSecret, Chave: chave, Host: "pix.example.com", TokenLife: time.Hour,
		tokens: map[string]time.Time{}, cobs: map[string]*cob{}, pixes: map[string]*received{}, webhooks: map[string]string{}, hang: 3 * time.Second,
		locrecs: map[int64]*locRec{}, recs: map[string]*rec{}, cobrs: map[string]*cobr{}}
}

// TLSConfig is the double's server side: its certificate, and client certificates required
// (the API Pix is mutual TLS).
func TLSConfig(p *PKI) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{p.Server}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: p.Pool()}
}

// ExpireTokens revokes every issued token: the next request gets 401 (a token expired mid-use).
func (d *Double) ExpireTokens() {
	d.mu.Lock()
	d.tokens = map[string]time.Time{}
	d.mu.Unlock()
}

// DropNextCobAnswers makes the next n charge creations succeed and lose their answer.
func (d *Double) DropNextCobAnswers(n int, hang time.Duration) {
	d.mu.Lock()
	d.dropCob, d.hang = n, hang
	d.mu.Unlock()
}

// SetDown makes every API call answer 503.
func (d *Double) SetDown(v bool) {
	d.mu.Lock()
	d.down = v
	d.mu.Unlock()
}

// CobCount returns how many charges exist.
func (d *Double) CobCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.cobs)
}

// TokenCallCount returns how many tokens were issued.
func (d *Double) TokenCallCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.TokenCalls
}

// Webhook returns the URL registered for a key.
func (d *Double) Webhook(chave string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.webhooks[chave]
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func valor(c int64) string { return pix.FormatAmount(c) }

func parseValor(v string) (int64, bool) {
	if !regexp.MustCompile(`^\d{1,10}\.\d{2}$`).MatchString(v) {
		return 0, false
	}
	var n int64
	for _, r := range strings.Replace(v, ".", "", 1) {
		n = n*10 + int64(r-'0')
	}
	return n, true
}

var txidPattern = regexp.MustCompile(`^[a-zA-Z0-9]{26,35}$`)

// problem writes an RFC 7807 error as the API Pix does.
func problem(w http.ResponseWriter, status int, typ, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "https://pix.bcb.gov.br/api/v2/error/" + typ, "title": title, "status": status, "detail": detail})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ServeHTTP serves the token endpoint (/oauth/token), the API Pix and the double's control
// endpoint POST /dev/pay/{txid} (the payer, for `troco dev psp`).
func (d *Double) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		problem(w, http.StatusUnauthorized, "AcessoNegado", "Não autorizado", "client certificate required")
		return
	}
	if r.URL.Path == "/oauth/token" {
		d.token(w, r)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/dev/pay/") && r.Method == http.MethodPost {
		txid := strings.TrimPrefix(r.URL.Path, "/dev/pay/")
		d.mu.Lock()
		c, ok := d.cobs[txid]
		concluded := ok && c.Status == "CONCLUIDA"
		d.mu.Unlock()
		switch {
		case !ok:
			problem(w, http.StatusNotFound, "CobNaoEncontrado", "Cobrança não encontrada", "no charge "+txid)
		case concluded:
			problem(w, http.StatusConflict, "CobConcluida", "Cobrança já paga", "charge "+txid+" was already paid (a dynamic BR Code is paid once)")
		default:
			if err := d.Pay(txid, -1, true); err != nil {
				problem(w, http.StatusBadGateway, "WebhookFalhou", "Cobrança paga, webhook não entregue",
					"the charge is paid at the PSP, but the webhook to troco failed ("+err.Error()+"); troco's reconciliation job will find the payment")
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}
		return
	}
	if strings.HasPrefix(r.URL.Path, "/dev/rec/") && r.Method == http.MethodPost {
		// The payer answers a recurrence: /dev/rec/{idRec}/{APROVADA|REJEITADA|CANCELADA|EXPIRADA}.
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/dev/rec/"), "/")
		if len(parts) != 2 {
			problem(w, http.StatusNotFound, "NaoEncontrado", "Não encontrado", r.URL.Path)
			return
		}
		if err := d.AnswerRec(parts[0], parts[1]); err != nil {
			problem(w, http.StatusBadRequest, "RecOperacaoInvalida", "Recorrência inválida", err.Error())
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/dev/cobr/") && r.Method == http.MethodPost {
		// The payer's PSP settles an attempt: /dev/cobr/{txid}/pay or /dev/cobr/{txid}/refuse?codigo=AM02.
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/dev/cobr/"), "/")
		if len(parts) != 2 || (parts[1] != "pay" && parts[1] != "refuse") {
			problem(w, http.StatusNotFound, "NaoEncontrado", "Não encontrado", r.URL.Path)
			return
		}
		code := r.URL.Query().Get("codigo")
		if code == "" {
			code = "AM02"
		}
		if err := d.SettleCobR(parts[0], parts[1] == "pay", code, "Recusada pelo PSP pagador"); err != nil {
			problem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Cobrança inválida", err.Error())
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	d.mu.Lock()
	down := d.down
	auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	exp, ok := d.tokens[auth]
	d.mu.Unlock()
	if down {
		problem(w, http.StatusServiceUnavailable, "ServicoIndisponivel", "Serviço indisponível", "the PSP is down")
		return
	}
	if !ok || time.Now().After(exp) {
		problem(w, http.StatusUnauthorized, "AcessoNegado", "Não autorizado", "invalid or expired token")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if d.serveRec(w, r, parts) {
		return
	}
	switch {
	case len(parts) == 2 && (parts[0] == "cob" || parts[0] == "cobv") && r.Method == http.MethodPut:
		d.putCob(w, r, parts[0], parts[1])
	case len(parts) == 2 && (parts[0] == "cob" || parts[0] == "cobv") && r.Method == http.MethodGet:
		d.getCob(w, parts[0], parts[1], http.StatusOK)
	case len(parts) == 1 && parts[0] == "pix" && r.Method == http.MethodGet:
		d.listPix(w, r)
	case len(parts) == 2 && parts[0] == "pix" && r.Method == http.MethodGet:
		d.getPix(w, parts[1])
	case len(parts) == 4 && parts[0] == "pix" && parts[2] == "devolucao" && r.Method == http.MethodPut:
		d.putDevolucao(w, r, parts[1], parts[3])
	case len(parts) == 2 && parts[0] == "webhook" && r.Method == http.MethodPut:
		var body struct {
			WebhookURL string `json:"webhookUrl"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 8<<10)).Decode(&body); err != nil || !strings.HasPrefix(body.WebhookURL, "https://") {
			problem(w, http.StatusBadRequest, "WebhookOperacaoInvalida", "Webhook inválido", "webhookUrl must be an https URL")
			return
		}
		d.mu.Lock()
		d.webhooks[parts[1]] = body.WebhookURL
		d.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	case len(parts) == 2 && parts[0] == "webhook" && r.Method == http.MethodGet:
		d.mu.Lock()
		u, ok := d.webhooks[parts[1]]
		d.mu.Unlock()
		if !ok {
			problem(w, http.StatusNotFound, "WebhookNaoEncontrado", "Webhook não encontrado", "no webhook for this key")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"webhookUrl": u, "chave": parts[1], "criacao": time.Now().UTC().Format(time.RFC3339)})
	default:
		problem(w, http.StatusNotFound, "NaoEncontrado", "Não encontrado", r.Method+" "+r.URL.Path)
	}
}

func (d *Double) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if r.Method != http.MethodPost || !ok || subtle.ConstantTimeCompare([]byte(id), []byte(d.ClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(d.ClientSecret)) != 1 {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	tok := randHex(24)
	d.mu.Lock()
	d.tokens[tok] = time.Now().Add(d.TokenLife)
	d.TokenCalls++
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(d.TokenLife / time.Second), "scope": "cob.write cob.read pix.read pix.write webhook.write webhook.read"})
}

func (d *Double) putCob(w http.ResponseWriter, r *http.Request, kind, txid string) {
	if !txidPattern.MatchString(txid) {
		problem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "txid must have 26 to 35 letters and digits")
		return
	}
	var body struct {
		Calendario struct {
			Expiracao              int    `json:"expiracao"`
			DataDeVencimento       string `json:"dataDeVencimento"`
			ValidadeAposVencimento int    `json:"validadeAposVencimento"`
		} `json:"calendario"`
		Devedor map[string]any `json:"devedor"`
		Valor   struct {
			Original string      `json:"original"`
			Multa    *modalidade `json:"multa"`
			Juros    *modalidade `json:"juros"`
		} `json:"valor"`
		Chave              string `json:"chave"`
		SolicitacaoPagador string `json:"solicitacaoPagador"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&body); err != nil {
		problem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "invalid JSON")
		return
	}
	amount, ok := parseValor(body.Valor.Original)
	if !ok || amount <= 0 {
		problem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "valor.original must be like 10.00")
		return
	}
	if body.Chave != d.Chave {
		problem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "chave is not this receiver's key")
		return
	}
	if len(body.SolicitacaoPagador) > 140 {
		problem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "solicitacaoPagador longer than 140")
		return
	}
	exp := body.Calendario.Expiracao
	if exp <= 0 {
		exp = 86400
	}
	if kind == "cobv" {
		if _, err := time.Parse("2006-01-02", body.Calendario.DataDeVencimento); err != nil {
			problem(w, http.StatusBadRequest, "CobVOperacaoInvalida", "Cobrança inválida", "calendario.dataDeVencimento must be YYYY-MM-DD")
			return
		}
		nome, _ := body.Devedor["nome"].(string)
		cpf, _ := body.Devedor["cpf"].(string)
		cnpj, _ := body.Devedor["cnpj"].(string)
		if nome == "" || (cpf == "") == (cnpj == "") {
			problem(w, http.StatusBadRequest, "CobVOperacaoInvalida", "Cobrança inválida", "devedor needs nome and exactly one of cpf or cnpj")
			return
		}
		// valor.multa: modalidade 1 (fixed) or 2 (percentage); valor.juros: modalidade 1 to 8;
		// both need valorPerc like 2.00.
		if m := body.Valor.Multa; m != nil && (m.Modalidade < 1 || m.Modalidade > 2 || !valorPattern.MatchString(m.ValorPerc)) {
			problem(w, http.StatusBadRequest, "CobVOperacaoInvalida", "Cobrança inválida", "cobv.valor.multa does not match the schema")
			return
		}
		if j := body.Valor.Juros; j != nil && (j.Modalidade < 1 || j.Modalidade > 8 || !valorPattern.MatchString(j.ValorPerc)) {
			problem(w, http.StatusBadRequest, "CobVOperacaoInvalida", "Cobrança inválida", "cobv.valor.juros does not match the schema")
			return
		}
	} else if body.Valor.Multa != nil || body.Valor.Juros != nil {
		problem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "an immediate charge has no multa or juros")
		return
	}
	d.mu.Lock()
	if _, exists := d.cobs[txid]; exists {
		d.mu.Unlock()
		problem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "a charge with this txid already exists")
		return
	}
	now := time.Now().UTC()
	loc := d.Host + "/qr/v2/" + randHex(16)
	code, _ := pix.Payload{MerchantName: "RECEBEDOR", MerchantCity: "SAO PAULO", URL: loc, Amount: amount, SingleUse: true}.Encode()
	c := &cob{TxID: txid, Calendario: map[string]any{"criacao": now.Format(time.RFC3339), "expiracao": exp}, Status: "ATIVA",
		Valor: map[string]any{"original": valor(amount)}, Chave: body.Chave, Location: loc, PixCopiaECola: code, amount: amount, created: now,
		expires: time.Duration(exp) * time.Second, kind: kind}
	if kind == "cobv" {
		c.Calendario = map[string]any{"criacao": now.Format(time.RFC3339), "dataDeVencimento": body.Calendario.DataDeVencimento,
			"validadeAposVencimento": body.Calendario.ValidadeAposVencimento}
		c.Devedor = body.Devedor
		if body.Valor.Multa != nil {
			c.Valor["multa"] = body.Valor.Multa
		}
		if body.Valor.Juros != nil {
			c.Valor["juros"] = body.Valor.Juros
		}
	}
	d.cobs[txid] = c
	drop := d.dropCob > 0
	if drop {
		d.dropCob--
	}
	hang := d.hang
	d.mu.Unlock()
	if drop {
		select {
		case <-time.After(hang):
		case <-r.Context().Done():
		}
		panic(http.ErrAbortHandler)
	}
	d.getCob(w, kind, txid, http.StatusCreated)
}

func (d *Double) getCob(w http.ResponseWriter, kind, txid string, st int) {
	d.mu.Lock()
	c, ok := d.cobs[txid]
	ok = ok && c.kind == kind
	var b []byte
	if ok {
		cp := *c
		if d.OmitPixInCob {
			cp.Pix = nil
		}
		b, _ = json.Marshal(cp)
	}
	d.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, "CobNaoEncontrado", "Cobrança não encontrada", txid)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(st)
	_, _ = w.Write(b)
}

func (d *Double) getPix(w http.ResponseWriter, e2eid string) {
	d.mu.Lock()
	p, ok := d.pixes[e2eid]
	var b []byte
	if ok {
		b, _ = json.Marshal(p)
	}
	d.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, "PixNaoEncontrado", "Pix não encontrado", e2eid)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (d *Double) listPix(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	inicio, err1 := time.Parse(time.RFC3339, q.Get("inicio"))
	fim, err2 := time.Parse(time.RFC3339, q.Get("fim"))
	if err1 != nil || err2 != nil {
		problem(w, http.StatusBadRequest, "ConsultaInvalida", "Consulta inválida", "inicio and fim are required RFC 3339 instants")
		return
	}
	d.mu.Lock()
	out := []*received{}
	for _, p := range d.pixes {
		t, _ := time.Parse(time.RFC3339, p.Horario)
		if t.Before(inicio) || t.After(fim) || (q.Get("txid") != "" && q.Get("txid") != p.TxID) {
			continue
		}
		out = append(out, p)
	}
	b, _ := json.Marshal(map[string]any{"parametros": map[string]any{"inicio": q.Get("inicio"), "fim": q.Get("fim")}, "pix": out})
	d.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (d *Double) putDevolucao(w http.ResponseWriter, r *http.Request, e2eid, id string) {
	var body struct {
		Valor string `json:"valor"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<10)).Decode(&body); err != nil {
		problem(w, http.StatusBadRequest, "DevolucaoOperacaoInvalida", "Devolução inválida", "invalid JSON")
		return
	}
	amount, ok := parseValor(body.Valor)
	d.mu.Lock()
	defer d.mu.Unlock()
	p, found := d.pixes[e2eid]
	switch {
	case !found:
		problem(w, http.StatusNotFound, "PixNaoEncontrado", "Pix não encontrado", e2eid)
		return
	case !ok || amount <= 0:
		problem(w, http.StatusBadRequest, "DevolucaoOperacaoInvalida", "Devolução inválida", "valor must be like 10.00")
		return
	}
	for _, dv := range p.Devolucoes {
		if dv.ID == id { // the same id again: the same devolução
			writeJSON(w, http.StatusCreated, dv)
			return
		}
	}
	if p.devolvido+amount > p.amount {
		problem(w, http.StatusBadRequest, "DevolucaoOperacaoInvalida", "Devolução inválida", "the amount exceeds what remains of the PIX")
		return
	}
	p.devolvido += amount
	dv := &devolucao{ID: id, RtrID: "D" + strings.ToUpper(randHex(15)), Valor: body.Valor, Status: "DEVOLVIDO",
		Horario: map[string]any{"solicitacao": time.Now().UTC().Format(time.RFC3339), "liquidacao": time.Now().UTC().Format(time.RFC3339)}}
	p.Devolucoes = append(p.Devolucoes, dv)
	writeJSON(w, http.StatusCreated, dv)
}

// Pay plays the payer: the charge txid is paid with amount (its own when negative) and, with
// notify, the webhook is posted to the URL registered for the key, with "/pix" appended.
func (d *Double) Pay(txid string, amount int64, notify bool) error {
	d.mu.Lock()
	c, ok := d.cobs[txid]
	if !ok {
		d.mu.Unlock()
		return fmt.Errorf("no charge %s", txid)
	}
	if amount < 0 {
		amount = c.amount
	}
	p := &received{EndToEndID: "E12345678" + time.Now().UTC().Format("200601021504") + strings.ToLower(randHex(6)), TxID: txid, Valor: valor(amount),
		Horario: time.Now().UTC().Format(time.RFC3339), amount: amount}
	c.Status = "CONCLUIDA"
	c.Pix = append(c.Pix, p)
	d.pixes[p.EndToEndID] = p
	hook := d.webhooks[c.Chave]
	d.mu.Unlock()
	if !notify {
		return nil
	}
	return d.Notify(hook, p)
}

// Notify posts one PIX to a webhook URL as the PSP does (URL + "/pix").
func (d *Double) Notify(hook string, p *received) error {
	if hook == "" {
		return fmt.Errorf("no webhook registered")
	}
	body, _ := json.Marshal(map[string]any{"pix": []*received{p}})
	client := d.WebhookClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Post(strings.TrimRight(hook, "/")+"/pix", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	d.mu.Lock()
	d.Notified++
	d.mu.Unlock()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("webhook answered %d", resp.StatusCode)
	}
	return nil
}

// modalidade is a cobv's valor.multa or valor.juros.
type modalidade struct {
	Modalidade int    `json:"modalidade"`
	ValorPerc  string `json:"valorPerc"`
}

var valorPattern = regexp.MustCompile(`^\d{1,10}\.\d{2}$`)

// Charge returns a charge as GET /cob/{txid} or /cobv/{txid} answers it, and which of the two
// it is; nil when there is none.
func (d *Double) Charge(txid string) (kind string, body map[string]any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.cobs[txid]
	if c == nil {
		return "", nil
	}
	b, _ := json.Marshal(c)
	_ = json.Unmarshal(b, &body)
	return c.kind, body
}

// LastPix returns the PIX that paid txid (to replay its notification).
func (d *Double) LastPix(txid string) *received {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.cobs[txid]
	if c == nil || len(c.Pix) == 0 {
		return nil
	}
	return c.Pix[len(c.Pix)-1]
}

// ExpireCob makes a charge removed by the PSP (expired).
func (d *Double) ExpireCob(txid string) {
	d.mu.Lock()
	if c := d.cobs[txid]; c != nil {
		c.Status = "REMOVIDA_PELO_PSP"
	}
	d.mu.Unlock()
}
