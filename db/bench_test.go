package db_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// Benchmarks of the storage hot paths on a real SQLite file (see docs/PERFORMANCE.md):
//
//	go test ./db -run '^$' -bench . -benchmem
//
// The file lives in b.TempDir(), so the fsync cost is the one of the disk under TMPDIR.

func benchDB(b *testing.B, sync string) (*db.DB, domain.Scope) {
	b.Helper()
	schema, err := os.ReadFile(filepath.Join("..", "schema.sql"))
	if err != nil {
		b.Fatal(err)
	}
	d, err := db.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), db.Options{Schema: string(schema), Synchronous: sync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	var org *domain.Organization
	err = d.Write(context.Background(), func(tx *db.Tx) error {
		org, err = core.CreateOrganization(tx, core.OrganizationInput{Name: "Bench Ltda"})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return d, domain.Scope{OrgID: org.ID}
}

func str(s string) *string { return &s }

// createCustomer is the write of POST /v1/customers: the customer and its event.
func createCustomer(tx *db.Tx, s domain.Scope, n int64) error {
	return tx.Savepoint(func() error {
		c := &domain.Customer{Email: str("bench+" + strconv.FormatInt(n, 10) + "@example.com"), Name: str("Bench"), Metadata: domain.Metadata{"k": "v"}}
		if err := tx.CreateCustomer(s, c); err != nil {
			return err
		}
		return tx.InsertEvent(s, &domain.Event{Type: "customer.created", Data: domain.EventData{Object: c}})
	})
}

// BenchmarkWrite measures DB.Write with concurrent callers (the group commit): each op is one
// request's transaction (customer + event in a savepoint); ns/op is the inverse of throughput,
// and p50-ms/p99-ms/max-ms are the latencies of single Write calls. With one caller every
// transaction is its own commit (and fsync).
func BenchmarkWrite(b *testing.B) {
	for _, level := range []string{"FULL", "NORMAL"} {
		for _, callers := range []int{1, 32} {
			b.Run(level+"/callers="+strconv.Itoa(callers), func(b *testing.B) {
				d, scope := benchDB(b, level)
				var n atomic.Int64
				var mu sync.Mutex
				var lat []time.Duration
				write := func(local *[]time.Duration) error {
					t0 := time.Now()
					err := d.Write(context.Background(), func(tx *db.Tx) error { return createCustomer(tx, scope, n.Add(1)) })
					*local = append(*local, time.Since(t0))
					return err
				}
				b.ReportAllocs()
				defer reportCPU(b, cpuTime())
				defer func() { reportLatency(b, lat) }()
				if callers == 1 {
					for b.Loop() {
						if err := write(&lat); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				b.SetParallelism(max(1, callers/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					var local []time.Duration
					defer func() {
						mu.Lock()
						lat = append(lat, local...)
						mu.Unlock()
					}()
					for pb.Next() {
						if err := write(&local); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// reportLatency adds the median, 99th percentile and maximum of lat as metrics.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))]) / 1e6 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/1e6, "max-ms")
}

// BenchmarkListCustomers is one list page (limit 10, then a starting_after page) over 10,000
// customers of the scope.
func BenchmarkListCustomers(b *testing.B) {
	d, scope := benchDB(b, "NORMAL")
	var cursor string
	for i := range 100 {
		err := d.Write(context.Background(), func(tx *db.Tx) error {
			for j := range 100 {
				if err := createCustomer(tx, scope, int64(i*100+j)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	_ = d.Read(context.Background(), func(tx *db.Tx) error {
		items, _, err := tx.ListCustomers(scope, db.CustomerFilter{}, db.ListParams{Limit: 5000})
		if err == nil && len(items) > 0 {
			cursor = items[len(items)-1].ID
		}
		return err
	})
	for _, tc := range []struct {
		name string
		p    db.ListParams
	}{{"first", db.ListParams{Limit: 10}}, {"starting_after", db.ListParams{Limit: 10, StartingAfter: cursor}}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				err := d.Read(context.Background(), func(tx *db.Tx) error {
					items, _, err := tx.ListCustomers(scope, db.CustomerFilter{}, tc.p)
					if err == nil && len(items) != 10 {
						b.Fatalf("got %d items", len(items))
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRead is the cost of DB.Read around a primary-key lookup (the customer retrieve).
func BenchmarkRead(b *testing.B) {
	d, scope := benchDB(b, "NORMAL")
	var id string
	_ = d.Write(context.Background(), func(tx *db.Tx) error {
		c := &domain.Customer{Email: str("a@example.com")}
		err := tx.CreateCustomer(scope, c)
		id = c.ID
		return err
	})
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			err := d.Read(context.Background(), func(tx *db.Tx) error {
				_, err := tx.FindCustomerByID(scope, id)
				return err
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// cpuTime is the CPU time (user + system) of the whole process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds a cpu-µs/op metric: the process's CPU time per op since start. On a shared,
// busy machine it is steadier than ns/op, which also counts waiting for a CPU.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e3, "cpu-µs/op")
}

// BenchmarkFdatasync is the disk's cost of one durable commit at the OS level: rewrite 4 KiB
// (appending, like a WAL frame) and fdatasync, on the file system of b.TempDir().
func BenchmarkFdatasync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "sync.bin"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	page := make([]byte, 4096)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for i := 0; b.Loop(); i++ {
		if _, err := f.WriteAt(page, int64(i%1024)*4096); err != nil {
			b.Fatal(err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMRR is the MRR of a scope with 100,000 subscriptions (90% active, the rest trialing
// or canceled), next to 100,000 of another organization: one index-only SUM.
func BenchmarkMRR(b *testing.B) {
	d, scope := benchDB(b, "NORMAL")
	other := domain.Scope{OrgID: "org_other"}
	statuses := []string{domain.SubscriptionActive, domain.SubscriptionActive, domain.SubscriptionActive, domain.SubscriptionActive, domain.SubscriptionActive,
		domain.SubscriptionActive, domain.SubscriptionActive, domain.SubscriptionActive, domain.SubscriptionActive, domain.SubscriptionTrialing}
	for _, sc := range []domain.Scope{scope, other} {
		for i := range 100 {
			err := d.Write(context.Background(), func(tx *db.Tx) error {
				for j := range 1000 {
					n := i*1000 + j
					sub := &domain.Subscription{ID: "sub_" + sc.OrgID + strconv.Itoa(n), Customer: "cus_x", Status: statuses[n%10],
						Items: []domain.SubscriptionItem{{Price: domain.Price{UnitAmount: 4990, Recurring: &domain.Recurring{Interval: "month", IntervalCount: 1}}, Quantity: 1}}}
					if err := tx.CreateSubscription(sc, sub); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		err := d.Read(context.Background(), func(tx *db.Tx) error {
			amount, count, err := tx.MRR(scope)
			if err == nil && (count != 90000 || amount != 90000*4990) {
				b.Fatalf("mrr %d over %d", amount, count)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
