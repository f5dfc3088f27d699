package apipix

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"troco/server/payments"
	"troco/server/processors/apipix/pixtest"
)

// The Banco Central's API Pix OpenAPI document (not vendored: 360 KB). TROCO_PIX_OPENAPI names
// it; otherwise the shared copy next to the repository is used, and the test skips without it.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	candidates := []string{os.Getenv("TROCO_PIX_OPENAPI")}
	for _, up := range []string{"../../../..", "../../../../.."} {
		candidates = append(candidates, filepath.Join(up, "shared", "pix-api", "openapi.yaml"))
	}
	for _, p := range candidates {
		if p == "" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("parse %s: %v", p, err)
		}
		return doc
	}
	t.Skip("the API Pix OpenAPI document is not available (set TROCO_PIX_OPENAPI)")
	return nil
}

func node(doc map[string]any, ref string) map[string]any {
	var cur any = doc
	for _, k := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := cur.(map[string]any)
		cur = m[k]
	}
	m, _ := cur.(map[string]any)
	return m
}

// properties collects a schema's properties through $ref, allOf, oneOf and anyOf.
func properties(doc map[string]any, s map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	if s == nil {
		return out
	}
	if ref, ok := s["$ref"].(string); ok {
		return properties(doc, node(doc, ref))
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for k, v := range props {
			m, _ := v.(map[string]any)
			if prev, ok := out[k]; ok && prev != nil {
				m = map[string]any{"allOf": []any{prev, m}}
			}
			out[k] = m
		}
	}
	for _, key := range []string{"allOf", "oneOf", "anyOf"} {
		list, _ := s[key].([]any)
		for _, item := range list {
			m, _ := item.(map[string]any)
			for k, v := range properties(doc, m) {
				if prev, ok := out[k]; ok && prev != nil {
					v = map[string]any{"allOf": []any{prev, v}}
				}
				out[k] = v
			}
		}
	}
	return out
}

// checkType requires every JSON field of t to be a property of schema s, recursively.
func checkType(t *testing.T, doc map[string]any, typ reflect.Type, s map[string]any, where string) {
	t.Helper()
	props := properties(doc, s)
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		p, ok := props[name]
		if !ok {
			t.Errorf("%s.%s: the API Pix has no property %q", where, f.Name, name)
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Slice {
			ft = ft.Elem()
			if it, ok := p["items"].(map[string]any); ok {
				p = it
			} else {
				// items may sit inside an allOf
				for _, key := range []string{"allOf", "oneOf"} {
					list, _ := p[key].([]any)
					for _, x := range list {
						if m, ok := x.(map[string]any); ok {
							if it, ok := m["items"].(map[string]any); ok {
								p = it
							}
						}
					}
				}
			}
		}
		if ft.Kind() == reflect.Struct {
			checkType(t, doc, ft, p, where+"."+f.Name)
		}
	}
}

func TestTypesMatchTheAPIPixOpenAPI(t *testing.T) {
	doc := openAPIDoc(t)
	paths, _ := doc["paths"].(map[string]any)
	for path, methods := range map[string][]string{
		"/cob/{txid}": {"put", "get"}, "/pix/{e2eid}": {"get"}, "/pix": {"get"},
		"/pix/{e2eid}/devolucao/{id}": {"put"}, "/webhook/{chave}": {"put", "get"}, "/cobv/{txid}": {"put", "get"},
		"/locrec": {"post"}, "/rec": {"post", "get"}, "/rec/{idRec}": {"get", "patch"}, "/cobr/{txid}": {"put", "get"},
		"/cobr/{txid}/retentativa/{data}": {"post"}, "/webhookrec": {"put"}, "/webhookcobr": {"put"},
	} {
		p, ok := paths[path].(map[string]any)
		if !ok {
			t.Errorf("path %s is not in the API Pix", path)
			continue
		}
		for _, m := range methods {
			if _, ok := p[m]; !ok {
				t.Errorf("%s %s is not in the API Pix", strings.ToUpper(m), path)
			}
		}
	}
	schema := func(name string) map[string]any { return node(doc, "#/components/schemas/"+name) }
	for _, c := range []struct {
		typ    any
		schema map[string]any
	}{
		{CobSolicitada{}, schema("CobSolicitada")},
		{CobCompleta{}, schema("CobCompleta")},
		{CobVSolicitada{}, schema("CobVSolicitada")},
		{CobVCompleta{}, schema("CobVCompleta")},
		{Pix{}, schema("Pix")},
		{PixConsultados{}, schema("PixConsultados")},
		{DevolucaoSolicitada{}, schema("DevolucaoSolicitada")},
		{Devolucao{}, schema("Devolucao")},
		{WebhookConfig{}, schema("WebhookSolicitado")},
		{PayloadLocationRecSolicitada{}, schema("PayloadLocationRecSolicitada")},
		{PayloadLocationRecGerada{}, schema("PayloadLocationRecGerada")},
		{RecSolicitada{}, schema("RecSolicitada")},
		{RecCompleta{}, schema("RecCompleta")},
		{RecsConsultadas{}, schema("RecsConsultadas")},
		{RecRevisada{}, schema("RecRevisada")},
		{CobRSolicitada{}, schema("CobRSolicitada")},
		{CobRCompleta{}, schema("CobRCompleta")},
		{WebhookRecConfig{}, schema("WebhookRecSolicitado")},
		{WebhookRecConfig{}, schema("WebhookCobRSolicitado")},
	} {
		typ := reflect.TypeOf(c.typ)
		if c.schema == nil {
			t.Errorf("no schema for %s", typ.Name())
			continue
		}
		checkType(t, doc, typ, c.schema, typ.Name())
	}
	// The statuses troco reads.
	raw := node(doc, "#/components/schemas/CobrancaStatus")
	enum, _ := raw["enum"].([]any)
	joined := ""
	for _, e := range enum {
		joined += " " + e.(string)
	}
	for _, want := range []string{CobAtiva, CobConcluida} {
		if !strings.Contains(joined, want) {
			t.Errorf("charge status %s is not in the API Pix (%s)", want, joined)
		}
	}
	// The Pix Automático statuses troco reads, exactly the API Pix's enums.
	for name, want := range map[string][]string{
		"RecStatus":  {RecCriada, RecAprovada, RecRejeitada, RecExpirada, RecCancelada},
		"CobRStatus": {CobRCriada, CobRAtiva, CobRConcluida, CobRExpirada, CobRRejeitada, CobRCancelada},
	} {
		props := properties(doc, node(doc, "#/components/schemas/"+name))
		got := []string{}
		for _, e := range props["status"]["enum"].([]any) {
			got = append(got, e.(string))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: the API Pix has %v, troco reads %v", name, got, want)
		}
	}
	tentativa := properties(doc, node(doc, "#/components/schemas/CobRTentativas"))["tentativas"]["items"].(map[string]any)
	var states []string
	for _, e := range properties(doc, tentativa)["status"]["enum"].([]any) {
		states = append(states, e.(string))
	}
	for _, want := range []string{TentativaPaga, TentativaRejeitada, TentativaExpirada, TentativaCancelada} {
		if !strings.Contains(strings.Join(states, " "), want) {
			t.Errorf("attempt status %s is not in the API Pix (%v)", want, states)
		}
	}
	politica := properties(doc, node(doc, "#/components/schemas/RecConfiguracao"))["politicaRetentativa"]["enum"].([]any)
	if !strings.Contains(fmt.Sprint(politica), PermiteRetentativa) {
		t.Errorf("politicaRetentativa %s is not in the API Pix (%v)", PermiteRetentativa, politica)
	}
}

// required collects a schema's required names through $ref, allOf, oneOf and anyOf.
func required(doc map[string]any, s map[string]any) map[string]bool {
	out := map[string]bool{}
	if s == nil {
		return out
	}
	if ref, ok := s["$ref"].(string); ok {
		return required(doc, node(doc, ref))
	}
	if r, ok := s["required"].([]any); ok {
		for _, k := range r {
			if name, ok := k.(string); ok {
				out[name] = true
			}
		}
	}
	for _, key := range []string{"allOf", "oneOf", "anyOf"} {
		list, _ := s[key].([]any)
		for _, item := range list {
			m, _ := item.(map[string]any)
			for k := range required(doc, m) {
				out[k] = true
			}
		}
	}
	return out
}

// enums collects the enum values a schema allows, through $ref and allOf/oneOf/anyOf.
func enums(doc map[string]any, s map[string]any) []string {
	if s == nil {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		return enums(doc, node(doc, ref))
	}
	var out []string
	if e, ok := s["enum"].([]any); ok {
		for _, v := range e {
			out = append(out, fmt.Sprint(v))
		}
	}
	for _, key := range []string{"allOf", "oneOf", "anyOf"} {
		list, _ := s[key].([]any)
		for _, item := range list {
			m, _ := item.(map[string]any)
			out = append(out, enums(doc, m)...)
		}
	}
	return out
}

// checkJSON requires every name of a JSON object to be a property (or a required name) of schema
// s, every string with an enum to be one of its values, recursively.
func checkJSON(t *testing.T, doc map[string]any, v any, s map[string]any, where string) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		props, req := properties(doc, s), required(doc, s)
		for k, x := range v {
			p, ok := props[k]
			if !ok && !req[k] {
				t.Errorf("%s.%s: the API Pix has no property %q", where, k, k)
				continue
			}
			checkJSON(t, doc, x, p, where+"."+k)
		}
	case []any:
		items := itemsOf(s)
		for i, x := range v {
			checkJSON(t, doc, x, items, fmt.Sprintf("%s[%d]", where, i))
		}
	case string:
		if e := enums(doc, s); len(e) > 0 && !slices.Contains(e, v) {
			t.Errorf("%s: %q is not one of %v", where, v, e)
		}
	}
}

// itemsOf is the items schema of an array schema (possibly inside allOf or oneOf).
func itemsOf(s map[string]any) map[string]any {
	if it, ok := s["items"].(map[string]any); ok {
		return it
	}
	for _, key := range []string{"allOf", "oneOf"} {
		list, _ := s[key].([]any)
		for _, x := range list {
			if m, ok := x.(map[string]any); ok {
				if it := itemsOf(m); it != nil {
					return it
				}
			}
		}
	}
	return nil
}

// TestDoubleAnswersMatchTheAPIPixOpenAPI: the double's recurrences and recurring charges, as its
// GET answers them after the connector created them and the payer answered (approval, a refused
// attempt, a retry, a payment), have only the API Pix's properties and its status values.
func TestDoubleAnswersMatchTheAPIPixOpenAPI(t *testing.T) {
	doc := openAPIDoc(t)
	pki, err := pixtest.NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	d := pixtest.New("cid", "secret", "chave@example.com")
	srv := httptest.NewUnstartedServer(d)
	srv.TLS = pixtest.TLSConfig(pki)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Pool(), Certificates: []tls.Certificate{pki.Client}}}}
	c := New(Config{BaseURL: srv.URL, TokenURL: srv.URL + "/oauth/token", ClientID: "cid", ClientSecret: "secret", Chave: "chave@example.com",
		Client: client, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), RecAccount: &RecAccount{Agencia: "0001", Conta: "123456", TipoConta: "CORRENTE"}})
	ctx := context.Background()
	schema := func(name string) map[string]any { return node(doc, "#/components/schemas/"+name) }

	rec, err := c.CreateRecurrence(ctx, payments.RecRequest{Contract: payments.Reference("pixauth_x"), Object: "Academia", DebtorName: "Ana Souza",
		DebtorDocument: "52998224725", Interval: "month", StartDate: "2026-12-01", EndDate: "2027-12-01"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != "pending" || rec.Code == "" || len(rec.IDRec) != 29 {
		t.Fatalf("created recurrence: %+v", rec)
	}
	checkJSON(t, doc, d.RecJSON(rec.IDRec), schema("RecCompleta"), "rec")
	if err := d.AnswerRec(rec.IDRec, RecAprovada); err != nil {
		t.Fatal(err)
	}
	checkJSON(t, doc, d.RecJSON(rec.IDRec), schema("RecCompleta"), "rec")
	txid := payments.CobRTxID("pixauth_x", "inv_1")
	r, err := c.ChargeRecurrence(ctx, payments.RecChargeRequest{TxID: txid, IDRec: rec.IDRec, Amount: 4990, DueDate: "2026-12-01", Description: "Fatura 1"})
	if err != nil || r.Status != payments.RecChargeWaiting {
		t.Fatalf("charge: %+v %v", r, err)
	}
	checkJSON(t, doc, d.CobR(txid), schema("CobRCompleta"), "cobr")
	if err := d.SettleCobR(txid, false, "AM02", "Saldo insuficiente"); err != nil {
		t.Fatal(err)
	}
	checkJSON(t, doc, d.CobR(txid), schema("CobRCompleta"), "cobr")
	if r, _ := c.LookupRecurringCharge(ctx, txid, 0); r.Status != payments.RecChargeFailed || r.FailureCode != "AM02" {
		t.Fatalf("refused attempt: %+v", r)
	}
	if r, err := c.ChargeRecurrence(ctx, payments.RecChargeRequest{TxID: txid, IDRec: rec.IDRec, Attempt: 1, RetryDate: "2026-12-02"}); err != nil || r.Status != payments.RecChargeWaiting {
		t.Fatalf("retry: %+v %v", r, err)
	}
	if err := d.SettleCobR(txid, true, "", ""); err != nil {
		t.Fatal(err)
	}
	checkJSON(t, doc, d.CobR(txid), schema("CobRCompleta"), "cobr")
	if r, _ := c.LookupRecurringCharge(ctx, txid, 1); r.Status != payments.RecChargePaid || r.PaidAmount != 4990 || r.EndToEndID == "" {
		t.Fatalf("paid retry: %+v", r)
	}
	if err := c.CancelRecurrence(ctx, rec.IDRec); err != nil {
		t.Fatal(err)
	}
	checkJSON(t, doc, d.RecJSON(rec.IDRec), schema("RecCompleta"), "rec")
	if err := c.CancelRecurrence(ctx, rec.IDRec); err != nil { // already canceled: not an error
		t.Fatal(err)
	}
}
