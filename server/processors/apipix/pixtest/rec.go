package pixtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"troco/server/pix"
)

// Pix Automático in the double, from the Banco Central's OpenAPI (schemas RecSolicitada,
// RecCompleta, PayloadLocationRec*, CobRSolicitada, CobRCompleta, CobRTentativas and the status
// enums): POST /locrec, POST /rec, GET /rec, GET and PATCH /rec/{idRec}, PUT and GET
// /cobr/{txid}, POST /cobr/{txid}/retentativa/{data}, PUT and GET /webhookrec and /webhookcobr.
// The payer's side is played by AnswerRec (the payer approves, rejects or cancels the
// recurrence in their bank) and SettleCobR (the payer's PSP pays or refuses an attempt on its
// date); both post the PSP's webhook (webhookUrl + "/rec" or "/cobr").

type locRec struct {
	ID       int64  `json:"id"`
	Location string `json:"location"`
	Tipo     string `json:"tipo"`
	Criacao  string `json:"criacao"`
	IDRec    string `json:"idRec,omitempty"`
}

type statusAt struct {
	Status string `json:"status"`
	Data   string `json:"data"`
}

type rec struct {
	IDRec               string         `json:"idRec"`
	Vinculo             map[string]any `json:"vinculo"`
	Calendario          map[string]any `json:"calendario"`
	Valor               map[string]any `json:"valor,omitempty"`
	Recebedor           map[string]any `json:"recebedor"`
	PoliticaRetentativa string         `json:"politicaRetentativa"`
	Status              string         `json:"status"`
	Loc                 *locRec        `json:"loc,omitempty"`
	Atualizacao         []statusAt     `json:"atualizacao"`
	Ativacao            map[string]any `json:"ativacao"`
	Encerramento        map[string]any `json:"encerramento,omitempty"`
	DadosQR             map[string]any `json:"dadosQR,omitempty"`
	criacao             time.Time
}

type tentativa struct {
	DataLiquidacao string         `json:"dataLiquidacao"`
	Tipo           string         `json:"tipo"`
	Status         string         `json:"status"`
	EndToEndID     string         `json:"endToEndId"`
	Atualizacao    []statusAt     `json:"atualizacao"`
	Rejeicao       map[string]any `json:"rejeicao,omitempty"`
}

type cobr struct {
	IDRec               string         `json:"idRec"`
	TxID                string         `json:"txid"`
	InfoAdicional       string         `json:"infoAdicional,omitempty"`
	Calendario          map[string]any `json:"calendario"`
	Valor               map[string]any `json:"valor"`
	AjusteDiaUtil       bool           `json:"ajusteDiaUtil"`
	Recebedor           map[string]any `json:"recebedor"`
	Devedor             map[string]any `json:"devedor,omitempty"`
	Status              string         `json:"status"`
	PoliticaRetentativa string         `json:"politicaRetentativa"`
	Pix                 []*received    `json:"pix,omitempty"`
	Atualizacao         []statusAt     `json:"atualizacao"`
	Tentativas          []*tentativa   `json:"tentativas"`
	Encerramento        map[string]any `json:"encerramento,omitempty"`
	amount              int64
	vencimento          time.Time
}

// Rejection codes of a recurring charge's attempt (CobRTentativas.rejeicao.codigo); the ones the
// OpenAPI says reject the whole charge end it, the others leave it open for a retry.
var (
	tentativaCodes = []string{"AB10", "AC05", "AC06", "AM02", "AM09", "DENC", "DS27", "DTED", "DTNT", "FBRD", "IRNT", "MIDI", "MSUC", "NIEC", "NIPA", "NITX", "QUNT", "RC09", "UDEI"}
	fatalCodes     = []string{"AC05", "AM09", "DENC", "DS27", "DTED", "MIDI", "MSUC", "NITX", "RC09"}
	periodicidades = []string{"SEMANAL", "MENSAL", "TRIMESTRAL", "SEMESTRAL", "ANUAL"}
	cpfPattern     = regexp.MustCompile(`^\d{11}$`)
	cnpjPattern    = regexp.MustCompile(`^[0-9A-Z]{14}$`)
	datePattern    = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

const doubleISPB = "12345678"

func now3339() string { return time.Now().UTC().Format(time.RFC3339) }

// serveRec serves the Pix Automático paths; it returns false for any other path.
func (d *Double) serveRec(w http.ResponseWriter, r *http.Request, parts []string) bool {
	switch {
	case len(parts) == 1 && parts[0] == "locrec" && r.Method == http.MethodPost:
		d.postLocRec(w, r)
	case len(parts) == 1 && parts[0] == "rec" && r.Method == http.MethodPost:
		d.postRec(w, r)
	case len(parts) == 1 && parts[0] == "rec" && r.Method == http.MethodGet:
		d.listRec(w, r)
	case len(parts) == 2 && parts[0] == "rec" && r.Method == http.MethodGet:
		d.getRec(w, parts[1])
	case len(parts) == 2 && parts[0] == "rec" && r.Method == http.MethodPatch:
		d.patchRec(w, r, parts[1])
	case len(parts) == 2 && parts[0] == "cobr" && r.Method == http.MethodPut:
		d.putCobR(w, r, parts[1])
	case len(parts) == 2 && parts[0] == "cobr" && r.Method == http.MethodGet:
		d.getCobR(w, parts[1], http.StatusOK)
	case len(parts) == 4 && parts[0] == "cobr" && parts[2] == "retentativa" && r.Method == http.MethodPost:
		d.retryCobR(w, parts[1], parts[3])
	case len(parts) == 1 && (parts[0] == "webhookrec" || parts[0] == "webhookcobr") && r.Method == http.MethodPut:
		var body struct {
			WebhookURL string `json:"webhookUrl"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 8<<10)).Decode(&body); err != nil || !strings.HasPrefix(body.WebhookURL, "https://") {
			problem(w, http.StatusBadRequest, "WebhookOperacaoInvalida", "Webhook inválido", "webhookUrl must be an https URL")
			return true
		}
		d.mu.Lock()
		d.webhooks["/"+parts[0]] = body.WebhookURL
		d.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	case len(parts) == 1 && (parts[0] == "webhookrec" || parts[0] == "webhookcobr") && r.Method == http.MethodGet:
		d.mu.Lock()
		u, ok := d.webhooks["/"+parts[0]]
		d.mu.Unlock()
		if !ok {
			problem(w, http.StatusNotFound, "WebhookNaoEncontrado", "Webhook não encontrado", "no webhook registered")
			return true
		}
		writeJSON(w, http.StatusOK, map[string]any{"webhookUrl": u, "criacao": now3339()})
	default:
		return false
	}
	return true
}

func (d *Double) postLocRec(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Tipo string `json:"tipo"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<10)).Decode(&body); err != nil || body.Tipo != "rec" {
		problem(w, http.StatusBadRequest, "PayloadLocationOperacaoInvalida", "Location inválida", "tipo must be rec")
		return
	}
	d.mu.Lock()
	d.locSeq++
	l := &locRec{ID: d.locSeq, Location: d.Host + "/qr/v2/rec/" + randHex(16), Tipo: "rec", Criacao: now3339()}
	d.locrecs[l.ID] = l
	d.mu.Unlock()
	writeJSON(w, http.StatusCreated, l)
}

func (d *Double) postRec(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Vinculo struct {
			Objeto   string `json:"objeto"`
			Contrato string `json:"contrato"`
			Devedor  struct {
				CPF  string `json:"cpf"`
				CNPJ string `json:"cnpj"`
				Nome string `json:"nome"`
			} `json:"devedor"`
		} `json:"vinculo"`
		Calendario struct {
			DataInicial   string `json:"dataInicial"`
			DataFinal     string `json:"dataFinal"`
			Periodicidade string `json:"periodicidade"`
		} `json:"calendario"`
		Valor               map[string]any `json:"valor"`
		PoliticaRetentativa string         `json:"politicaRetentativa"`
		Loc                 int64          `json:"loc"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&body); err != nil {
		problem(w, http.StatusBadRequest, "RecOperacaoInvalida", "Recorrência inválida", "invalid JSON")
		return
	}
	v, c := body.Vinculo, body.Calendario
	bad := ""
	switch {
	case v.Contrato == "" || len(v.Contrato) > 35:
		bad = "vinculo.contrato is required, at most 35 characters"
	case len([]rune(v.Objeto)) > 35:
		bad = "vinculo.objeto has at most 35 characters"
	case v.Devedor.Nome == "" || len([]rune(v.Devedor.Nome)) > 140:
		bad = "vinculo.devedor.nome is required, at most 140 characters"
	case (v.Devedor.CPF == "") == (v.Devedor.CNPJ == ""):
		bad = "vinculo.devedor needs exactly one of cpf or cnpj"
	case v.Devedor.CPF != "" && !cpfPattern.MatchString(v.Devedor.CPF), v.Devedor.CNPJ != "" && !cnpjPattern.MatchString(v.Devedor.CNPJ):
		bad = "vinculo.devedor.cpf or cnpj does not match its pattern"
	case !datePattern.MatchString(c.DataInicial):
		bad = "calendario.dataInicial must be YYYY-MM-DD"
	case c.DataFinal != "" && (!datePattern.MatchString(c.DataFinal) || c.DataFinal <= c.DataInicial):
		bad = "calendario.dataFinal must be a date after dataInicial"
	case !slices.Contains(periodicidades, c.Periodicidade):
		bad = "calendario.periodicidade must be one of " + strings.Join(periodicidades, ", ")
	case body.PoliticaRetentativa != "NAO_PERMITE" && body.PoliticaRetentativa != "PERMITE_3R_7D":
		bad = "politicaRetentativa must be NAO_PERMITE or PERMITE_3R_7D"
	}
	if bad != "" {
		problem(w, http.StatusBadRequest, "RecOperacaoInvalida", "Recorrência inválida", bad)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var loc *locRec
	if body.Loc != 0 {
		if loc = d.locrecs[body.Loc]; loc == nil || loc.IDRec != "" {
			problem(w, http.StatusBadRequest, "RecOperacaoInvalida", "Recorrência inválida", "loc does not exist or is already used")
			return
		}
	}
	kind := "N"
	if body.PoliticaRetentativa == "PERMITE_3R_7D" {
		kind = "R"
	}
	now := time.Now().UTC()
	id := "R" + kind + doubleISPB + now.Format("20060102") + randAlnum(11)
	dev := map[string]any{"nome": v.Devedor.Nome}
	if v.Devedor.CPF != "" {
		dev["cpf"] = v.Devedor.CPF
	} else {
		dev["cnpj"] = v.Devedor.CNPJ
	}
	cal := map[string]any{"dataInicial": c.DataInicial, "periodicidade": c.Periodicidade}
	if c.DataFinal != "" {
		cal["dataFinal"] = c.DataFinal
	}
	rc := &rec{IDRec: id, Vinculo: map[string]any{"objeto": v.Objeto, "contrato": v.Contrato, "devedor": dev}, Calendario: cal, Valor: body.Valor,
		Recebedor: map[string]any{"cnpj": "12345678000195", "nome": "RECEBEDOR"}, PoliticaRetentativa: body.PoliticaRetentativa, Status: "CRIADA",
		Atualizacao: []statusAt{{"CRIADA", now.Format(time.RFC3339)}}, Ativacao: map[string]any{"tipoJornada": "AGUARDANDO_DEFINICAO"}, criacao: now}
	if loc != nil {
		loc.IDRec = id
		rc.Loc = loc
	}
	d.recs[id] = rc
	if d.dropRec > 0 { // created, and the answer is lost
		d.dropRec--
		hang := d.hang
		d.mu.Unlock()
		select {
		case <-time.After(hang):
		case <-r.Context().Done():
		}
		d.mu.Lock() // the deferred Unlock
		panic(http.ErrAbortHandler)
	}
	writeJSON(w, http.StatusCreated, rc)
}

// DropNextRecAnswers makes the next n recurrence creations (POST /rec) succeed and lose their
// answer after hang.
func (d *Double) DropNextRecAnswers(n int, hang time.Duration) {
	d.mu.Lock()
	d.dropRec, d.hang = n, hang
	d.mu.Unlock()
}

// recView is a recurrence as GET /rec/{idRec} answers it: with the QR of its location.
func (d *Double) recView(rc *rec) *rec {
	cp := *rc
	if rc.Loc != nil && rc.Status == "CRIADA" {
		code, _ := pix.Payload{MerchantName: "RECEBEDOR", MerchantCity: "SAO PAULO", URL: rc.Loc.Location, SingleUse: true}.Encode()
		cp.DadosQR = map[string]any{"jornada": "JORNADA_2", "pixCopiaECola": code}
	}
	return &cp
}

func (d *Double) getRec(w http.ResponseWriter, id string) {
	d.mu.Lock()
	rc := d.recs[id]
	var v *rec
	if rc != nil {
		v = d.recView(rc)
	}
	d.mu.Unlock()
	if v == nil {
		problem(w, http.StatusNotFound, "RecNaoEncontrado", "Recorrência não encontrada", id)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (d *Double) listRec(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	inicio, err1 := time.Parse(time.RFC3339, q.Get("inicio"))
	fim, err2 := time.Parse(time.RFC3339, q.Get("fim"))
	if err1 != nil || err2 != nil {
		problem(w, http.StatusBadRequest, "ConsultaInvalida", "Consulta inválida", "inicio and fim are required RFC 3339 instants")
		return
	}
	d.mu.Lock()
	out := []*rec{}
	for _, rc := range d.recs {
		if rc.criacao.Before(inicio) || rc.criacao.After(fim) || (q.Get("status") != "" && q.Get("status") != rc.Status) {
			continue
		}
		out = append(out, rc)
	}
	b, _ := json.Marshal(map[string]any{"parametros": map[string]any{"inicio": q.Get("inicio"), "fim": q.Get("fim"),
		"paginacao": map[string]any{"paginaAtual": 0, "itensPorPagina": 100, "quantidadeDePaginas": 1, "quantidadeTotalDeItens": len(out)}}, "recs": out})
	d.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (d *Double) patchRec(w http.ResponseWriter, r *http.Request, id string) {
	var body struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<10)).Decode(&body); err != nil || body.Status != "CANCELADA" {
		problem(w, http.StatusBadRequest, "RecOperacaoInvalida", "Recorrência inválida", "status may only become CANCELADA")
		return
	}
	d.mu.Lock()
	rc := d.recs[id]
	switch {
	case rc == nil:
		d.mu.Unlock()
		problem(w, http.StatusNotFound, "RecNaoEncontrado", "Recorrência não encontrada", id)
		return
	case rc.Status != "CRIADA" && rc.Status != "APROVADA":
		d.mu.Unlock()
		problem(w, http.StatusBadRequest, "RecOperacaoInvalida", "Recorrência inválida", "a recurrence "+rc.Status+" cannot be canceled")
		return
	}
	d.endRec(rc, "CANCELADA", map[string]any{"cancelamento": map[string]any{"solicitante": "USUARIO_RECEBEDOR", "codigo": "SLCR", "descricao": "Cancelamento solicitado pelo usuário recebedor"}})
	v := d.recView(rc)
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, v)
}

// endRec moves a recurrence to status (with d.mu held); its pending recurring charges are
// canceled when it is.
func (d *Double) endRec(rc *rec, status string, enc map[string]any) {
	rc.Status = status
	rc.Atualizacao = append(rc.Atualizacao, statusAt{status, now3339()})
	if enc != nil {
		rc.Encerramento = enc
	}
	if status == "APROVADA" {
		rc.Ativacao = map[string]any{"tipoJornada": "JORNADA_2"}
	}
	if status != "CANCELADA" {
		return
	}
	for _, c := range d.cobrs {
		if c.IDRec == rc.IDRec && (c.Status == "CRIADA" || c.Status == "ATIVA") {
			c.Status = "CANCELADA"
			c.Atualizacao = append(c.Atualizacao, statusAt{"CANCELADA", now3339()})
			c.Encerramento = map[string]any{"cancelamento": map[string]any{"solicitante": "USUARIO_RECEBEDOR", "codigo": "CCLD", "descricao": "Recorrência cancelada"}}
			for _, t := range c.Tentativas {
				if t.Status == "SOLICITADA" || t.Status == "AGENDADA" {
					t.Status = "CANCELADA"
					t.Atualizacao = append(t.Atualizacao, statusAt{"CANCELADA", now3339()})
				}
			}
		}
	}
}

func (d *Double) putCobR(w http.ResponseWriter, r *http.Request, txid string) {
	if !txidPattern.MatchString(txid) {
		problem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Cobrança inválida", "txid must have 26 to 35 letters and digits")
		return
	}
	var body struct {
		IDRec         string `json:"idRec"`
		InfoAdicional string `json:"infoAdicional"`
		Calendario    struct {
			DataDeVencimento string `json:"dataDeVencimento"`
		} `json:"calendario"`
		Valor struct {
			Original string `json:"original"`
		} `json:"valor"`
		AjusteDiaUtil *bool          `json:"ajusteDiaUtil"`
		Recebedor     map[string]any `json:"recebedor"`
		Devedor       map[string]any `json:"devedor"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&body); err != nil {
		problem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Cobrança inválida", "invalid JSON")
		return
	}
	amount, ok := parseValor(body.Valor.Original)
	venc, derr := time.Parse("2006-01-02", body.Calendario.DataDeVencimento)
	conta, _ := body.Recebedor["conta"].(string)
	tipo, _ := body.Recebedor["tipoConta"].(string)
	bad := ""
	switch {
	case !ok || amount <= 0:
		bad = "valor.original must be like 10.00"
	case derr != nil:
		bad = "calendario.dataDeVencimento must be YYYY-MM-DD"
	case body.AjusteDiaUtil == nil:
		bad = "ajusteDiaUtil is required"
	case conta == "" || len(conta) > 20 || !slices.Contains([]string{"CORRENTE", "POUPANCA", "PAGAMENTO"}, tipo):
		bad = "recebedor needs conta (at most 20) and tipoConta CORRENTE, POUPANCA or PAGAMENTO"
	case len([]rune(body.InfoAdicional)) > 140:
		bad = "infoAdicional has at most 140 characters"
	}
	if bad != "" {
		problem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Cobrança inválida", bad)
		return
	}
	d.mu.Lock()
	rc := d.recs[body.IDRec]
	switch {
	case d.cobrs[txid] != nil:
		d.mu.Unlock()
		problem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Cobrança inválida", "a recurring charge with this txid already exists")
		return
	case rc == nil:
		d.mu.Unlock()
		problem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Cobrança inválida", "idRec does not exist")
		return
	case rc.Status != "APROVADA":
		d.mu.Unlock()
		problem(w, http.StatusBadRequest, "CobROperacaoInvalida", "Cobrança inválida", "the recurrence is "+rc.Status+", not APROVADA")
		return
	}
	now := now3339()
	c := &cobr{IDRec: rc.IDRec, TxID: txid, InfoAdicional: body.InfoAdicional,
		Calendario: map[string]any{"criacao": time.Now().UTC().Format("2006-01-02"), "dataDeVencimento": body.Calendario.DataDeVencimento},
		Valor:      map[string]any{"original": valor(amount)}, AjusteDiaUtil: *body.AjusteDiaUtil, Recebedor: body.Recebedor, Devedor: body.Devedor,
		Status: "ATIVA", PoliticaRetentativa: rc.PoliticaRetentativa, Atualizacao: []statusAt{{"CRIADA", now}, {"ATIVA", now}},
		Tentativas: []*tentativa{{DataLiquidacao: body.Calendario.DataDeVencimento, Tipo: "AGND", Status: "AGENDADA", EndToEndID: e2eID(),
			Atualizacao: []statusAt{{"SOLICITADA", now}, {"AGENDADA", now}}}},
		amount: amount, vencimento: venc}
	d.cobrs[txid] = c
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
	d.getCobR(w, txid, http.StatusCreated)
}

func (d *Double) getCobR(w http.ResponseWriter, txid string, st int) {
	d.mu.Lock()
	c := d.cobrs[txid]
	var b []byte
	if c != nil {
		b, _ = json.Marshal(c)
	}
	d.mu.Unlock()
	if c == nil {
		problem(w, http.StatusNotFound, "CobRNaoEncontrado", "Cobrança recorrente não encontrada", txid)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(st)
	_, _ = w.Write(b)
}

// retryCobR asks for a retry of a refused attempt: the charge must allow retries
// (PERMITE_3R_7D: at most three, within seven days of the due date) and its last attempt must
// have been refused or expired; the date is not before that attempt's.
func (d *Double) retryCobR(w http.ResponseWriter, txid, data string) {
	day, err := time.Parse("2006-01-02", data)
	if err != nil {
		problem(w, http.StatusBadRequest, "CobRTentativaInvalida", "Retentativa inválida", "data must be YYYY-MM-DD")
		return
	}
	d.mu.Lock()
	c := d.cobrs[txid]
	if c == nil {
		d.mu.Unlock()
		problem(w, http.StatusNotFound, "CobRNaoEncontrado", "Cobrança recorrente não encontrada", txid)
		return
	}
	last := c.Tentativas[len(c.Tentativas)-1]
	retries := 0
	for _, t := range c.Tentativas {
		if t.Tipo == "RIFL" {
			retries++
		}
	}
	bad := ""
	switch {
	case c.Status != "ATIVA":
		bad = "the recurring charge is " + c.Status
	case c.PoliticaRetentativa != "PERMITE_3R_7D":
		bad = "the recurrence does not allow retries"
	case last.Status != "REJEITADA" && last.Status != "EXPIRADA":
		bad = "the last attempt is " + last.Status + "; only a refused or expired one is retried"
	case retries >= 3:
		bad = "three retries were already made"
	case data < last.DataLiquidacao || day.After(c.vencimento.AddDate(0, 0, 7)):
		bad = "data must be on or after the last attempt and within seven days of the due date"
	}
	if bad != "" {
		d.mu.Unlock()
		problem(w, http.StatusBadRequest, "CobRTentativaInvalida", "Retentativa inválida", bad)
		return
	}
	now := now3339()
	c.Tentativas = append(c.Tentativas, &tentativa{DataLiquidacao: data, Tipo: "RIFL", Status: "SOLICITADA", EndToEndID: e2eID(), Atualizacao: []statusAt{{"SOLICITADA", now}}})
	d.mu.Unlock()
	d.getCobR(w, txid, http.StatusCreated)
}

func e2eID() string {
	return "E" + doubleISPB + time.Now().UTC().Format("200601021504") + strings.ToLower(randHex(6))
}

func randAlnum(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := []byte(randHex(n))[:n]
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// AnswerRec plays the payer (or the payer's bank) on a recurrence: APROVADA, REJEITADA (AP13),
// CANCELADA (by the payer, ACCL) or EXPIRADA; the /rec webhook is posted when one is
// registered.
func (d *Double) AnswerRec(idRec, status string) error {
	d.mu.Lock()
	rc := d.recs[idRec]
	if rc == nil {
		d.mu.Unlock()
		return fmt.Errorf("no recurrence %s", idRec)
	}
	var enc map[string]any
	switch status {
	case "APROVADA", "EXPIRADA":
	case "REJEITADA":
		enc = map[string]any{"rejeicao": map[string]any{"codigo": "AP13", "descricao": "Recorrência rejeitada pelo usuário pagador"}}
	case "CANCELADA":
		enc = map[string]any{"cancelamento": map[string]any{"solicitante": "USUARIO_PAGADOR", "codigo": "ACCL", "descricao": "Cancelada pelo usuário pagador"}}
	default:
		d.mu.Unlock()
		return fmt.Errorf("status %s is not one a payer gives", status)
	}
	d.endRec(rc, status, enc)
	note := map[string]any{"idRec": rc.IDRec, "status": rc.Status, "atualizacao": rc.Atualizacao}
	hook := d.webhooks["/webhookrec"]
	d.mu.Unlock()
	return d.notifyRec(hook, "/rec", map[string]any{"recs": []any{note}})
}

// SettleCobR plays the payer's PSP on the date of a recurring charge's open attempt: paid (a PIX
// is received, the charge is concluded) or refused with codigo (a rejection code of the
// catalogue) and descricao. A refusal ends the charge (REJEITADA) when the code is one that
// rejects it or when no retry can follow. The /cobr webhook is posted when one is registered.
func (d *Double) SettleCobR(txid string, pay bool, codigo, descricao string) error {
	d.mu.Lock()
	c := d.cobrs[txid]
	if c == nil {
		d.mu.Unlock()
		return fmt.Errorf("no recurring charge %s", txid)
	}
	t := c.Tentativas[len(c.Tentativas)-1]
	if c.Status != "ATIVA" || (t.Status != "AGENDADA" && t.Status != "SOLICITADA") {
		d.mu.Unlock()
		return fmt.Errorf("recurring charge %s has no open attempt (%s, last attempt %s)", txid, c.Status, t.Status)
	}
	now := now3339()
	if pay {
		t.Status = "PAGA"
		p := &received{EndToEndID: t.EndToEndID, TxID: txid, Valor: valor(c.amount), Horario: now, amount: c.amount}
		c.Pix = append(c.Pix, p)
		d.pixes[p.EndToEndID] = p
		c.Status = "CONCLUIDA"
		c.Atualizacao = append(c.Atualizacao, statusAt{"CONCLUIDA", now})
	} else {
		if !slices.Contains(tentativaCodes, codigo) {
			d.mu.Unlock()
			return fmt.Errorf("rejection code %s is not in the catalogue", codigo)
		}
		t.Status = "REJEITADA"
		t.Rejeicao = map[string]any{"codigo": codigo, "descricao": descricao}
		retries := 0
		for _, x := range c.Tentativas {
			if x.Tipo == "RIFL" {
				retries++
			}
		}
		if slices.Contains(fatalCodes, codigo) || c.PoliticaRetentativa != "PERMITE_3R_7D" || retries >= 3 {
			c.Status = "REJEITADA"
			c.Atualizacao = append(c.Atualizacao, statusAt{"REJEITADA", now})
			c.Encerramento = map[string]any{"rejeicao": map[string]any{"codigo": codigo, "descricao": descricao}}
		}
	}
	t.Atualizacao = append(t.Atualizacao, statusAt{t.Status, now})
	note := map[string]any{"idRec": c.IDRec, "txid": c.TxID, "status": c.Status, "atualizacao": c.Atualizacao, "tentativas": c.Tentativas}
	hook := d.webhooks["/webhookcobr"]
	d.mu.Unlock()
	return d.notifyRec(hook, "/cobr", map[string]any{"cobsr": []any{note}})
}

func (d *Double) notifyRec(hook, suffix string, body any) error {
	if hook == "" {
		return nil
	}
	b, _ := json.Marshal(body)
	client := d.WebhookClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Post(strings.TrimRight(hook, "/")+suffix, "application/json", strings.NewReader(string(b)))
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

// Recs returns the idRec of every recurrence, and RecStatus the status of one.
func (d *Double) Recs() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := []string{}
	for id := range d.recs {
		out = append(out, id)
	}
	return out
}

// RecStatus returns a recurrence's status ("" when there is none).
func (d *Double) RecStatus(idRec string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if rc := d.recs[idRec]; rc != nil {
		return rc.Status
	}
	return ""
}

// CobR returns a recurring charge as GET /cobr/{txid} answers it (nil when there is none).
func (d *Double) CobR(txid string) map[string]any {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.cobrs[txid]
	if c == nil {
		return nil
	}
	var out map[string]any
	b, _ := json.Marshal(c)
	_ = json.Unmarshal(b, &out)
	return out
}

// CobRCount returns how many recurring charges exist.
func (d *Double) CobRCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.cobrs)
}

// NotifyCobR posts the /cobr webhook of a recurring charge again, as it is (a replay).
func (d *Double) NotifyCobR(txid string) error {
	d.mu.Lock()
	c := d.cobrs[txid]
	if c == nil {
		d.mu.Unlock()
		return fmt.Errorf("no recurring charge %s", txid)
	}
	note := map[string]any{"idRec": c.IDRec, "txid": c.TxID, "status": c.Status, "atualizacao": c.Atualizacao, "tentativas": c.Tentativas}
	hook := d.webhooks["/webhookcobr"]
	d.mu.Unlock()
	return d.notifyRec(hook, "/cobr", map[string]any{"cobsr": []any{note}})
}

// RecJSON returns a recurrence as GET /rec/{idRec} answers it (nil when there is none).
func (d *Double) RecJSON(idRec string) map[string]any {
	d.mu.Lock()
	defer d.mu.Unlock()
	rc := d.recs[idRec]
	if rc == nil {
		return nil
	}
	var out map[string]any
	b, _ := json.Marshal(d.recView(rc))
	_ = json.Unmarshal(b, &out)
	return out
}
