package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// waitLogs polls the request log of scope until it holds at least n entries.
func waitLogs(t *testing.T, e *testEnv, s domain.Scope, f db.RequestLogFilter, n int) []*domain.RequestLog {
	t.Helper()
	var out []*domain.RequestLog
	for range 200 {
		_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
			var err error
			out, _, err = tx.ListRequestLogs(s, f, db.ListParams{Limit: 100})
			return err
		})
		if len(out) >= n {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("request log has %d entries, want %d", len(out), n)
	return nil
}

func TestRequestLogRecordsAndRedacts(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pm := e.Do("POST", "/v1/payment-methods", e.Test, map[string]any{"type": "credit_card", "card": payCard("4242424242424242"), "metadata": map[string]string{"note": "4000 0000 0000 0002", "key": e.Live}})
	is.Equal(pm.Status, 200)
	c := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com"})
	is.Equal(c.Status, 200)
	is.Equal(e.Do("GET", "/v1/customers/"+c.Str("id"), e.Test, nil).Status, 200)
	is.Equal(e.Do("GET", "/v1/customers/cus_missing", e.Test, nil).Status, 404)
	is.Equal(e.Do("GET", "/v1/customers", "ch_test_bogus", nil).Status, 401) // no organization: not logged

	test := domain.Scope{OrgID: e.Org.ID, Livemode: false}
	logs := waitLogs(t, e, test, db.RequestLogFilter{}, 4)
	is.Equal(len(logs), 4)
	is.Equal(logs[0].Status, 404)
	is.Equal(logs[0].Path, "/v1/customers/cus_missing")
	is.True(logs[0].KeyID != "")
	is.True(strings.HasPrefix(logs[0].ID, "req_"))
	pmLog := logs[3]
	is.Equal(pmLog.Method, "POST")
	is.Equal(pmLog.ObjectID, pm.Str("id"))
	for _, l := range logs {
		for _, secret := range []string{"4242424242424242", "4000 0000 0000 0002", e.Live, `"cvc": "123"`} {
			is.True(!strings.Contains(l.RequestBody, secret))
			is.True(!strings.Contains(l.ResponseBody, secret))
		}
	}
	is.True(strings.Contains(pmLog.RequestBody, "[redacted]"))
	// The customer's page lists its two requests (creation and read).
	is.Equal(len(waitLogs(t, e, test, db.RequestLogFilter{ObjectID: c.Str("id")}, 2)), 2)
	// Live mode sees none of them.
	var live []*domain.RequestLog
	_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		live, _, err = tx.ListRequestLogs(domain.Scope{OrgID: e.Org.ID, Livemode: true}, db.RequestLogFilter{}, db.ListParams{Limit: 10})
		return err
	})
	is.Equal(len(live), 0)

	// The dashboard shows the log, one entry, and the object's page links its requests.
	b := e.signedIn(e.Org.ID, "dev@example.com", domain.RoleDeveloper)
	st, body, _ := b.get("/dashboard/test/logs")
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, `data-testid="request-log-table"`))
	is.True(strings.Contains(body, "/v1/customers/cus_missing"))
	st, body, _ = b.get("/dashboard/test/logs/" + pmLog.ID)
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, "[redacted]"))
	is.True(!strings.Contains(body, "4242424242424242"))
	_, body, _ = b.get("/dashboard/test/customers/" + c.Str("id"))
	is.True(strings.Contains(body, logs[1].ID))
	st, _, _ = b.get("/dashboard/live/logs/" + pmLog.ID)
	is.Equal(st, http.StatusNotFound)

	// Retention: after 7 days the entries are deleted by the job.
	e.Clock.Advance(7*24*time.Hour + 2*time.Hour)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	var left []*domain.RequestLog
	_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		left, _, err = tx.ListRequestLogs(test, db.RequestLogFilter{}, db.ListParams{Limit: 10})
		return err
	})
	is.Equal(len(left), 0)
}

// A request refused for its key's state or scope (a revoked key, a read key that writes) is in
// that key's organization's request log, where its developer looks for why; an unknown key
// belongs to no organization.
func TestRequestLogRecordsRefusedKnownKeys(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	read, err := e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID, Name: "read only", Scopes: []string{"read"}})
	is.NoErr(err)
	gone, err := e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID, Name: "to revoke"})
	is.NoErr(err)
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := core.RevokeAPIKey(tx, gone.ID, "ana@acme.test", "leaked")
		return err
	}))
	is.Equal(e.Do("POST", "/v1/customers", read.Token, map[string]any{"email": "ana@example.com"}).Status, http.StatusForbidden)
	is.Equal(e.Do("GET", "/v1/customers", gone.Token, nil).Status, http.StatusUnauthorized)
	is.Equal(e.Do("GET", "/v1/customers", "ch_live_bogus", nil).Status, http.StatusUnauthorized)

	logs := waitLogs(t, e, domain.Scope{OrgID: e.Org.ID, Livemode: gone.Livemode}, db.RequestLogFilter{}, 2)
	is.Equal(len(logs), 2)
	is.Equal(logs[0].Status, http.StatusUnauthorized)
	is.Equal(logs[0].KeyID, gone.ID)
	is.True(strings.Contains(logs[0].ResponseBody, "revoked"))
	is.Equal(logs[1].Status, http.StatusForbidden)
	is.Equal(logs[1].KeyID, read.ID)
	is.Equal(logs[1].Method, "POST")
}

// A secret in the query string (the client_secret a browser opens a payment with, a card number
// sent by mistake) is redacted from the logged path as it is from bodies; the rest stays readable.
func TestRequestLogRedactsQuerySecrets(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pi := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 1000, "currency": "brl"})
	is.Equal(pi.Status, 200)
	secret := pi.Str("client_secret")
	is.True(secret != "")
	e.Do("GET", "/v1/payment-intents/"+pi.Str("id")+"?client_secret="+secret+"&card%5Bnumber%5D=4242424242424242&expand=customer", e.Test, nil)

	test := domain.Scope{OrgID: e.Org.ID, Livemode: false}
	logs := waitLogs(t, e, test, db.RequestLogFilter{}, 2)
	get := logs[0]
	is.Equal(get.Method, "GET")
	is.True(!strings.Contains(get.Path, secret))
	is.True(!strings.Contains(get.Path, "4242424242424242"))
	is.True(strings.Contains(get.Path, "client_secret=%5Bredacted%5D"))
	is.True(strings.Contains(get.Path, "expand=customer"))

	b := e.signedIn(e.Org.ID, "dev@example.com", domain.RoleDeveloper)
	_, body, _ := b.get("/dashboard/test/logs")
	is.True(!strings.Contains(body, secret))
	_, body, _ = b.get("/dashboard/test/logs/" + get.ID)
	is.True(!strings.Contains(body, secret))
}

// TestRequestLogResponseFromEvent: a write answered with the object of its last event (a
// payment intent created, then confirmed, with and without an Idempotency-Key) is logged as a
// reference to that event on SQLite, and reads back as exactly the redacted response.
func TestRequestLogResponseFromEvent(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	var raws []string
	for _, key := range []string{"", "k1"} {
		var h []string
		if key != "" {
			h = []string{"Idempotency-Key", key}
		}
		pi := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 1500, "currency": "brl", "payment_method_types": []string{"credit_card"},
			"description": "Pedido 7", "metadata": map[string]string{"order_id": "7"}}, h...)
		is.Equal(pi.Status, 200)
		if key != "" {
			h = []string{"Idempotency-Key", key + "-confirm"}
		}
		c := e.Do("POST", "/v1/payment-intents/"+pi.Str("id")+"/confirm", e.Test, map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")}, h...)
		is.Equal(c.Status, 200)
		raws = append(raws, string(pi.Raw), string(c.Raw))
	}
	test := domain.Scope{OrgID: e.Org.ID}
	logs := waitLogs(t, e, test, db.RequestLogFilter{}, 4)
	is.Equal(len(logs), 4)
	for i, l := range logs { // newest first
		raw := strings.TrimSpace(raws[len(raws)-1-i])
		secret := raw[strings.Index(raw, `"client_secret":"`)+len(`"client_secret":"`):]
		secret = secret[:strings.IndexByte(secret, '"')]
		is.True(strings.Contains(secret, "_secret_"))
		want := strings.Replace(raw, secret, "[redacted]", 1)
		is.Equal(l.ResponseBody, want) // exactly the response, redacted
		is.True(!strings.Contains(l.ResponseBody, secret))
		one := waitLogs(t, e, test, db.RequestLogFilter{ObjectID: l.ObjectID}, 1)
		is.True(len(one) >= 1)
		var found *domain.RequestLog
		err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
			var err error
			found, err = tx.FindRequestLog(test, l.ID)
			return err
		})
		is.NoErr(err)
		is.Equal(found.ResponseBody, want)
	}
	if e.DB.Engine() == "sqlite" {
		w, _ := e.DB.Pools()
		var refs int
		is.NoErr(w.QueryRow("SELECT COUNT(*) FROM request_logs WHERE substr(response_body, 1, 1) = x'02'").Scan(&refs))
		is.Equal(refs, 4) // stored as references to the events
	}
}

// TestInvalidUTF8InURL: bytes that are not UTF-8 in a URL (sent %-encoded) are a 400 naming the
// parameter, as in a JSON body (TestURLTextIsValidUTF8), never looked up: PostgreSQL refused such
// a query with a 500. The request log keeps the refused request with its path made valid text
// (PostgreSQL refused the line, and with it every line written in the same batch).
func TestInvalidUTF8InURL(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.Do("GET", "/v1/customers/cus_%ff%fe", e.Test, nil)
	is.Equal(r.Status, http.StatusBadRequest)
	is.Equal(r.ErrParam(), "id")
	r = e.Do("GET", "/v1/customers?email=%ff&limit=3", e.Test, nil)
	is.Equal(r.Status, http.StatusBadRequest)
	is.Equal(r.ErrParam(), "email")
	is.Equal(e.Do("GET", "/v1/payment-intents/pi_%c3%28", e.Test, nil).Status, http.StatusBadRequest)
	logs := waitLogs(t, e, domain.Scope{OrgID: e.Org.ID}, db.RequestLogFilter{}, 2)
	is.Equal(len(logs), 2) // the two refused ids; a bad query is refused before the key is read, like a malformed one
	for _, l := range logs {
		is.True(utf8.ValidString(l.Path))
		is.True(utf8.ValidString(l.ObjectID))
		is.Equal(l.Status, http.StatusBadRequest)
	}
	is.Equal(logs[1].Path, "/v1/customers/cus_\uFFFD")
}
