// Package cielotest is a conformance double of Cielo API 3.0 (e-commerce), written from Cielo's
// public documentation, for tests and `troco dev psp --cielo`. It keeps sales in memory and
// answers like Cielo's sandbox: the card number's last digit picks the outcome (0, 1, 4:
// authorized; 2: 05 not authorized; 3: 57; 5: 78 blocked; 6: 99 time out; 7: 77 canceled;
// 8: 70 problems with the card; 9: an unknown return code). Fault knobs let tests lose answers
// after charging and take the service down. Cards are also saved without a sale (Cartão
// Protegido: POST /1/card answers 201 with a CardToken, GET /1/card/{token} the masked card);
// the double refuses, as Cielo does, a number that fails the Luhn check, an expiry that is not
// MM/YYYY or is over, a brand it does not know, and missing fields (400 with Code and Message).
package cielotest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Double is the Cielo double; Handler serves both the transactional and the query API.
type Double struct {
	MerchantID, MerchantKey string

	mu     sync.Mutex
	sales  map[string]*sale // by PaymentId
	orders map[string][]string
	tokens map[string]storedCard
	// DropAnswers makes the next n sale creations charge and then lose the answer (the handler
	// waits HangFor, so the client times out): a processor that times out after charging.
	dropAnswers int
	HangFor     time.Duration
	// Unavailable answers 503 to everything.
	Unavailable bool
	// Calls counts sale creations that charged (tests assert no double charge).
	Charges int
	// pendNext makes the next n approved sales answer Pending (12) until Decide.
	pendNext int
	// refuseTokens makes the next n POST /1/card answer 400 (card data refused).
	refuseTokens int
	// Tokenized counts cards saved through POST /1/card.
	Tokenized int
	lastSale  string
}

// RefuseNextTokens makes the next n card tokenizations (POST /1/card) refused as invalid card data.
func (d *Double) RefuseNextTokens(n int) {
	d.mu.Lock()
	d.refuseTokens = n
	d.mu.Unlock()
}

// LastSaleCard returns the masked card number of the newest sale ("" when none), and whether
// it was charged by CardToken.
func (d *Double) LastSaleCard() (masked string, byToken bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	newest := d.sales[d.lastSale]
	if newest == nil || newest.Payment.CreditCard == nil {
		return "", false
	}
	return newest.Payment.CreditCard.CardNumber, newest.Payment.CreditCard.CardToken != ""
}

// TokenCount returns how many cards were saved through POST /1/card.
func (d *Double) TokenCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.Tokenized
}

// PendNextSales makes the next n sales that would be approved stay Pending (12).
func (d *Double) PendNextSales(n int) {
	d.mu.Lock()
	d.pendNext = n
	d.mu.Unlock()
}

// Decide settles a pending sale: approved (captured as asked) or denied (05).
func (d *Double) Decide(merchantOrderID string, approve bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	ids := d.orders[merchantOrderID]
	if len(ids) == 0 {
		return false
	}
	p := &d.sales[ids[len(ids)-1]].Payment
	if p.Status != 12 {
		return false
	}
	if !approve {
		p.Status, p.ReturnCode, p.ReturnMessage = 3, "05", "Not Authorized"
		return true
	}
	d.Charges++
	p.AuthorizationCode = p.Tid[len(p.Tid)-6:]
	p.Status, p.ReturnCode, p.ReturnMessage = 1, "4", "Operation Successful"
	if p.Capture {
		p.Status, p.ReturnCode, p.CapturedAmount = 2, "6", p.Amount
	}
	return true
}

type storedCard struct{ number, brand, holder, expiry string }

type sale struct {
	MerchantOrderID string          `json:"MerchantOrderId"`
	Customer        json.RawMessage `json:"Customer,omitempty"`
	Payment         payment         `json:"Payment"`
}

type payment struct {
	Type              string      `json:"Type"`
	Amount            int64       `json:"Amount"`
	Installments      int         `json:"Installments"`
	Capture           bool        `json:"Capture"`
	CreditCard        *creditCard `json:"CreditCard,omitempty"`
	PaymentID         string      `json:"PaymentId"`
	Status            int         `json:"Status"`
	ReturnCode        string      `json:"ReturnCode"`
	ReturnMessage     string      `json:"ReturnMessage"`
	AuthorizationCode string      `json:"AuthorizationCode,omitempty"`
	ProofOfSale       string      `json:"ProofOfSale,omitempty"`
	Tid               string      `json:"Tid,omitempty"`
	CapturedAmount    int64       `json:"CapturedAmount,omitempty"`
	VoidedAmount      int64       `json:"VoidedAmount,omitempty"`
	ReceivedDate      string      `json:"ReceivedDate"`
}

type creditCard struct {
	CardNumber     string `json:"CardNumber,omitempty"`
	Holder         string `json:"Holder,omitempty"`
	ExpirationDate string `json:"ExpirationDate,omitempty"`
	SecurityCode   string `json:"SecurityCode,omitempty"`
	Brand          string `json:"Brand,omitempty"`
	SaveCard       bool   `json:"SaveCard"`
	CardToken      string `json:"CardToken,omitempty"`
}

// New returns a double accepting these credentials.
func New(merchantID, merchantKey string) *Double {
	return &Double{MerchantID: merchantID, MerchantKey: merchantKey, sales: map[string]*sale{}, orders: map[string][]string{},
		tokens: map[string]storedCard{}, HangFor: 3 * time.Second}
}

// DropNextAnswers makes the next n sale creations charge and lose their answer.
func (d *Double) DropNextAnswers(n int) {
	d.mu.Lock()
	d.dropAnswers = n
	d.mu.Unlock()
}

// ChargeCount returns how many sales charged a card.
func (d *Double) ChargeCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.Charges
}

// SetUnavailable turns the 503 answers on or off.
func (d *Double) SetUnavailable(v bool) {
	d.mu.Lock()
	d.Unavailable = v
	d.mu.Unlock()
}

type apiError struct {
	Code    int
	Message string
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ServeHTTP serves POST /1/card, GET /1/card/{token}, POST /1/sales/, PUT /1/sales/{id}/capture|void, GET /1/sales/{id} and
// GET /1/sales?merchantOrderId=.
func (d *Double) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("MerchantId") != d.MerchantID || r.Header.Get("MerchantKey") != d.MerchantKey {
		writeJSON(w, http.StatusUnauthorized, []apiError{{Code: 129, Message: "MerchantId or MerchantKey is invalid"}})
		return
	}
	d.mu.Lock()
	down := d.Unavailable
	d.mu.Unlock()
	if down {
		writeJSON(w, http.StatusServiceUnavailable, []apiError{{Code: 0, Message: "Service unavailable"}})
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodPost && path == "/1/card":
		d.tokenize(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/1/card/"):
		d.getCard(w, strings.TrimPrefix(path, "/1/card/"))
	case r.Method == http.MethodPost && path == "/1/sales":
		d.create(w, r)
	case r.Method == http.MethodGet && path == "/1/sales":
		d.byOrder(w, r.URL.Query().Get("merchantOrderId"))
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/1/sales/"):
		d.get(w, strings.TrimPrefix(path, "/1/sales/"))
	case r.Method == http.MethodPut && strings.HasPrefix(path, "/1/sales/"):
		rest := strings.TrimPrefix(path, "/1/sales/")
		id, action, _ := strings.Cut(rest, "/")
		d.update(w, r, id, action)
	default:
		writeJSON(w, http.StatusNotFound, []apiError{{Code: 404, Message: "Resource not found"}})
	}
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// outcomes of Cielo's sandbox by the card's last digit: status, return code, message.
var outcomes = map[byte]struct {
	ok      bool
	code    string
	message string
}{
	'0': {true, "", ""}, '1': {true, "", ""}, '4': {true, "", ""},
	'2': {false, "05", "Not Authorized"},
	'3': {false, "57", "Card Expired"},
	'5': {false, "78", "Blocked Card"},
	'6': {false, "99", "Time Out"},
	'7': {false, "77", "Card Canceled"},
	'8': {false, "70", "Problems with Credit Card"},
	'9': {false, "XZ", "Unlisted answer"},
}

func (d *Double) create(w http.ResponseWriter, r *http.Request) {
	var s sale
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	if err := dec.Decode(&s); err != nil {
		writeJSON(w, http.StatusBadRequest, []apiError{{Code: 101, Message: "Invalid request body"}})
		return
	}
	p := &s.Payment
	var errs []apiError
	if s.MerchantOrderID == "" || len(s.MerchantOrderID) > 50 {
		errs = append(errs, apiError{Code: 122, Message: "MerchantOrderId is required"})
	}
	if p.Type != "CreditCard" {
		errs = append(errs, apiError{Code: 106, Message: "Payment type is invalid"})
	}
	if p.Amount <= 0 {
		errs = append(errs, apiError{Code: 114, Message: "Amount is invalid"})
	}
	if p.Installments < 1 || p.Installments > 12 {
		errs = append(errs, apiError{Code: 115, Message: "Installments is invalid"})
	}
	if p.CreditCard == nil {
		errs = append(errs, apiError{Code: 126, Message: "CreditCard is required"})
	}
	if len(errs) > 0 {
		writeJSON(w, http.StatusBadRequest, errs)
		return
	}
	cc := p.CreditCard
	d.mu.Lock()
	number := cc.CardNumber
	if cc.CardToken != "" {
		stored, ok := d.tokens[cc.CardToken]
		if !ok {
			d.mu.Unlock()
			writeJSON(w, http.StatusBadRequest, []apiError{{Code: 172, Message: "CardToken not found"}})
			return
		}
		number = stored.number
	} else if len(number) < 13 || cc.SecurityCode == "" || cc.ExpirationDate == "" {
		d.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, []apiError{{Code: 126, Message: "Credit Card data is invalid"}})
		return
	}
	o := outcomes[number[len(number)-1]]
	p.PaymentID = newID()
	p.ReceivedDate = time.Now().UTC().Format("2006-01-02 15:04:05")
	p.Tid = strconv.FormatInt(time.Now().UnixNano()%1e13, 10)
	p.ProofOfSale = p.Tid[len(p.Tid)-6:]
	if o.ok && d.pendNext > 0 {
		d.pendNext--
		p.Status, p.ReturnCode, p.ReturnMessage = 12, "", "Pending"
	} else if o.ok {
		d.Charges++
		p.AuthorizationCode = p.Tid[len(p.Tid)-6:]
		p.Status, p.ReturnCode, p.ReturnMessage = 1, "4", "Operation Successful"
		if p.Capture {
			p.Status, p.ReturnCode, p.CapturedAmount = 2, "6", p.Amount
		}
		if cc.SaveCard && cc.CardToken == "" {
			tok := newID()
			d.tokens[tok] = storedCard{number: number, brand: cc.Brand}
			cc.CardToken = tok
		}
	} else {
		p.Status, p.ReturnCode, p.ReturnMessage = 3, o.code, o.message
	}
	cc.CardNumber = mask(number)
	cc.SecurityCode = ""
	d.sales[p.PaymentID] = &s
	d.lastSale = p.PaymentID
	d.orders[s.MerchantOrderID] = append(d.orders[s.MerchantOrderID], p.PaymentID)
	drop := d.dropAnswers > 0
	if drop {
		d.dropAnswers--
	}
	hang := d.HangFor
	d.mu.Unlock()
	if drop {
		// Charged, but the answer never arrives in time.
		select {
		case <-time.After(hang):
		case <-r.Context().Done():
		}
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	writeJSON(w, http.StatusCreated, s)
}

func mask(n string) string {
	if len(n) < 10 {
		return "******"
	}
	return n[:6] + strings.Repeat("*", len(n)-10) + n[len(n)-4:]
}

func (d *Double) get(w http.ResponseWriter, id string) {
	d.mu.Lock()
	s, ok := d.sales[id]
	var cp sale
	if ok {
		cp = *s
	}
	d.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, []apiError{{Code: 404, Message: "Payment not found"}})
		return
	}
	writeJSON(w, http.StatusOK, cp)
}

func (d *Double) byOrder(w http.ResponseWriter, order string) {
	d.mu.Lock()
	ids := d.orders[order]
	type ref struct {
		PaymentID    string `json:"PaymentId"`
		ReceivedDate string `json:"ReceivedDate"`
	}
	out := struct {
		ReasonCode    int    `json:"ReasonCode"`
		ReasonMessage string `json:"ReasonMessage"`
		Payments      []ref  `json:"Payments"`
	}{ReasonMessage: "Successful", Payments: []ref{}}
	for _, id := range ids {
		out.Payments = append(out.Payments, ref{PaymentID: id, ReceivedDate: d.sales[id].Payment.ReceivedDate})
	}
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (d *Double) update(w http.ResponseWriter, r *http.Request, id, action string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.sales[id]
	if !ok {
		writeJSON(w, http.StatusNotFound, []apiError{{Code: 404, Message: "Payment not found"}})
		return
	}
	p := &s.Payment
	amount := p.Amount
	if v := r.URL.Query().Get("amount"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			writeJSON(w, http.StatusBadRequest, []apiError{{Code: 114, Message: "Amount is invalid"}})
			return
		}
		amount = n
	}
	switch action {
	case "capture":
		if p.Status != 1 {
			writeJSON(w, http.StatusBadRequest, []apiError{{Code: 308, Message: "Transaction not available to capture"}})
			return
		}
		if amount > p.Amount {
			writeJSON(w, http.StatusBadRequest, []apiError{{Code: 311, Message: "Amount to capture is greater than authorized"}})
			return
		}
		p.Status, p.CapturedAmount, p.ReturnCode, p.ReturnMessage = 2, amount, "6", "Operation Successful"
	case "void":
		switch p.Status {
		case 1:
			p.Status, p.VoidedAmount, p.ReturnCode, p.ReturnMessage = 10, p.Amount, "9", "Operation Successful"
		case 2:
			if p.VoidedAmount+amount > p.CapturedAmount {
				writeJSON(w, http.StatusBadRequest, []apiError{{Code: 310, Message: "Amount to void is greater than the available amount"}})
				return
			}
			p.VoidedAmount += amount
			p.ReturnCode, p.ReturnMessage = "9", "Operation Successful"
			if p.VoidedAmount == p.CapturedAmount {
				p.Status = 11
			}
		default:
			writeJSON(w, http.StatusBadRequest, []apiError{{Code: 309, Message: "Transaction not available to void"}})
			return
		}
	default:
		writeJSON(w, http.StatusNotFound, []apiError{{Code: 404, Message: "Resource not found"}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"Status": p.Status, "ReturnCode": p.ReturnCode, "ReturnMessage": p.ReturnMessage})
}

// cardToken is the body of POST /1/card.
type cardToken struct {
	CustomerName   string `json:"CustomerName"`
	CardNumber     string `json:"CardNumber"`
	Holder         string `json:"Holder"`
	ExpirationDate string `json:"ExpirationDate"`
	Brand          string `json:"Brand"`
}

var brands = map[string]bool{"visa": true, "master": true, "amex": true, "elo": true, "aura": true, "jcb": true, "diners": true, "discover": true, "hipercard": true}

// tokenize stores a card without a sale (Cartão Protegido) and answers its CardToken.
func (d *Double) tokenize(w http.ResponseWriter, r *http.Request) {
	var c cardToken
	dec := json.NewDecoder(io.LimitReader(r.Body, 16<<10))
	if err := dec.Decode(&c); err != nil {
		writeJSON(w, http.StatusBadRequest, []apiError{{Code: 101, Message: "Invalid request body"}})
		return
	}
	var errs []apiError
	if c.CustomerName == "" || len(c.CustomerName) > 255 {
		errs = append(errs, apiError{Code: 187, Message: "CustomerName is required"})
	}
	if c.CardNumber == "" {
		errs = append(errs, apiError{Code: 127, Message: "You must provide CreditCard Number"})
	} else if len(c.CardNumber) < 13 || len(c.CardNumber) > 19 || !luhn(c.CardNumber) {
		errs = append(errs, apiError{Code: 128, Message: "Card Number is invalid"})
	}
	if c.Holder == "" || len(c.Holder) > 25 {
		errs = append(errs, apiError{Code: 125, Message: "Credit Card Holder is required"})
	}
	if !validExpiry(c.ExpirationDate, time.Now()) {
		errs = append(errs, apiError{Code: 126, Message: "Credit Card Expiration Date is invalid"})
	}
	if !brands[strings.ToLower(c.Brand)] {
		errs = append(errs, apiError{Code: 136, Message: "Brand is invalid"})
	}
	d.mu.Lock()
	if len(errs) == 0 && d.refuseTokens > 0 {
		d.refuseTokens--
		errs = append(errs, apiError{Code: 128, Message: "Card Number is invalid"})
	}
	if len(errs) > 0 {
		d.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, errs)
		return
	}
	tok := newID()
	d.tokens[tok] = storedCard{number: c.CardNumber, brand: c.Brand, holder: c.Holder, expiry: c.ExpirationDate}
	d.Tokenized++
	d.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"CardToken": tok, "Links": map[string]string{"Method": "GET", "Rel": "self", "Href": "/1/card/" + tok}})
}

// getCard answers a saved card, masked.
func (d *Double) getCard(w http.ResponseWriter, tok string) {
	d.mu.Lock()
	c, ok := d.tokens[tok]
	d.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, []apiError{{Code: 404, Message: "CardToken not found"}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"CardNumber": mask(c.number), "Holder": c.holder, "ExpirationDate": c.expiry})
}

func luhn(n string) bool {
	sum, double := 0, false
	for i := len(n) - 1; i >= 0; i-- {
		c := n[i]
		if c < '0' || c > '9' {
			return false
		}
		v := int(c - '0')
		if double {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

// validExpiry: MM/YYYY, not before the current month.
func validExpiry(s string, now time.Time) bool {
	m, y, ok := strings.Cut(s, "/")
	if !ok || len(m) != 2 || len(y) != 4 {
		return false
	}
	month, err1 := strconv.Atoi(m)
	year, err2 := strconv.Atoi(y)
	if err1 != nil || err2 != nil || month < 1 || month > 12 {
		return false
	}
	return year > now.Year() || (year == now.Year() && month >= int(now.Month()))
}
