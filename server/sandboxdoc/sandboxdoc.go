// Package sandboxdoc renders docs/TESTING.md, the sandbox guide, from the tables the code runs on
// (test cards, PIX/boleto e-mail rules, test documents), so the guide cannot drift from them.
// Regenerate with `go generate ./server/sandboxdoc`; a test fails when the committed file differs.
package sandboxdoc

//go:generate go run ./gen ../../docs/TESTING.md

import (
	"fmt"
	"strings"

	"troco/server/card"
	"troco/server/document"
	"troco/server/payments"
	"troco/server/simulation"
)

// Render returns the whole of docs/TESTING.md.
func Render() string {
	var b strings.Builder
	b.WriteString(intro)
	b.WriteString(cardsSection())
	b.WriteString(emailSection())
	b.WriteString(disputesSection())
	b.WriteString(documentsSection())
	b.WriteString(brazil)
	b.WriteString(outro)
	return b.String()
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// groupNumber writes a card number in groups of four, as buyers type it.
func groupNumber(n string) string {
	var parts []string
	for i := 0; i < len(n); i += 4 {
		parts = append(parts, n[i:min(i+4, len(n))])
	}
	return strings.Join(parts, " ")
}

var outcomeText = map[card.Outcome]string{
	card.OutcomeSucceeded:       "approved: intent `succeeded` (`requires_capture` with `capture_method: manual`)",
	card.OutcomeRequiresCapture: "authorized only: intent `requires_capture` until you capture or cancel it",
	card.OutcomeProcessing:      "intent `processing`, charge `pending`; settles after `--sim-delay` (or a test helper)",
	card.OutcomePending:         "intent `pending`, charge `pending` (\"wait for the webhook\"); settles after `--sim-delay` (or a test helper)",
	card.OutcomeDeclined:        "declined: `402`, intent back to `requires_payment_method` with `payment_error`",
}

func cardsSection() string {
	var b strings.Builder
	b.WriteString("## Test cards\n\n")
	b.WriteString("Use any future expiry date, any 3-digit CVC (4 for Amex) and any holder name. A valid card\n")
	b.WriteString("number that is not in these tables is approved. Declines answer `402` with the error's\n")
	b.WriteString("`code` and `message` below; the payment intent keeps them in `payment_error` (with\n")
	b.WriteString("`category` and `advice_code`) and accepts another attempt.\n\n")
	b.WriteString("### Cards that succeed or wait\n\n| number | outcome | on reuse (a saved card charged again) |\n| --- | --- | --- |\n")
	var declines []card.TestCard
	for _, c := range card.TestCards() {
		if c.Outcome == card.OutcomeDeclined {
			declines = append(declines, c)
			continue
		}
		reuse := "same as the first charge"
		if c.ReuseOutcome != "" {
			text, ok := outcomeText[c.ReuseOutcome]
			if !ok {
				panic("sandboxdoc: no text for card outcome " + string(c.ReuseOutcome))
			}
			reuse = text
			if c.ReuseOutcome == card.OutcomeDeclined {
				reuse = fmt.Sprintf("declined: `%s`, category `%s`, %q", c.Code, c.Category, c.Message)
			}
		}
		text, ok := outcomeText[c.Outcome]
		if !ok {
			panic("sandboxdoc: no text for card outcome " + string(c.Outcome))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", groupNumber(c.Number), text, reuse)
	}
	b.WriteString("\nThe reuse rows apply to a card saved on a customer and charged again through\n")
	b.WriteString("`payment_method` (outside the hosted checkout).\n\n")
	b.WriteString("### Cards that are declined\n\n| number | category | code | message | advice_code |\n| --- | --- | --- | --- | --- |\n")
	for _, c := range declines {
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s | `%s` |\n", groupNumber(c.Number), c.Category, c.Code, c.Message, c.AdviceCode)
	}
	b.WriteString("\n")
	return b.String()
}

var stateText = map[simulation.State]string{
	simulation.StateSucceeded:             "paid: intent `succeeded`",
	simulation.StatePending:               "waiting: intent `pending`, the QR code or boleto shown",
	simulation.StateRequiresPaymentMethod: "expired: intent back to `requires_payment_method`, the code no longer payable",
}

func state(s simulation.State) string {
	t, ok := stateText[s]
	if !ok {
		panic("sandboxdoc: no text for simulation state " + string(s))
	}
	return t
}

func emailSection() string {
	var b strings.Builder
	b.WriteString("## PIX and boleto: the buyer's e-mail decides\n\n")
	b.WriteString("In test mode a PIX or boleto payment is never paid by a bank: the buyer's e-mail picks what\n")
	b.WriteString("happens. The e-mail is the one typed on the hosted checkout (`customer_email` of a\n")
	b.WriteString("confirmation), else the e-mail of the payment intent's customer. Only the part before the\n")
	b.WriteString("`@` counts, exactly (lower case, no `+tag`); the domain can be any dotted host name.\n\n")
	b.WriteString("| e-mail | right after confirmation | after `--sim-delay` |\n| --- | --- | --- |\n")
	for _, r := range simulation.Rules() {
		after := "— (already final)"
		switch {
		case r.Delayed():
			after = state(r.After)
		case r.Initial == simulation.StatePending:
			after = "nothing: it waits until a test helper or the hosted page's test bar resolves it"
		}
		fmt.Fprintf(&b, "| `%s@example.com` | %s | %s |\n", r.LocalPart, state(r.Initial), after)
	}
	fmt.Fprintf(&b, "| any other (`ana@example.com`) | %s | nothing: it waits until a test helper or the hosted page's test bar resolves it |\n", state(simulation.DefaultRule.Initial))
	b.WriteString("\n`--sim-delay` is a flag of `troco serve` (default `3m`). A delayed move is stored in the\n")
	b.WriteString("database and applied once by a background job (every few seconds, and at once by time\n")
	b.WriteString("travel), so it survives a restart. In live mode these addresses are ordinary e-mails.\n\n")
	b.WriteString("To resolve a waiting payment at once:\n\n")
	b.WriteString("- `POST /v1/test-helpers/payment-intents/{id}/succeed` or `…/expire`;\n")
	b.WriteString("- `POST /v1/test-helpers/checkout-sessions/{id}/succeed`, `…/fail` or `…/expire`;\n")
	b.WriteString("- the yellow test bar of the hosted checkout page (\"Simular pagamento\" / \"Simular expiração\").\n\n")
	return b.String()
}

func disputesSection() string {
	var b strings.Builder
	b.WriteString("## Disputes\n\n")
	b.WriteString("Pay with one of these cards: the payment succeeds and, about a minute of sandbox time after\n")
	b.WriteString("it is captured, a dispute opens (`charge.dispute.created`; the charge's `disputed` becomes\n")
	b.WriteString("`true`). With `capture_method: manual` the dispute opens a minute after the capture (an\n")
	b.WriteString("authorization that is canceled is never disputed).\n\n")
	b.WriteString("| number | dispute |\n| --- | --- |\n")
	for _, c := range card.DisputeCards() {
		kind, status := "chargeback", "needs_response"
		if c.Inquiry {
			kind, status = "inquiry", "warning_needs_response"
		}
		fmt.Fprintf(&b, "| `%s` | %s, reason `%s`, status `%s` |\n", groupNumber(c.Number), kind, c.Reason, status)
	}
	fmt.Fprintf(&b, "\nSubmitted evidence decides the outcome `--sim-delay` later, by `evidence.uncategorized_text`:\n\n")
	b.WriteString("| `uncategorized_text` | outcome |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| `%s` | `won`, the amount reinstated (an inquiry: `warning_closed`) |\n", payments.WinningEvidence)
	fmt.Fprintf(&b, "| `%s` | `lost` (an inquiry: `lost`, its funds withdrawn then) |\n", payments.LosingEvidence)
	b.WriteString("| anything else | stays under review |\n\n")
	return b.String()
}

var docOutcomeText = map[document.Outcome]string{
	document.OutcomeApproved:          "`active`; `payout_account` filled from the form's bank account",
	document.OutcomeInReview:          "stays `in_review` (no event)",
	document.OutcomeDisabledRetryable: "`disabled`, `disabled_reason` null, `requirements.missing` `[\"documents.identity\"]`: a new activation session may retry",
	document.OutcomeDisabledFinal:     "`disabled`, `disabled_reason` `rejected.other`: final (a new session answers `409 activation_not_retryable`)",
	document.OutcomeDocumentInUse:     "`POST /v1/activation-sessions` answers `409 document_already_in_use` (no session is created)",
}

func documentsSection() string {
	var b strings.Builder
	b.WriteString("## Activation: the organization's document decides\n\n")
	b.WriteString("With a test key, an organization's activation runs end to end in the sandbox: create an\n")
	b.WriteString("activation session, fill in the hosted form, submit. `--sim-delay` after the submission a\n")
	b.WriteString("background job decides by the organization's CPF or CNPJ:\n\n")
	b.WriteString("| CPF | CNPJ | outcome |\n| --- | --- | --- |\n")
	for _, d := range document.TestDocuments() {
		text, ok := docOutcomeText[d.Outcome]
		if !ok {
			panic("sandboxdoc: no text for activation outcome " + string(d.Outcome))
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", d.CPF, d.CNPJ, text)
	}
	fmt.Fprintf(&b, "| any other valid CPF | any other valid CNPJ | %s |\n", docOutcomeText[document.OutcomeApproved])
	fmt.Fprintf(&b, "\nA disabled organization may try %d times in all. A sandbox approval never enables live\n", document.MaxActivationAttempts)
	b.WriteString("payments: live activation is decided by an administrator (`troco org set-status`).\n\n")
	b.WriteString("For a buyer's CPF/CNPJ (boleto payer, customer `document`) any number with valid check digits\n")
	b.WriteString("works, such as CPF `111.444.777-35` or CNPJ `11.222.333/0001-81`.\n\n")
	return b.String()
}

const intro = `# Testing with troco's sandbox

<!-- Generated by ` + "`go generate ./server/sandboxdoc`" + ` from the tables the code runs on; do not edit by hand. -->

Every organization has a test environment: keys that start with ` + "`ch_test_`" + `, objects with
` + "`livemode: false`" + `. Test keys never move money; instead the sandbox simulates every outcome,
chosen by what you send: the card number, the buyer's e-mail (PIX and boleto), the organization's
document (activation). This page lists all of them, then how to make time pass, how to fire
webhooks on demand, and how to run troco in CI.

The first ` + "`troco serve`" + ` on an empty database prints a test key; to get another one:

` + "```sh" + `
troco key create --org org_… --env test
` + "```" + `

(` + "`--env`" + ` defaults to ` + "`live`" + `: say ` + "`test`" + ` for a sandbox key.)

`

const brazil = `## Brazil

- **Due dates around Carnaval and Christmas**: confirm boletos on the days before them and read
  ` + "`next_action.boleto.due_date`" + `; ask ` + "`GET /v1/business-days?from=2026-02-12&to=2026-02-19`" + `
  (answers 12, 13, 18 and 19 February). To test a local holiday, start the server with
  ` + "`--holidays FILE`" + ` (one ` + "`YYYY-MM-DD`" + ` a line).
- **Receivables**: every ledger entry (` + "`GET /v1/transactions`" + `) has ` + "`available_on`" + `, the business day
  its money is expected (card instalment *n*: 30 × *n* days after capture, moved past weekends
  and holidays).
- **Boleto híbrido**: confirm a boleto with the buyer e-mail ` + "`pending@example.com`" + ` (it waits), pay
  it with ` + "`{\"paid_with\":\"pix\"}`" + ` through ` + "`POST /v1/test-helpers/payment-intents/{id}/succeed`" + `, then
  try ` + "`{\"paid_with\":\"boleto\"}`" + `: ` + "`409 payment_intent_unexpected_state`" + `, and still one charge and one
  ledger entry. The hosted checkout's sandbox bar has **Pagar boleto** and **Pagar PIX**.
- **The QR's payload**: parse the BR Code's field 26-25, ` + "`GET https://<that>`" + `, verify the JWS with
  any JOSE library against the ` + "`jku`" + ` key set, compare ` + "`valor.original`" + ` and ` + "`txid`" + `. An unknown or
  expired id answers ` + "`404`" + `.
- **Pix Automático**: create a customer whose e-mail is ` + "`pixauto_approve@…`" + `, ` + "`pixauto_reject@…`" + ` or
  ` + "`pixauto_insufficient@…`" + ` and ` + "`POST /v1/pix-authorizations`" + ` for it: the authorization is answered at
  once. With any other e-mail it stays ` + "`pending`" + `: open its ` + "`url`" + ` and press **Aprovar autorização** or
  **Recusar autorização**, or call ` + "`POST /v1/test-helpers/pix-authorizations/{id}/approve`" + ` (or
  ` + "`…/reject`" + `). Name the approval's ` + "`payment_method`" + ` (type ` + "`pix_automatico`" + `) as a subscription's
  ` + "`default_payment_method`" + `: each renewal is charged by PIX at its due instant; advance the clock
  to see it. A renewal above ` + "`max_amount`" + `, under a canceled authorization or for a
  ` + "`pixauto_insufficient@…`" + ` payer fails (` + "`invoice.payment_failed`" + `, ` + "`past_due`" + `) and is retried on the
  next three business days (` + "`next_payment_attempt`" + ` on the invoice); the invoice's
  ` + "`last_payment_error`" + ` says why. The hosted page is in English for a customer whose
  ` + "`preferred_locales`" + ` starts with ` + "`en`" + ` (or with ` + "`?lang=en`" + `). Live mode, against a local double
  of the PSP, is in the Going live guide (` + "`troco dev psp`" + `).
- **Webhook receivers**: set ` + "`chaos`" + ` on a test endpoint pointing at your receiver
  (` + "`{\"seed\":42,\"drop_rate\":2500,\"duplicate_rate\":3000,\"max_delay_seconds\":2,\"reorder\":true,\"fail_first_attempts\":1}`" + `),
  create events, and advance the clock until every event arrived; assert your side handled each
  ` + "`webhook-id`" + ` once whatever the order. The deliveries list
  (` + "`GET /v1/webhook-endpoints/{id}/deliveries`" + `) shows what chaos did to each attempt, and the same
  seed gives the same chaos on every run.

The details of each feature are in [API.md](API.md#brazil).

`

const outro = `## Time travel

Start the server with ` + "`--allow-time-travel`" + `, then move its clock forward:

` + "```sh" + `
curl -sS --cacert ./troco-data/ca.pem https://localhost:8443/v1/test-helpers/advance-clock \
  -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" -d '{"seconds":86400}'
` + "```" + `

Every background job that became due runs before the answer: delayed PIX/boleto settlement,
expiries of checkout sessions, PIX codes and boletos, invoice due dates, subscription renewals,
activation reviews, webhook retries. ` + "`seconds`" + ` is 1 to 315360000; the clock only moves forward.
The offset is the whole server's (every organization, both environments), is kept in the
database and is restored when the server starts again with ` + "`--allow-time-travel`" + `; the
administration commands use the same clock. Never use it on a server that takes real payments.

## Webhooks on demand: ` + "`troco trigger`" + `

` + "```sh" + `
troco trigger payment_intent.succeeded
troco trigger checkout.session.completed --org org_…
` + "```" + `

creates, in test mode, the objects that emit the event (through the same operations as the
API), then waits up to ` + "`--wait`" + ` (10 s) for the running server to deliver them to your webhook
endpoints and prints every attempt (status, duration). It uses the base URL, simulated delay and
data directory that the running ` + "`troco serve`" + ` recorded in the database, so the checkout and
PIX/boleto links it creates point at that server; ` + "`--base-url`" + `, ` + "`--sim-delay`" + ` and
` + "`--data-dir`" + ` override them. ` + "`troco trigger -h`" + ` lists the supported event types.

## Watching events: ` + "`troco events tail`" + `

` + "```sh" + `
troco events tail --env test --type 'payment_intent.*'
` + "```" + `

prints every new event as it is written, one line each (` + "`--json`" + `: the webhook body), for every
organization or the one of ` + "`--org`" + `. It only reads the database, so it works next to a running
server; Ctrl-C stops it.

## Customer e-mail: the sandbox mailbox

Test mode never sends e-mail out of troco. Every message a customer would receive (receipt,
boleto, PIX code, invoice, renewal notice, failed payment, cancellation, refund) lands in the
organization's sandbox mailbox, in the customer's language (` + "`" + `preferred_locales` + "`" + `, Portuguese by
default) and time zone (` + "`" + `timezone` + "`" + `). Reading the mailbox first delivers whatever is pending, so a
message is there as soon as the request that caused it has answered: nothing to wait for.

` + "`" + `` + "`" + `` + "`" + `sh
# after paying by boleto as joao@example.com: exactly one boleto e-mail, with its digitable line
curl -s "$TROCO/v1/test-helpers/emails?to=joao@example.com&kind=boleto" -H "Authorization: Bearer $TEST_KEY" \
  | jq -e '.data | length == 1'
` + "`" + `` + "`" + `` + "`" + `

- Filters: ` + "`" + `to` + "`" + ` (case-insensitive), ` + "`" + `kind` + "`" + ` (` + "`" + `receipt` + "`" + `, ` + "`" + `boleto` + "`" + `, ` + "`" + `pix` + "`" + `, ` + "`" + `invoice` + "`" + `,
  ` + "`" + `invoice_upcoming` + "`" + `, ` + "`" + `payment_failed` + "`" + `, ` + "`" + `invoice_overdue` + "`" + `, ` + "`" + `subscription_canceled` + "`" + `, ` + "`" + `refund` + "`" + `), ` + "`" + `created_at[…]` + "`" + `,
  ` + "`" + `status` + "`" + ` (default ` + "`" + `sent` + "`" + `). Each message has ` + "`" + `subject` + "`" + `, ` + "`" + `text` + "`" + `, ` + "`" + `html` + "`" + `, ` + "`" + `locale` + "`" + ` and
  ` + "`" + `related_object` + "`" + ` (the charge, intent, invoice, subscription or refund).
- A message *not* sent (no address, an address troco will not send to, a kind the organization
  turned off with ` + "`" + `email_settings` + "`" + `) is listed with ` + "`" + `status=skipped` + "`" + ` and its ` + "`" + `skip_reason` + "`" + `.
- ` + "`" + `GET /v1/test-helpers/mailbox` + "`" + ` returns a 24-hour link to the mailbox page (also linked from the
  hosted checkout's and the dashboard's sandbox bars, and printed by ` + "`" + `serve` + "`" + ` at start).
- ` + "`" + `troco trigger <event>` + "`" + ` prints the e-mails the triggered events queued.

The full reference is in [API.md](API.md#customer-e-mail).

## CI recipe

A throwaway instance: an in-memory database, a temporary data dir, a test key you choose (so the
tests know it in advance), time travel on and a short simulated delay.

` + "```sh" + `
go build -o troco .
KEY=ch_test_$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
DATA=$(mktemp -d)
./troco serve --db :memory: --data-dir "$DATA" --addr 127.0.0.1:8443 \
  --sandbox-key "$KEY" --allow-time-travel --sim-delay 5s &
until curl -sf --cacert "$DATA/ca.pem" https://localhost:8443/healthz; do sleep 0.2; done

# your integration tests, with TROCO_API=https://localhost:8443 and TROCO_KEY=$KEY;
# trust "$DATA/ca.pem" (curl --cacert, SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, …)

kill %1
` + "```" + `

The token must be ` + "`ch_test_`" + ` followed by 43 base64url characters (32 random bytes). Everything
is gone when the process exits. Instead of sleeping for ` + "`--sim-delay`" + `, call
` + "`/v1/test-helpers/advance-clock`" + ` or the test helpers above.
`
