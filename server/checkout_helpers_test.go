package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"troco/db"
	"troco/server/domain"
)

// Helpers of the checkout tests (issue 5).

// coPrice creates an active product with a default price and returns the price id.
func (e *testEnv) coPrice(token, name string, amount int64, recurring map[string]any) string {
	e.t.Helper()
	pd := map[string]any{"unit_amount": amount, "currency": "brl"}
	if recurring != nil {
		pd["recurring"] = recurring
	}
	r := e.Do("POST", "/v1/products", token, map[string]any{"name": name, "description": "Descrição de " + name, "default_price_data": pd})
	if r.Status != 200 {
		e.t.Fatalf("create product: %d %s", r.Status, r.Raw)
	}
	return r.Str("default_price")
}

// coSession creates a checkout session, failing the test otherwise.
func (e *testEnv) coSession(token string, body map[string]any) resp {
	e.t.Helper()
	r := e.Do("POST", "/v1/checkout-sessions", token, body)
	if r.Status != 200 {
		e.t.Fatalf("create checkout session: %d %s", r.Status, r.Raw)
	}
	return r
}

// coSimple is a session for one unit of a new R$ 100,00 product.
func (e *testEnv) coSimple(token string, extra map[string]any) resp {
	e.t.Helper()
	price := e.coPrice(token, "Camiseta", 10000, nil)
	body := map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 1}}, "metadata": map[string]string{"order": "A-1"}}
	for k, v := range extra {
		body[k] = v
	}
	return e.coSession(token, body)
}

// coEvents returns the events of a type (newest first) about object id.
func (e *testEnv) coEvents(token, typ, id string) []map[string]any {
	e.t.Helper()
	r := e.Do("GET", "/v1/events?limit=100&type="+url.QueryEscape(typ), token, nil)
	if r.Status != 200 {
		e.t.Fatalf("list events: %d %s", r.Status, r.Raw)
	}
	var out []map[string]any
	for _, ev := range r.Data() {
		if obj, _ := dig(ev, "data.object.id").(string); obj == id {
			out = append(out, ev)
		}
	}
	return out
}

// coCard is a confirm body paying by card.
func coCard(number string) map[string]any {
	return map[string]any{
		"payment_method_type": "credit_card", "customer_email": "ana@example.com", "customer_name": "Ana Souza",
		"card": map[string]any{"number": number, "exp_month": 12, "exp_year": time.Now().Year() + 3, "cvc": "123", "holder_name": "ANA SOUZA"},
	}
}

// coBoleto is a confirm body paying by boleto.
func coBoleto(email string) map[string]any {
	return map[string]any{
		"payment_method_type": "boleto", "customer_email": email, "customer_name": "Ana Souza", "customer_document": "529.982.247-25",
		"billing_address": map[string]any{"line1": "Avenida Paulista", "number": "1000", "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP", "postal_code": "01310-100"},
	}
}

// setActivation moves the test organization's live activation status.
func (e *testEnv) setActivation(status string) {
	e.t.Helper()
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error { return tx.SetOrganizationActivationStatus(e.Org.ID, status) })
	if err != nil {
		e.t.Fatal(err)
	}
}

// browser is a buyer's browser without JavaScript: a cookie jar that follows no redirects.
type browser struct {
	t      *testing.T
	e      *testEnv
	client *http.Client
	lang   string
}

func (e *testEnv) newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	c := *e.Client
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{t: t, e: e, client: &c}
}

// page is a fetched HTML page.
type page struct {
	Status   int
	Location string
	Body     string
	Header   http.Header
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	if b.lang != "" {
		req.Header.Set("Accept-Language", b.lang)
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return page{Status: res.StatusCode, Location: res.Header.Get("Location"), Body: string(raw), Header: res.Header}
}

// get fetches a URL (absolute, or a path of the server).
func (b *browser) get(u string) page {
	b.t.Helper()
	if strings.HasPrefix(u, "/") {
		u = b.e.URL() + u
	}
	req, _ := http.NewRequest("GET", u, nil)
	return b.do(req)
}

// post submits a urlencoded form to a path of the server.
func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.e.URL()+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)"`)

// hidden returns the hidden fields of the first form of a page (client_secret, csrf_token, attempt).
func (p page) hidden() url.Values {
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(p.Body, -1) {
		if v.Get(m[1]) == "" {
			v.Set(m[1], htmlUnescape(m[2]))
		}
	}
	return v
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">").Replace(s)
}

// testID reports whether the page has an element with data-testid id.
func (p page) testID(id string) bool { return strings.Contains(p.Body, `data-testid="`+id+`"`) }

// textOf returns the text of the first element with data-testid id (no nested tags).
func (p page) textOf(id string) string {
	re := regexp.MustCompile(`data-testid="` + regexp.QuoteMeta(id) + `"[^>]*>([^<]*)<`)
	m := re.FindStringSubmatch(p.Body)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(htmlUnescape(m[1]))
}

// sessionPath is the path (with query) of a session's hosted url.
func sessionPath(t *testing.T, sessionURL string) string {
	u, err := url.Parse(sessionURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.RequestURI()
}

var _ = domain.CheckoutOpen
