package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// eventsTail follows the events table like `tail -f`: read-only polling, so it works beside a
// running serve on the same database file.
func eventsTail(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "events tail")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	org := fs.String("org", "", "only the events of this org_… (default: every organization)")
	envFlag := fs.String("env", "", "test or live (default: both)")
	typ := fs.String("type", "", "an event type or a prefix wildcard such as customer.*")
	asJSON := fs.Bool("json", false, "print each event as one line of JSON (the webhook body)")
	interval := fs.Duration("interval", 500*time.Millisecond, "how often to look for new events")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	f := db.TailFilter{OrgID: *org, Type: *typ}
	switch *envFlag {
	case "":
	case "test", "live":
		live := *envFlag == "live"
		f.Livemode = &live
	default:
		return errors.New("--env must be test or live")
	}
	if *typ != "" && !domain.ValidEventPattern(*typ) {
		return fmt.Errorf("--type: unknown event type %q: use a type of the Event types table of docs/API.md, or a prefix wildcard such as customer.*", *typ)
	}
	if *interval <= 0 {
		return errors.New("--interval must be positive")
	}
	d, err := openAdmin(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer d.Close()
	var after int64
	if err := d.Read(ctx, func(tx *db.Tx) error {
		after, err = tx.LastEventSeq()
		return err
	}); err != nil {
		return err
	}
	if !*asJSON {
		fmt.Fprintf(env.Stderr, "following events in %s (Ctrl-C to stop)\n", db.Display(*dbPath))
	}
	t := time.NewTicker(*interval)
	defer t.Stop()
	for {
		var batch []db.TailedEvent
		err := d.Read(ctx, func(tx *db.Tx) error {
			var err error
			batch, err = tx.EventsAfter(after, f, 500)
			return err
		})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		for _, te := range batch {
			after = te.Seq
			if err := printEvent(env.Stdout, te.Event, *asJSON); err != nil {
				return err
			}
		}
		if len(batch) == 500 {
			continue // catching up
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// printEvent writes one event as a log line or as its JSON envelope.
func printEvent(w io.Writer, e *domain.Event, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	mode := "test"
	if e.Livemode {
		mode = "live"
	}
	line := fmt.Sprintf("%s  %-40s %s  %s  %s", e.CreatedAt.Format(domain.TimeLayout), e.Type, e.ID, e.Organization, mode)
	if id := objectID(e); id != "" {
		line += "  " + id
	}
	if e.Request.ID != nil {
		line += "  " + *e.Request.ID
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// objectID extracts data.object.id for the log line.
func objectID(e *domain.Event) string {
	raw, err := json.Marshal(e.Data.Object)
	if err != nil {
		return ""
	}
	var o struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &o)
	return o.ID
}

// triggerFunc performs, in test mode, the operations that emit an event type; k carries the
// payment engines for the types that need them.
type triggerFunc func(tx *db.Tx, a domain.Actor, k *triggerKit) error

func text(s string) domain.Opt[string] { return domain.Opt[string]{Set: true, V: s} }

func triggerCustomer(tx *db.Tx, a domain.Actor) (*domain.Customer, error) {
	return core.CreateCustomer(tx, a, core.CustomerParams{Email: text("trigger@example.com"), Name: text("Troco Trigger"),
		Metadata: domain.Opt[map[string]string]{Set: true, V: map[string]string{"source": "troco trigger"}}})
}

func triggerProduct(tx *db.Tx, a domain.Actor) (*domain.Product, error) {
	return core.CreateProduct(tx, a, core.ProductParams{Name: text("Troco Trigger product")})
}

func triggerPrice(tx *db.Tx, a domain.Actor) (*domain.Price, error) {
	p, err := triggerProduct(tx, a)
	if err != nil {
		return nil, err
	}
	amount := int64(1990)
	return core.CreatePrice(tx, a, core.PriceParams{Product: p.ID, UnitAmount: &amount})
}

// triggers is the table of `troco trigger`: each entry runs the core operations that emit its
// type (and possibly others, as the API would). Add an entry beside each new resource.
var triggers = map[string]triggerFunc{
	"customer.created": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error { _, err := triggerCustomer(tx, a); return err },
	"customer.updated": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		c, err := triggerCustomer(tx, a)
		if err != nil {
			return err
		}
		_, err = core.UpdateCustomer(tx, a, c.ID, core.CustomerParams{Name: text("Troco Trigger (updated)")})
		return err
	},
	"customer.deleted": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		c, err := triggerCustomer(tx, a)
		if err != nil {
			return err
		}
		_, err = core.DeleteCustomer(tx, a, c.ID)
		return err
	},
	"product.created": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error { _, err := triggerProduct(tx, a); return err },
	"product.updated": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		p, err := triggerProduct(tx, a)
		if err != nil {
			return err
		}
		_, err = core.UpdateProduct(tx, a, p.ID, core.ProductParams{Description: text("updated by troco trigger")})
		return err
	},
	"product.deleted": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		p, err := triggerProduct(tx, a)
		if err != nil {
			return err
		}
		_, err = core.DeleteProduct(tx, a, p.ID)
		return err
	},
	"price.created": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error { _, err := triggerPrice(tx, a); return err },
	"price.updated": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		p, err := triggerPrice(tx, a)
		if err != nil {
			return err
		}
		name := "Troco Trigger price (updated)"
		_, err = core.UpdatePrice(tx, a, p.ID, core.PriceParams{Name: domain.Opt[string]{Set: true, V: name}})
		return err
	},
	"price.deleted": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		p, err := triggerPrice(tx, a)
		if err != nil {
			return err
		}
		_, err = core.DeletePrice(tx, a, p.ID)
		return err
	},
}

func supportedTriggers() string {
	names := make([]string, 0, len(triggers))
	for n := range triggers {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// triggerResult is the --json answer of troco trigger.
type triggerResult struct {
	Events     []*domain.Event           `json:"events"`
	Deliveries []*domain.WebhookDelivery `json:"deliveries"`
	Pending    []string                  `json:"pending_webhook_endpoints"`
	// Emails are the customer e-mails the events queued (they land in the sandbox mailbox).
	Emails []db.QueuedEmail `json:"emails"`
}

// triggerEvent creates in test mode the objects that produce an event type, through the same core
// operations as the API, then waits for a running serve to deliver the events to the test-mode
// webhook endpoints and prints each attempt.
func triggerEvent(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "trigger")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	org := fs.String("org", "", "org_… to act for (default: the bootstrap organization)")
	dataDir := fs.str("data-dir", "", "the data directory of serve, for its master key (default: the one serve recorded, else the directory of --db)")
	baseURL := fs.str("base-url", "", "the base URL of serve, for the URLs of checkout sessions and PIX/boleto pages (default: the one serve recorded, else https://localhost:8443)")
	simDelay := fs.duration("sim-delay", 3*time.Minute, "the --sim-delay of serve, for delayed PIX/boleto settlement (default: the one serve recorded)")
	wait := fs.Duration("wait", 10*time.Second, "how long to wait for the deliveries of a running serve (0: do not wait)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: troco trigger <event-type> [--org org_…] [--wait 10s] [--base-url U] [--data-dir D] [--sim-delay 3m] [--db F] [--json]; supported: %s", supportedTriggers())
	}
	typ := pos[0]
	fn, ok := triggers[typ]
	switch {
	case !ok && domain.KnownEventType(typ):
		return fmt.Errorf("troco trigger does not support %s yet; supported: %s", typ, supportedTriggers())
	case !ok:
		return fmt.Errorf("unknown event type %q; supported: %s", typ, supportedTriggers())
	}
	d, err := openTrigger(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	rec, err := recordedServeSettings(ctx, d)
	if err != nil {
		d.Close()
		return err
	}
	dir, base, delay := *dataDir, *baseURL, *simDelay
	if dir == "" {
		dir = rec.dataDir
	}
	if dir == "" {
		dir = filepath.Dir(*dbPath)
	}
	if base == "" {
		base = rec.baseURL
	}
	if base == "" {
		base = "https://localhost:8443"
	}
	if !fs.given("sim-delay") && rec.simDelay > 0 {
		delay = rec.simDelay
	}
	kit, err := newTriggerKit(dir, base, delay)
	if err != nil {
		d.Close()
		return err
	}
	defer d.Close()
	var res triggerResult
	queued := map[string]bool{} // "event endpoint" → waiting for a first attempt
	err = d.Write(ctx, func(tx *db.Tx) error {
		o, err := findTriggerOrg(tx, *org)
		if err != nil {
			return err
		}
		before, err := tx.LastEventSeq()
		if err != nil {
			return err
		}
		if err := fn(tx, domain.Actor{Scope: domain.Scope{OrgID: o.ID, Livemode: false}}, kit); err != nil {
			return err
		}
		live := false
		evs, err := tx.EventsAfter(before, db.TailFilter{OrgID: o.ID, Livemode: &live}, 100)
		if err != nil {
			return err
		}
		for _, te := range evs {
			res.Events = append(res.Events, te.Event)
			eps, err := tx.WebhookOutboxFor(te.Event.ID) // in this transaction: before any delivery
			if err != nil {
				return err
			}
			for _, ep := range eps {
				queued[te.Event.ID+" "+ep] = true
			}
			res.Emails = append(res.Emails, tx.EmailsForEvent(te.Event.ID)...)
		}
		return nil
	})
	if err != nil {
		return explain(err)
	}
	if !*asJSON {
		for _, e := range res.Events {
			fmt.Fprintf(env.Stdout, "event %s %s (%s)\n", e.ID, e.Type, objectID(e))
		}
		for _, m := range res.Emails {
			fmt.Fprintf(env.Stdout, "e-mail %s %s queued for the sandbox mailbox (GET /v1/test-helpers/emails?kind=%s)\n", m.ID, m.Kind, m.Kind)
		}
	}
	if err := awaitDeliveries(ctx, env, d, &res, queued, *wait, *asJSON); err != nil {
		return err
	}
	if *asJSON {
		if res.Deliveries == nil {
			res.Deliveries = []*domain.WebhookDelivery{}
		}
		if res.Pending == nil {
			res.Pending = []string{}
		}
		if res.Emails == nil {
			res.Emails = []db.QueuedEmail{}
		}
		return printJSON(env.Stdout, res)
	}
	if len(res.Pending) > 0 && *wait > 0 {
		fmt.Fprintf(env.Stdout, "no answer yet from %s after %s (a slow endpoint, or is troco serve not running on %s?); see GET /v1/webhook-endpoints/{id}/deliveries\n", strings.Join(res.Pending, ", "), *wait, db.Display(*dbPath))
	}
	return nil
}

func findTriggerOrg(tx *db.Tx, id string) (*domain.Organization, error) {
	if id == "" {
		o, err := tx.FirstOrganization()
		if errors.Is(err, db.ErrNotFound) {
			return nil, errors.New("the database has no organization yet: run troco serve once, or troco org create")
		}
		return o, err
	}
	o, err := tx.FindOrganizationByID(id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, fmt.Errorf("no such organization: %s", id)
	}
	return o, err
}

// awaitDeliveries polls the attempts of the triggered events until every queued delivery
// ("event endpoint" keys) has a first answer (or wait elapses), printing each attempt once.
func awaitDeliveries(ctx context.Context, env Env, d *db.DB, res *triggerResult, queued map[string]bool, wait time.Duration, asJSON bool) error {
	if len(queued) == 0 {
		if !asJSON {
			fmt.Fprintln(env.Stdout, "no enabled test-mode webhook endpoint subscribes to these events; create one with POST /v1/webhook-endpoints (test key), e.g. url http://localhost:4242/webhooks")
		}
		return nil
	}
	seen := map[string]bool{}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
poll:
	for {
		err := d.Read(ctx, func(tx *db.Tx) error {
			for _, e := range res.Events {
				atts, err := tx.WebhookDeliveriesForEvent(e.ID)
				if err != nil {
					return err
				}
				for _, a := range atts {
					if seen[a.ID] {
						continue
					}
					seen[a.ID] = true
					delete(queued, a.Event+" "+a.WebhookEndpoint)
					res.Deliveries = append(res.Deliveries, a)
					if !asJSON {
						printAttempt(env.Stdout, a)
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(queued) == 0 || wait <= 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-deadline.C:
			break poll
		case <-tick.C:
		}
	}
	for k := range queued {
		_, ep, _ := strings.Cut(k, " ")
		if !slices.Contains(res.Pending, ep) {
			res.Pending = append(res.Pending, ep)
		}
	}
	slices.Sort(res.Pending)
	return nil
}

func printAttempt(w io.Writer, a *domain.WebhookDelivery) {
	status := "no answer"
	if a.HTTPStatus != nil {
		status = fmt.Sprintf("HTTP %d", *a.HTTPStatus)
	}
	line := fmt.Sprintf("  → %s %s attempt %d: %s %s in %dms", a.WebhookEndpoint, a.Event, a.Attempt, a.Status, status, a.DurationMS)
	if a.Error != nil {
		line += " (" + *a.Error + ")"
	}
	if !a.NextAttemptAt.IsZero() {
		line += "; next try at " + a.NextAttemptAt.Format(domain.TimeLayout)
	}
	fmt.Fprintln(w, line)
}
