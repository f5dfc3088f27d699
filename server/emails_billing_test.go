package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/pages"
	"troco/server/email"
)

// TestEmailSubscriptionDunningEndToEnd: a monthly card subscription whose renewal keeps
// declining sends, through the real API and the sandbox mailbox, the upcoming-renewal notice a
// week before, a payment-failed message for each declined attempt with the next retry in the
// customer's zone and language, a final payment-failed without a retry, and the cancellation.
func TestEmailSubscriptionDunningEndToEnd(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	const to = "dunning@example.com"
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": to, "name": "Ana Souza",
		"preferred_locales": []string{"en"}, "timezone": "America/New_York"})
	is.Equal(cus.Status, 200)
	good := e.subSavedCard(cus.Str("id"), "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	id := e.subCreate(map[string]any{"customer": cus.Str("id"), "items": []any{map[string]any{"price": price}}, "default_payment_method": good}).Str("id")
	bad := e.subSavedCard(cus.Str("id"), "4000009000000623") // approved once (saved), declined on reuse
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"default_payment_method": bad}).Status, 200)
	end := e.sub(id).Time("current_period_end")
	ny, err := time.LoadLocation("America/New_York")
	is.NoErr(err)

	// A week before the renewal: the upcoming notice, about the subscription, with the renewal day.
	is.Equal(len(e.mailbox(e.Test, "to="+to+"&kind=invoice_upcoming")), 0)
	e.travel(end.Add(-7*24*time.Hour + time.Hour))
	up := e.mailbox(e.Test, "to="+to+"&kind=invoice_upcoming")
	is.Equal(len(up), 1) // one upcoming notice
	is.Equal(up[0]["locale"], "en")
	is.Equal(up[0]["related_object"], id) // the preview has no id: the notice is about the subscription
	renews := email.FormatDay(pages.En, end, ny)
	is.True(strings.Contains(up[0]["subject"].(string), "renews on "+renews)) // the renewal day, not the next period's end
	is.True(strings.Contains(up[0]["text"].(string), "R$29.90"))
	is.True(!strings.Contains(up[0]["text"].(string), "/invoices/?")) // no link to an invoice that does not exist yet

	// The renewal declines: payment failed, retry in three days, in New York time and English.
	e.travel(end)
	inv := e.sub(id).Str("latest_invoice")
	failed := e.mailbox(e.Test, "to="+to+"&kind=payment_failed")
	is.Equal(len(failed), 1)
	m := failed[0]
	is.Equal(m["locale"], "en")
	is.Equal(m["related_object"], inv)
	retry := email.FormatTime(pages.En, end.Add(3*24*time.Hour), ny)
	is.True(strings.Contains(retry, " EST") || strings.Contains(retry, " EDT")) // New York time
	is.True(strings.Contains(m["text"].(string), "We will try again on "+retry))
	is.True(strings.Contains(m["text"].(string), "R$29.90"))
	is.True(strings.Contains(m["html"].(string), "/invoices/")) // the hosted invoice to pay now

	// The retries on days 3 and 5 fail too, each naming the next; day 7 is the last.
	for i, day := range []int{3, 5} {
		e.travel(end.Add(time.Duration(day) * 24 * time.Hour))
		failed = e.mailbox(e.Test, "to="+to+"&kind=payment_failed")
		is.Equal(len(failed), i+2)
		next := []int{5, 7}[i]
		is.True(strings.Contains(failed[0]["text"].(string), email.FormatTime(pages.En, end.Add(time.Duration(next)*24*time.Hour), ny)))
	}
	e.travel(end.Add(7 * 24 * time.Hour))
	is.Equal(e.sub(id).Str("status"), "canceled")
	failed = e.mailbox(e.Test, "to="+to+"&kind=payment_failed")
	is.Equal(len(failed), 4)
	is.True(!strings.Contains(failed[0]["text"].(string), "try again")) // no retry left
	is.True(strings.Contains(failed[0]["text"].(string), "No more automatic payment attempts"))
	is.True(!strings.Contains(failed[0]["text"].(string), "keep your service")) // the subscription is canceled

	canceled := e.mailbox(e.Test, "to="+to+"&kind=subscription_canceled")
	is.Equal(len(canceled), 1)
	is.Equal(canceled[0]["locale"], "en")
	is.Equal(canceled[0]["related_object"], id)
	is.True(strings.Contains(canceled[0]["subject"].(string), "subscription was canceled"))
	ended := email.FormatDay(pages.En, e.sub(id).Time("ended_at"), ny)
	is.True(strings.Contains(canceled[0]["text"].(string), ended))

	// Nothing more arrives afterwards.
	total := len(e.mailbox(e.Test, "to="+to+"&limit=100"))
	e.travel(end.Add(60 * 24 * time.Hour))
	is.Equal(len(e.mailbox(e.Test, "to="+to+"&limit=100")), total)
}

// TestEmailInvoiceOverdueNotice: a send_invoice invoice still open at its due instant e-mails
// the customer an overdue notice once, at that instant, in their language and zone, with the
// late terms and the links to pay; paying it first sends none.
func TestEmailInvoiceOverdueNotice(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	const to = "atraso@example.com"
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": to, "name": "Ana Souza", "timezone": "America/Manaus"}).Str("id")
	price := e.coPrice(e.Test, "Plano", 100000, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "collection_method": "send_invoice",
		"days_until_due": 3, "fine_rate": 150, "interest_rate": 100})
	inv := e.Do("GET", "/v1/invoices/"+sub.Str("latest_invoice"), e.Test, nil)
	due := inv.Time("due_date")

	e.travel(due.Add(-2 * time.Second))
	is.Equal(len(e.mailbox(e.Test, "to="+to+"&kind=invoice_overdue")), 0)
	e.travel(due)
	got := e.mailbox(e.Test, "to="+to+"&kind=invoice_overdue")
	is.Equal(len(got), 1)
	is.Equal(got[0]["related_object"], inv.Str("id"))
	is.Equal(got[0]["locale"], "pt-BR")
	text := got[0]["text"].(string)
	manaus, _ := time.LoadLocation("America/Manaus")
	is.True(strings.Contains(text, email.FormatTime(pages.PtBR, due, manaus)))
	is.True(strings.Contains(text, "multa de 1,5% e juros de 1% ao mês"))
	is.True(strings.Contains(text, inv.Str("hosted_invoice_url")))
	e.travel(due.Add(10 * 24 * time.Hour))
	is.Equal(len(e.mailbox(e.Test, "to="+to+"&kind=invoice_overdue")), 1) // once

	// An invoice paid before its due instant sends no notice.
	other := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "collection_method": "send_invoice", "days_until_due": 3})
	pm := e.subSavedCard(cus, "4242424242424242")
	is.Equal(e.Do("POST", "/v1/invoices/"+other.Str("latest_invoice")+"/pay", e.Test, map[string]any{"payment_method": pm}).Status, 200)
	e.travel(e.Clock.Now().Add(4 * 24 * time.Hour))
	is.Equal(len(e.mailbox(e.Test, "to="+to+"&kind=invoice_overdue")), 1)
}
