package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestBackupCost measures `troco backup` on a large database while card payments run, for
// docs/PERFORMANCE.md. It is skipped unless TROCO_BACKUP_COST_MB names the database size:
//
//	TROCO_BACKUP_COST_MB=1024 go test -run TestBackupCost -v -timeout 60m .
//
// The database is generated at run time in a temporary directory (filler events of ~1 KB next to
// the real rows), never committed.
func TestBackupCost(t *testing.T) {
	mb, _ := strconv.Atoi(os.Getenv("TROCO_BACKUP_COST_MB"))
	if mb <= 0 {
		t.Skip("set TROCO_BACKUP_COST_MB (e.g. 1024) to measure the cost of a backup")
	}
	is := is.New(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addr := freeAddr(t)
	in := startServe(t, addr, envFrom(nil), "--addr", addr, "--data-dir", data, "--metrics-addr", "off", "--rate-limit", "off")
	key := bootKeyLine.FindStringSubmatch(in.stdout.String())[1]
	org := bootOrgLine.FindStringSubmatch(in.stdout.String())[1]
	is.NoErr(in.stop())

	start := time.Now()
	dbPath := filepath.Join(data, "troco.db")
	raw, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	is.NoErr(err)
	for batch := 0; ; batch++ {
		st, err := os.Stat(dbPath)
		is.NoErr(err)
		if st.Size() >= int64(mb)<<20 {
			break
		}
		_, err = raw.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)
			INSERT INTO events (id, org_id, livemode, type, request_id, data, created_at)
			SELECT 'evt_fill_' || ? || '_' || i, ?, 0, 'customer.updated', '', '{"object":"' || hex(randomblob(480)) || '"}', 0 FROM n`, batch, org)
		is.NoErr(err)
	}
	_, err = raw.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	is.NoErr(err)
	is.NoErr(raw.Close())
	st, _ := os.Stat(dbPath)
	t.Logf("generated a %d MB database in %s", st.Size()>>20, time.Since(start).Round(time.Second))

	in = startServe(t, addr, envFrom(nil), "--addr", addr, "--data-dir", data, "--metrics-addr", "off", "--rate-limit", "off")
	type sample struct {
		at  time.Time
		lat time.Duration
	}
	var mu sync.Mutex
	var samples []sample
	stop := make(chan struct{})
	var wg sync.WaitGroup
	post := func(path, body string) (int, string) {
		req, _ := http.NewRequest("POST", "https://"+addr+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := in.client.Do(req)
		if err != nil {
			return 0, ""
		}
		defer res.Body.Close()
		var m map[string]any
		_ = jsonDecode(res, &m)
		id, _ := m["id"].(string)
		return res.StatusCode, id
	}
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				st, id := post("/v1/payment-intents", `{"amount":3000,"currency":"brl","payment_method_types":["credit_card"]}`)
				if st != 200 {
					continue
				}
				st, _ = post("/v1/payment-intents/"+id+"/confirm", `{"card":{"number":"4242424242424242","exp_month":12,"exp_year":2040,"cvc":"123"}}`)
				if st == 200 {
					mu.Lock()
					samples = append(samples, sample{t0, time.Since(t0)})
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(10 * time.Second)
	b0 := time.Now()
	out, err := runCLI(t, envFrom(nil), "backup", "--to", filepath.Join(dir, "big.backup"), "--data-dir", data)
	b1 := time.Now()
	is.NoErr(err)
	time.Sleep(5 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("%s", strings.TrimSpace(out))
	t.Logf("backup took %s", b1.Sub(b0).Round(time.Millisecond))
	report := func(name string, from, to time.Time) {
		var lats []time.Duration
		for _, s := range samples {
			if !s.at.Before(from) && s.at.Before(to) {
				lats = append(lats, s.lat)
			}
		}
		if len(lats) == 0 {
			t.Logf("%s: no payments", name)
			return
		}
		slices.Sort(lats)
		pct := func(p float64) time.Duration {
			return lats[min(len(lats)-1, int(p*float64(len(lats))))].Round(100 * time.Microsecond)
		}
		t.Logf("%s: %d payments (create + confirm), %.1f/s, p50 %s, p99 %s, max %s", name, len(lats),
			float64(len(lats))/to.Sub(from).Seconds(), pct(.5), pct(.99), lats[len(lats)-1].Round(time.Millisecond))
	}
	report("before the backup (10 s)", b0.Add(-10*time.Second), b0)
	report(fmt.Sprintf("during the backup (%s)", b1.Sub(b0).Round(time.Second)), b0, b1)
	report("after the backup (5 s)", b1, b1.Add(5*time.Second))
}

func jsonDecode(res *http.Response, v any) error { return json.NewDecoder(res.Body).Decode(v) }
