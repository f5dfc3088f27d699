package server_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// actPlatform is an active platform with split rules and its test and live platform keys.
type actPlatform struct {
	e    *testEnv
	Org  *domain.Organization
	ID   string // plat_…
	Test string // ch_test_ platform_admin
	Live string // ch_live_ platform_admin
}

func newActPlatform(e *testEnv, name string) *actPlatform {
	e.t.Helper()
	org, test := e.NewPlatform(name)
	live, err := e.CreateKey(core.APIKeyInput{OrgID: org.ID, Livemode: true, Scopes: []string{domain.ScopePlatformAdmin}})
	if err != nil {
		e.t.Fatalf("create live platform key: %v", err)
	}
	return &actPlatform{e: e, Org: org, ID: *org.Platform, Test: test, Live: live.Token}
}

// connect creates a connected organization through the API (test key) with document doc.
func (p *actPlatform) connect(name, doc string) string {
	p.e.t.Helper()
	body := map[string]any{"name": name}
	if doc != "" {
		body["document"] = doc
	}
	r := p.e.Do("POST", "/v1/organizations", p.Test, body)
	if r.Status != 200 {
		p.e.t.Fatalf("create connected organization: %d %s", r.Status, r.Raw)
	}
	return r.Str("id")
}

// connectWithStatus creates a connected organization directly in a given state (both modes).
func (p *actPlatform) connectWithStatus(name, doc, status string) *domain.Organization {
	p.e.t.Helper()
	return p.e.CreateOrg(core.OrganizationInput{Name: name, Document: doc, ConnectedTo: p.ID, ActivationStatus: status})
}

// session posts /v1/activation-sessions.
func (p *actPlatform) session(token, org string, extra ...any) resp {
	p.e.t.Helper()
	body := map[string]any{"organization": org, "return_url": "https://plataforma.example/retorno"}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	return p.e.Do("POST", "/v1/activation-sessions", token, body)
}

// setState writes an organization's activation state in one environment.
func (e *testEnv) setActivationState(orgID string, live bool, st domain.ActivationState) {
	e.t.Helper()
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error { return tx.SetActivationState(orgID, live, st) })
	if err != nil {
		e.t.Fatal(err)
	}
}

// seller is a browser without JavaScript: a cookie jar, no automatic redirects.
type seller struct {
	e      *testEnv
	client *http.Client
}

func (e *testEnv) newSeller() *seller {
	jar, _ := cookiejar.New(nil)
	return &seller{e: e, client: &http.Client{Transport: e.Client.Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// hosted is an HTML answer.
type hosted struct {
	Status   int
	Location string
	Body     string
}

func (s *seller) do(req *http.Request) hosted {
	s.e.t.Helper()
	res, err := s.client.Do(req)
	if err != nil {
		s.e.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return hosted{Status: res.StatusCode, Location: res.Header.Get("Location"), Body: string(b)}
}

func (s *seller) get(u string) hosted {
	s.e.t.Helper()
	if strings.HasPrefix(u, "/") {
		u = s.e.URL() + u
	}
	req, _ := http.NewRequest("GET", u, nil)
	return s.do(req)
}

// post sends a multipart step with fields and, when file is non-nil, the identity document.
func (s *seller) post(path string, fields map[string]string, file []byte) hosted {
	s.e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if file != nil {
		fw, _ := mw.CreateFormFile("document_file", "rg.pdf")
		fw.Write(file)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", s.e.URL()+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return s.do(req)
}

var csrfRe = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf reads the form token of a page.
func (h hosted) csrf() string {
	m := csrfRe.FindStringSubmatch(h.Body)
	if m == nil {
		return ""
	}
	return m[1]
}

// samplePDF is a tiny document that sniffs as application/pdf.
var samplePDF = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

// validActivationForm is a complete, valid submission of every step.
func validActivationForm() map[string]string {
	return map[string]string{
		"legal_name": "Loja Teste Ltda", "trade_name": "Loja Teste", "email": "financeiro@loja.com.br", "phone": "(11) 91234-5678",
		"rep_name": "Maria da Silva", "rep_document": "529.982.247-25", "rep_birth_date": "1985-04-12",
		"postal_code": "01310-100", "line1": "Avenida Paulista", "number": "1578", "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP",
		"bank_code": "001", "branch": "0001", "account_number": "12345-6", "account_type": "checking",
		"accept_terms": "on",
	}
}

// open spends a hosted url in the seller's browser and returns the form page path.
func (s *seller) open(u string) hosted {
	s.e.t.Helper()
	return s.get(u)
}

// complete opens url and submits the whole form in one post; it returns the final answer.
func (s *seller) complete(u string) hosted {
	s.e.t.Helper()
	o := s.open(u)
	if o.Status != http.StatusSeeOther {
		s.e.t.Fatalf("open %s: %d %s", u, o.Status, o.Body)
	}
	page := s.get(o.Location)
	if page.Status != 200 {
		s.e.t.Fatalf("form page: %d %s", page.Status, page.Body)
	}
	f := validActivationForm()
	f["csrf_token"], f["step"], f["action"] = page.csrf(), "documents", "submit"
	return s.post(o.Location, f, samplePDF)
}

// activate runs the whole sandbox flow for org: session, hosted form, submission.
func (p *actPlatform) activate(org string) (sessionID string) {
	p.e.t.Helper()
	r := p.session(p.Test, org)
	if r.Status != 200 {
		p.e.t.Fatalf("create activation session: %d %s", r.Status, r.Raw)
	}
	done := p.e.newSeller().complete(r.Str("url"))
	if done.Status != http.StatusSeeOther || done.Location != "https://plataforma.example/retorno" {
		p.e.t.Fatalf("submit: %d %s %s", done.Status, done.Location, done.Body)
	}
	return r.Str("id")
}

// review lets the sandbox review run (--sim-delay, then the due jobs).
func (e *testEnv) review() {
	e.t.Helper()
	e.Clock.Advance(3*time.Minute + time.Second)
	if err := e.Jobs.RunDue(context.Background()); err != nil {
		e.t.Fatalf("run jobs: %v", err)
	}
}

// org reads an organization through the API.
func (e *testEnv) org(token, id string) resp {
	e.t.Helper()
	r := e.Do("GET", "/v1/organizations/"+id, token, nil)
	if r.Status != 200 {
		e.t.Fatalf("get organization %s: %d %s", id, r.Status, r.Raw)
	}
	return r
}

// orgEvents lists organization.updated events of the scope of token about org.
func (e *testEnv) orgEvents(token, org string) []map[string]any {
	e.t.Helper()
	r := e.Do("GET", "/v1/events?type=organization.updated&limit=100", token, nil)
	if r.Status != 200 {
		e.t.Fatalf("list events: %d %s", r.Status, r.Raw)
	}
	var out []map[string]any
	for _, ev := range r.Data() {
		obj, _ := ev["data"].(map[string]any)["object"].(map[string]any)
		if obj["id"] == org {
			out = append(out, ev)
		}
	}
	return out
}

func requirementsOf(r resp) (reason any, missing []any) {
	req, _ := r.Body["requirements"].(map[string]any)
	missing, _ = req["missing"].([]any)
	return req["disabled_reason"], missing
}

func queryOf(u string) url.Values {
	p, _ := url.Parse(u)
	return p.Query()
}
