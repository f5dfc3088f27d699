package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// opStats collects every latency of one operation (exact percentiles: a 10 s run at 10k/s is
// 100k int64s) and the answers by HTTP status.
type opStats struct {
	lat      []time.Duration
	statuses map[int]int // HTTP status → count; 0 is a transport error
}

func newOpStats() *opStats { return &opStats{statuses: map[int]int{}} }

func (o *opStats) merge(p *opStats) {
	o.lat = append(o.lat, p.lat...)
	for k, v := range p.statuses {
		o.statuses[k] += v
	}
}

// recorder belongs to one worker, so recording takes no lock.
type recorder struct {
	ops map[string]*opStats
}

func (r *recorder) record(op string, status int, d time.Duration) {
	s := r.ops[op]
	if s == nil {
		s = newOpStats()
		r.ops[op] = s
	}
	s.lat = append(s.lat, d)
	s.statuses[status]++
}

// summary is the result of one operation over one run.
type summary struct {
	Op                  string
	Requests            int
	OK                  int // 2xx
	Errors              map[int]int
	PerSec              float64
	P50, P90, P99, Max  time.Duration
	Mean                time.Duration
	measuredFor         time.Duration
	successfulPerSecond float64
}

func summarize(op string, s *opStats, measured time.Duration) summary {
	out := summary{Op: op, Requests: len(s.lat), Errors: map[int]int{}, measuredFor: measured}
	for st, n := range s.statuses {
		if st >= 200 && st < 300 {
			out.OK += n
		} else {
			out.Errors[st] += n
		}
	}
	if len(s.lat) == 0 {
		return out
	}
	lat := slices.Clone(s.lat)
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	out.Mean = sum / time.Duration(len(lat))
	out.P50, out.P90, out.P99, out.Max = pct(lat, 50), pct(lat, 90), pct(lat, 99), lat[len(lat)-1]
	out.PerSec = float64(len(lat)) / measured.Seconds()
	out.successfulPerSecond = float64(out.OK) / measured.Seconds()
	return out
}

// pct is the nearest-rank percentile of sorted latencies.
func pct(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

func errString(m map[int]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		name := fmt.Sprint(k)
		if k == 0 {
			name = "transport"
		}
		parts = append(parts, fmt.Sprintf("%s×%d", name, m[k]))
	}
	return strings.Join(parts, " ")
}

func printSummaries(w io.Writer, sums []summary) {
	width := 12 // the op column: wider for a longer op name (pi_create_confirm)
	for _, s := range sums {
		width = max(width, len(s.Op))
	}
	fmt.Fprintf(w, "  %-*s %9s %10s %8s %8s %8s %8s %8s  %s\n", width, "op", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "mean ms", "non-2xx")
	for _, s := range sums {
		fmt.Fprintf(w, "  %-*s %9d %10.0f %8s %8s %8s %8s %8s  %s\n", width, s.Op, s.Requests, s.PerSec, ms(s.P50), ms(s.P90), ms(s.P99), ms(s.Max), ms(s.Mean), errString(s.Errors))
	}
}

// medianF returns the median of xs (the middle one for odd counts, the mean of the two middle
// ones for even counts).
func medianF(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianD(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(medianF(xs))
}
