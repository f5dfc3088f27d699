// Package metrics is troco's Prometheus instrumentation (prometheus/client_golang), served by
// serve on its own listener (--metrics-addr). Labels are bounded sets only: route patterns (never
// a path with an id), methods, status codes, payment methods and outcomes, job names. No card
// data, token, customer data or id ever becomes a label or a value.
package metrics

import (
	"context"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"troco/db"
	"troco/server/clock"
	"troco/server/domain"
)

// Metrics holds troco's collectors. A nil *Metrics records nothing, so callers need no checks.
type Metrics struct {
	reg            *prometheus.Registry
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	payments       *prometheus.CounterVec
	refunds        *prometheus.CounterVec
	webhookTries   *prometheus.CounterVec
	webhookLatency prometheus.Histogram
	jobRuns        *prometheus.CounterVec
	jobDuration    *prometheus.HistogramVec
	writeWait      prometheus.Histogram
	backups        *prometheus.CounterVec
	backupDuration prometheus.Gauge
	backupLast     prometheus.Gauge
}

// New registers every collector, the Go runtime's and the build information.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg}
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troco_http_requests_total",
		Help: "HTTP requests answered, by route pattern, method and status code."}, []string{"route", "method", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "troco_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route pattern, method and status code.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"route", "method", "code"})
	m.payments = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troco_payments_total",
		Help: "Payment intent outcomes committed, by payment method (credit_card, pix, boleto, other), outcome and mode (live, test)."},
		[]string{"method", "outcome", "mode"})
	m.refunds = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troco_refunds_total",
		Help: "Refunds created, by status at creation and mode."}, []string{"status", "mode"})
	m.webhookTries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troco_webhook_delivery_attempts_total",
		Help: "Webhook delivery attempts, by result (success or failure)."}, []string{"result"})
	m.webhookLatency = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "troco_webhook_delivery_duration_seconds",
		Help: "Time of one webhook delivery attempt.", Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10}})
	m.jobRuns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troco_job_runs_total",
		Help: "Background job runs, by job name and result (ok or error)."}, []string{"job", "result"})
	m.jobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "troco_job_duration_seconds",
		Help: "Duration of background job runs.", Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 30}}, []string{"job"})
	m.writeWait = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "troco_db_write_queue_wait_seconds",
		Help:    "Time a write transaction waited in the queue of the single writer before it ran.",
		Buckets: []float64{.0001, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}})
	m.backups = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troco_backups_total",
		Help: "Scheduled backups, by result (ok or error)."}, []string{"result"})
	m.backupDuration = prometheus.NewGauge(prometheus.GaugeOpts{Name: "troco_backup_last_duration_seconds",
		Help: "Duration of the last scheduled backup that succeeded."})
	m.backupLast = prometheus.NewGauge(prometheus.GaugeOpts{Name: "troco_backup_last_success_timestamp_seconds",
		Help: "Unix time of the last scheduled backup that succeeded (0: none yet)."})
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.payments, m.refunds, m.webhookTries, m.webhookLatency,
		m.jobRuns, m.jobDuration, m.writeWait, m.backups, m.backupDuration, m.backupLast} {
		f(c)
	}
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	version, goVersion := "devel", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				version += "+" + s.Value[:12]
			}
		}
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "troco_build_info",
		Help: "Always 1; the labels name the running build."}, []string{"version", "goversion"})
	build.WithLabelValues(version, goVersion).Set(1)
	f(build)
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Request records one answered HTTP request. route is the pattern ("/v1/customers/:id").
func (m *Metrics) Request(route, method string, code int, d time.Duration) {
	if m == nil {
		return
	}
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodOptions:
	default:
		method = "other"
	}
	c := strconv.Itoa(code)
	m.requests.WithLabelValues(route, method, c).Inc()
	m.latency.WithLabelValues(route, method, c).Observe(d.Seconds())
}

// Event counts the payment outcomes and refunds among committed events.
func (m *Metrics) Event(e *domain.Event) {
	if m == nil {
		return
	}
	mode := "test"
	if e.Livemode {
		mode = "live"
	}
	switch e.Type {
	case "payment_intent.succeeded", "payment_intent.payment_failed", "payment_intent.canceled", "payment_intent.amount_capturable_updated":
		method := "other"
		if pi, ok := e.Data.Object.(*domain.PaymentIntent); ok && pi.PaymentMethodType != nil {
			switch *pi.PaymentMethodType {
			case domain.MethodCreditCard, domain.MethodPix, domain.MethodBoleto:
				method = *pi.PaymentMethodType
			}
		}
		outcome := map[string]string{"payment_intent.succeeded": "succeeded", "payment_intent.payment_failed": "failed",
			"payment_intent.canceled": "canceled", "payment_intent.amount_capturable_updated": "requires_capture"}[e.Type]
		m.payments.WithLabelValues(method, outcome, mode).Inc()
	case "refund.created":
		status := "other"
		if r, ok := e.Data.Object.(*domain.Refund); ok {
			switch r.Status {
			case "succeeded", "pending", "failed", "canceled", "requires_action":
				status = r.Status
			}
		}
		m.refunds.WithLabelValues(status, mode).Inc()
	}
}

// WebhookAttempt records one delivery attempt.
func (m *Metrics) WebhookAttempt(ok bool, d time.Duration) {
	if m == nil {
		return
	}
	result := "success"
	if !ok {
		result = "failure"
	}
	m.webhookTries.WithLabelValues(result).Inc()
	m.webhookLatency.Observe(d.Seconds())
}

// JobRun records one run of a background job.
func (m *Metrics) JobRun(name string, d time.Duration, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.jobRuns.WithLabelValues(name, result).Inc()
	m.jobDuration.WithLabelValues(name).Observe(d.Seconds())
}

// WriteWait records the queue wait of one write transaction.
func (m *Metrics) WriteWait(d time.Duration) {
	if m == nil {
		return
	}
	m.writeWait.Observe(d.Seconds())
}

// Backup records one scheduled backup; at is when it finished.
func (m *Metrics) Backup(d time.Duration, at time.Time, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.backups.WithLabelValues("error").Inc()
		return
	}
	m.backups.WithLabelValues("ok").Inc()
	m.backupDuration.Set(d.Seconds())
	m.backupLast.Set(float64(at.Unix()))
}

// WatchDB adds the database's connection pools and the webhook backlog, read at scrape time.
func (m *Metrics) WatchDB(store *db.DB, clk clock.Clock) {
	if m == nil {
		return
	}
	w, r := store.Pools()
	m.reg.MustRegister(collectors.NewDBStatsCollector(w, "writer"), collectors.NewDBStatsCollector(r, "readers"))
	m.reg.MustRegister(&backlog{store: store, clock: clk}, &writer{store: store})
}

var (
	writerBatches = prometheus.NewDesc("troco_db_writer_batches_total", "Transactions committed by the single writer (each holds one or more operations).", nil, nil)
	writerOps     = prometheus.NewDesc("troco_db_writer_operations_total", "Write operations run by the single writer (a batch's size is operations ÷ batches).", nil, nil)
	writerBusy    = prometheus.NewDesc("troco_db_writer_busy_seconds_total", "Time the single writer spent running batches, COMMIT included (its utilisation is the rate of this counter).", nil, nil)
	writerCommit  = prometheus.NewDesc("troco_db_writer_commit_seconds_total", "Of troco_db_writer_busy_seconds_total, the time spent in COMMIT (WAL writes, checkpoints, and the fsync unless the WAL is synced off the writer).", nil, nil)
	walSyncs      = prometheus.NewDesc("troco_db_wal_syncs_total", "fsyncs of the SQLite WAL made off the writer (--db-sync FULL); each makes every commit before it durable.", nil, nil)
	walSync       = prometheus.NewDesc("troco_db_wal_sync_seconds_total", "Time those fsyncs took.", nil, nil)
)

// writer exposes the single writer's cumulative counters.
type writer struct{ store *db.DB }

func (w *writer) Describe(ch chan<- *prometheus.Desc) {
	ch <- writerBatches
	ch <- writerOps
	ch <- writerBusy
	ch <- writerCommit
	ch <- walSyncs
	ch <- walSync
}

func (w *writer) Collect(ch chan<- prometheus.Metric) {
	st := w.store.WriterStats()
	ch <- prometheus.MustNewConstMetric(writerBatches, prometheus.CounterValue, float64(st.Batches))
	ch <- prometheus.MustNewConstMetric(writerOps, prometheus.CounterValue, float64(st.Txs))
	ch <- prometheus.MustNewConstMetric(writerBusy, prometheus.CounterValue, st.Busy.Seconds())
	ch <- prometheus.MustNewConstMetric(writerCommit, prometheus.CounterValue, st.Commit.Seconds())
	ch <- prometheus.MustNewConstMetric(walSyncs, prometheus.CounterValue, float64(st.Syncs))
	ch <- prometheus.MustNewConstMetric(walSync, prometheus.CounterValue, st.Sync.Seconds())
}

var (
	backlogSize = prometheus.NewDesc("troco_webhook_backlog", "Webhook deliveries not yet delivered (pending or retrying).", nil, nil)
	backlogAge  = prometheus.NewDesc("troco_webhook_oldest_undelivered_age_seconds", "Age of the oldest undelivered webhook delivery (0 when none).", nil, nil)
)

type backlog struct {
	store *db.DB
	clock clock.Clock
}

func (b *backlog) Describe(ch chan<- *prometheus.Desc) { ch <- backlogSize; ch <- backlogAge }

func (b *backlog) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n, oldest int64
	err := b.store.Read(ctx, func(tx *db.Tx) error {
		var err error
		n, oldest, err = tx.WebhookBacklog()
		return err
	})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(backlogSize, err)
		return
	}
	age := 0.0
	if n > 0 {
		age = max(0, float64(b.clock.Now().Unix()-oldest))
	}
	ch <- prometheus.MustNewConstMetric(backlogSize, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(backlogAge, prometheus.GaugeValue, age)
}
