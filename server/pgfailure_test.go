package server_test

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db/dbtest"
)

// cutProxy forwards TCP connections to a PostgreSQL server and can cut them all at once (what
// clients see when the server restarts) and refuse new ones for a while.
type cutProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	conns   []net.Conn
	refuse  atomic.Bool
	stopped atomic.Bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() { p.stopped.Store(true); ln.Close(); p.cut() })
	return p
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.refuse.Load() {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

// cut closes every open connection.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestPostgresConnectionLoss: when every database connection breaks under load (PostgreSQL
// restarting) and new ones are refused for a moment, requests in flight are answered 503
// service_unavailable (never 500), troco reconnects by itself, and every write it acknowledged
// is there afterwards; retries with the same Idempotency-Key complete the rest exactly once.
func TestPostgresConnectionLoss(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("PostgreSQL only: set " + dbtest.EnvPostgres)
	}
	is := is.New(t)
	dsn := dbtest.Path(t, "")
	u, err := url.Parse(dsn)
	is.NoErr(err)
	proxy := newCutProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	e := newEnvAt(t, u.String(), t.TempDir())

	type outcome struct {
		key    string
		status int
		id     string
	}
	var mu sync.Mutex
	var outcomes []outcome
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("w%d-%d", w, i)
				r, err := e.TryDo("POST", "/v1/customers", e.Test, map[string]any{"email": key + "@example.com"}, "Idempotency-Key", key)
				if err != nil {
					t.Errorf("request %s: %v", key, err)
					return
				}
				mu.Lock()
				outcomes = append(outcomes, outcome{key, r.Status, r.Str("id")})
				mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	proxy.refuse.Store(true)
	proxy.cut() // the server goes away
	time.Sleep(500 * time.Millisecond)
	proxy.refuse.Store(false) // and comes back
	time.Sleep(700 * time.Millisecond)
	close(stop)
	wg.Wait()

	var ok, unavailable int
	for _, o := range outcomes {
		switch o.status {
		case 200:
			ok++
		case 503:
			unavailable++
		default:
			t.Fatalf("%s answered %d (want 200 or 503)", o.key, o.status)
		}
	}
	t.Logf("%d requests: %d created, %d answered 503", len(outcomes), ok, unavailable)
	is.True(unavailable > 0) // the cut was seen
	is.True(ok > 0)

	// Reconnected: every acknowledged customer is there, and a retried 503 completes once.
	for _, o := range outcomes {
		if o.status == 200 {
			is.Equal(e.Do("GET", "/v1/customers/"+o.id, e.Test, nil).Status, 200)
			continue
		}
		var r resp
		// 409 idempotency_key_in_use while the slot is being freed: the release is retried at least
		// every second once the database is back, so 15 s (a loaded CI machine) is far inside the
		// slot's 2-minute lease that would free it otherwise.
		for try := 0; try < 150; try++ {
			r = e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": o.key + "@example.com"}, "Idempotency-Key", o.key)
			if r.Status != 409 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		is.Equal(r.Status, 200)
		again := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": o.key + "@example.com"}, "Idempotency-Key", o.key)
		is.Equal(again.Str("id"), r.Str("id")) // replayed, not created twice
	}
}
