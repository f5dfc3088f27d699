package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// client sends API requests for one worker; buf is reused for response bodies.
type client struct {
	hc      *http.Client
	base    string
	token   string
	idem    bool
	idemSeq *atomic.Int64
	runID   string
	buf     bytes.Buffer
	// form sends bodies as application/x-www-form-urlencoded (stripe-mock) instead of JSON.
	form bool
}

// do sends one request and reads the whole answer; status 0 means a transport error.
func (c *client) do(method, path string, body []byte) (int, []byte, error) {
	var rdr io.Reader
	if body != nil {
		rdr = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rdr)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		if c.form {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if c.idem {
			req.Header.Set("Idempotency-Key", c.runID+"-"+strconv.FormatInt(c.idemSeq.Add(1), 10))
		}
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	c.buf.Reset()
	if _, err := c.buf.ReadFrom(res.Body); err != nil {
		return 0, nil, err
	}
	return res.StatusCode, c.buf.Bytes(), nil
}

func idOf(body []byte) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &v)
	return v.ID
}

// maxIDs bounds the ids kept for retrieves.
const maxIDs = 100_000

// ids is the shared set of customer ids that retrieves pick from; creates add to it.
type ids struct {
	mu sync.RWMutex
	v  []string
}

func (s *ids) add(id string) {
	if id == "" {
		return
	}
	s.mu.Lock()
	if len(s.v) < maxIDs {
		s.v = append(s.v, id)
	}
	s.mu.Unlock()
}

func (s *ids) pick(r *rand.Rand) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.v) == 0 {
		return "cus_missing"
	}
	return s.v[r.IntN(len(s.v))]
}

// step is one iteration of a scenario: one or more timed requests, each passed to rec.
type step func(c *client, r *rand.Rand, rec func(op string, status int, d time.Duration)) error

func timed(c *client, rec func(string, int, time.Duration), op, method, path string, body []byte) (int, []byte, error) {
	t0 := time.Now()
	st, b, err := c.do(method, path, body)
	rec(op, st, time.Since(t0))
	return st, b, err
}

func customerBody(r *rand.Rand) []byte {
	n := r.Uint64()
	return fmt.Appendf(nil, `{"email":"load+%x@example.com","name":"Load Test %x","metadata":{"run":"loadtest"}}`, n, n)
}

func createStep(pool *ids) step {
	return func(c *client, r *rand.Rand, rec func(string, int, time.Duration)) error {
		st, b, err := timed(c, rec, "create", "POST", "/v1/customers", customerBody(r))
		if st == http.StatusOK {
			pool.add(idOf(b))
		}
		return err
	}
}

func retrieveStep(pool *ids) step {
	return func(c *client, r *rand.Rand, rec func(string, int, time.Duration)) error {
		_, _, err := timed(c, rec, "retrieve", "GET", "/v1/customers/"+pool.pick(r), nil)
		return err
	}
}

func listStep() step {
	return func(c *client, r *rand.Rand, rec func(string, int, time.Duration)) error {
		_, _, err := timed(c, rec, "list", "GET", "/v1/customers?limit=10", nil)
		return err
	}
}

// mixedStep is 10 % creates, 80 % retrieves, 10 % list pages.
func mixedStep(pool *ids) step {
	create, retrieve, list := createStep(pool), retrieveStep(pool), listStep()
	return func(c *client, r *rand.Rand, rec func(string, int, time.Duration)) error {
		switch n := r.IntN(10); {
		case n == 0:
			return create(c, r, rec)
		case n == 9:
			return list(c, r, rec)
		default:
			return retrieve(c, r, rec)
		}
	}
}

const cardConfirm = `{"payment_method_type":"credit_card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2030,"cvc":"123"}}`

// paymentsStep creates a card payment intent and confirms it (issue 3): two requests per flow.
// A failed create skips the confirm; both are counted by status.
func paymentsStep() step {
	return func(c *client, r *rand.Rand, rec func(string, int, time.Duration)) error {
		body := fmt.Appendf(nil, `{"amount":%d,"currency":"brl","payment_method_types":["credit_card"]}`, 1000+r.IntN(100_000))
		st, b, err := timed(c, rec, "pi_create", "POST", "/v1/payment-intents", body)
		if err != nil || st != http.StatusOK {
			return err
		}
		id := idOf(b)
		if id == "" {
			return errors.New("payment intent create answered 200 without an id")
		}
		_, _, err = timed(c, rec, "pi_confirm", "POST", "/v1/payment-intents/"+id+"/confirm", []byte(cardConfirm))
		return err
	}
}

// cardPaymentOneRequest is the body of a confirmed card payment in one request: create with
// confirm: true and the confirmation's card.
const cardPaymentOneRequest = `{"amount":%d,"currency":"brl","payment_method_types":["credit_card"],"confirm":true,` +
	`"card":{"number":"4242424242424242","exp_month":12,"exp_year":2030,"cvc":"123"}}`

// payments1Step makes a confirmed card payment in one request: POST /v1/payment-intents with
// confirm: true (create and confirm in one writer transaction).
func payments1Step() step {
	return func(c *client, r *rand.Rand, rec func(string, int, time.Duration)) error {
		_, _, err := timed(c, rec, "pi_create_confirm", "POST", "/v1/payment-intents", fmt.Appendf(nil, cardPaymentOneRequest, 1000+r.IntN(100_000)))
		return err
	}
}

// probeOneRequestPayments reports whether the server creates and confirms in one request (a
// troco without it refuses confirm as an unknown parameter).
func probeOneRequestPayments(c *client) (bool, string, error) {
	st, b, err := c.do("POST", "/v1/payment-intents", fmt.Appendf(nil, cardPaymentOneRequest, 1000))
	if err != nil {
		return false, "", err
	}
	if st != http.StatusOK {
		return false, fmt.Sprintf("POST /v1/payment-intents with confirm: true answered %d: %s", st, bytes.TrimSpace(b)), nil
	}
	return true, "", nil
}

// probePayments reports whether the payment intent endpoints exist on the server.
func probePayments(c *client) (bool, string, error) {
	st, b, err := c.do("POST", "/v1/payment-intents", []byte(`{"amount":1000,"currency":"brl","payment_method_types":["credit_card"]}`))
	if err != nil {
		return false, "", err
	}
	if st == http.StatusNotFound || st == http.StatusMethodNotAllowed {
		return false, fmt.Sprintf("POST /v1/payment-intents answered %d: %s", st, bytes.TrimSpace(b)), nil
	}
	return true, "", nil
}

// seed creates n customers with conc workers and returns their ids.
func seed(clients []*client, n int, pool *ids) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, len(clients))
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 42))
			for next.Add(1) <= int64(n) {
				st, b, err := c.do("POST", "/v1/customers", customerBody(r))
				if err != nil {
					errc <- err
					return
				}
				if st != http.StatusOK {
					errc <- fmt.Errorf("seed: POST /v1/customers answered %d: %s", st, bytes.TrimSpace(b))
					return
				}
				pool.add(idOf(b))
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}

// Payment intents on either server of the side-by-side comparison: troco's JSON API at
// /v1/payment-intents, or stripe-mock's form-encoded /v1/payment_intents.
func piPath(stripe bool) string {
	if stripe {
		return "/v1/payment_intents"
	}
	return "/v1/payment-intents"
}

func piBody(stripe bool, r *rand.Rand) []byte {
	amount := 1000 + r.IntN(100_000)
	if stripe {
		return fmt.Appendf(nil, "amount=%d&currency=brl&payment_method_types[]=card", amount)
	}
	return fmt.Appendf(nil, `{"amount":%d,"currency":"brl","payment_method_types":["credit_card"]}`, amount)
}

func piCreateStep(stripe bool, pool *ids) step {
	return func(c *client, r *rand.Rand, rec func(string, int, time.Duration)) error {
		st, b, err := timed(c, rec, "pi_create", "POST", piPath(stripe), piBody(stripe, r))
		if st == http.StatusOK {
			pool.add(idOf(b))
		}
		return err
	}
}

func piRetrieveStep(stripe bool, pool *ids) step {
	return func(c *client, r *rand.Rand, rec func(string, int, time.Duration)) error {
		_, _, err := timed(c, rec, "pi_retrieve", "GET", piPath(stripe)+"/"+pool.pick(r), nil)
		return err
	}
}

// seedIntents creates n payment intents and keeps their ids for retrieves.
func seedIntents(clients []*client, stripe bool, n int, pool *ids) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, len(clients))
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 43))
			for next.Add(1) <= int64(n) {
				st, b, err := c.do("POST", piPath(stripe), piBody(stripe, r))
				if err != nil {
					errc <- err
					return
				}
				if st != http.StatusOK {
					errc <- fmt.Errorf("seed: POST %s answered %d: %s", piPath(stripe), st, bytes.TrimSpace(b))
					return
				}
				pool.add(idOf(b))
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}
