// Package metrics defines cargod's Prometheus metrics, in one place: what
// is counted, under which names and labels, and the handler that serves
// them in the Prometheus text format. Other packages report through the
// methods of Metrics, or are asked when Prometheus scrapes (Watch), and
// never see a Prometheus type.
//
// No label takes a value from a request or an event's content: routes are
// their patterns, not paths; consumers, event types, outcomes and methods
// come from fixed sets. So the number of series stays bounded however
// many tenants, aggregates and paths there are.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cargostream/cargostream/internal/version"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are one process's metrics.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	requestSeries   sync.Map // requestKey → requestSeries
	longPolls       prometheus.Gauge
	appendDuration  prometheus.Histogram
	batchEvents     prometheus.Histogram
	batchDuration   prometheus.Histogram
	eventsAppended  *prometheus.CounterVec
	eventsParked    *prometheus.CounterVec
	pullsHeld       prometheus.Counter
	deliveries      *prometheus.CounterVec
}

// latencyBuckets are the upper bounds, in seconds, of the latency
// histograms: from half a millisecond (a read, a lone synced write) to
// ten seconds (a request that waited out its limits).
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// New returns the metrics of a process, with the Go runtime's and the
// process's own (memory, CPU, open files).
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cargo_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		// By route and method only, as Prometheus' own server does: a
		// histogram per status code as well would multiply the series
		// by every code a route answers.
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cargo_http_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, less what a long poll (Prefer: wait) waited for a change, by route pattern and method.",
			Buckets: latencyBuckets,
		}, []string{"route", "method"}),
		longPolls: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "cargo_http_long_polls_waiting",
			Help: "Conditional GETs waiting now for their resource to change (Prefer: wait), each holding a connection.",
		}),
		appendDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "cargo_eventstore_append_duration_seconds",
			Help:    "Time from a decision's hand-over to the committer until its events are stored: queueing and the write.",
			Buckets: latencyBuckets,
		}),
		batchEvents: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "cargo_eventstore_batch_events",
			Help:    "Events per write to the event stream: an atomic batch, or a single event published alone.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000},
		}),
		batchDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "cargo_eventstore_batch_duration_seconds",
			Help:    "Time the server took to store one write (batch) and acknowledge it, synced to disk.",
			Buckets: latencyBuckets,
		}),
		eventsAppended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cargo_eventstore_events_appended_total",
			Help: "Events this process stored, by event type.",
		}, []string{"type"}),
		eventsParked: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cargo_consumer_events_parked_total",
			Help: "Events a reactor or the webhook dispatcher gave up on and parked, or parked again after a failed retry, by consumer, in this process.",
		}, []string{"consumer"}),
		pullsHeld: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cargo_eventstore_pulls_held_total",
			Help: "Reads and consumers whose first pull was held back until this replica's NATS server routed it to their new consumer (on a cluster: it would have been dropped).",
		}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cargo_webhook_deliveries_total",
			Help: "Webhook delivery attempts this process made, by outcome: delivered, retrying (failed, tried again later) or dead (failed for good).",
		}, []string{"outcome"}),
	}
	// Which build answers, as Prometheus' own servers say it: a gauge of 1
	// whose label is the version, to tell replicas of two builds apart
	// during an upgrade.
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "cargo_build_info", Help: "Always 1; its label is the version of this build of cargod.",
		ConstLabels: prometheus.Labels{"version": version.String()}})
	build.Set(1)
	m.reg.MustRegister(m.requests, m.requestDuration, m.longPolls, m.appendDuration, m.batchEvents, m.batchDuration,
		m.eventsAppended, m.eventsParked, m.pullsHeld, m.deliveries, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// A source that fails (the stream cannot be read) leaves its
		// metrics out; the others are still served.
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
}

// methods are the HTTP methods counted under their own name; any other
// is "other", so that a client cannot add series by inventing methods.
var methods = map[string]string{
	http.MethodGet: http.MethodGet, http.MethodHead: http.MethodHead, http.MethodPost: http.MethodPost,
	http.MethodPut: http.MethodPut, http.MethodPatch: http.MethodPatch, http.MethodDelete: http.MethodDelete,
	http.MethodOptions: http.MethodOptions,
}

// Request counts one answered request. route is the pattern it matched
// (such as /api/quotes/{id}), or "" for none. On a nil *Metrics it does
// nothing.
func (m *Metrics) Request(route, method string, code int, took time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	method, ok := methods[method]
	if !ok {
		method = "other"
	}
	key := requestKey{route, method, code}
	series, ok := m.requestSeries.Load(key)
	if !ok {
		series, _ = m.requestSeries.LoadOrStore(key, requestSeries{
			count:    m.requests.WithLabelValues(route, method, strconv.Itoa(code)),
			duration: m.requestDuration.WithLabelValues(route, method),
		})
	}
	s := series.(requestSeries)
	s.count.Inc()
	s.duration.Observe(took.Seconds())
}

// LongPollWaiting counts a long poll waiting for a change until the
// function it returns is called. On a nil *Metrics it does nothing.
func (m *Metrics) LongPollWaiting() (done func()) {
	if m == nil {
		return func() {}
	}
	m.longPolls.Inc()
	return m.longPolls.Dec
}

// requestKey names the series of a request; requestSeries are they. The
// vectors find a series by checking and hashing its label values at every
// call; a map of the series found once (routes, methods and codes being
// few) costs about half of that: BenchmarkRequest against its baseline
// BenchmarkRequestByVectors, 145 against 288 ns in one run on 2 cores.
type requestKey struct {
	route, method string
	code          int
}

type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// The event store's observer (eventstore.Observer).

// BatchStored counts one write to the event stream.
func (m *Metrics) BatchStored(events int, took time.Duration) {
	m.batchEvents.Observe(float64(events))
	m.batchDuration.Observe(took.Seconds())
}

// DecisionStored counts one decision stored, took after its hand-over.
func (m *Metrics) DecisionStored(took time.Duration) { m.appendDuration.Observe(took.Seconds()) }

// EventStored counts one event stored.
func (m *Metrics) EventStored(eventType string) { m.eventsAppended.WithLabelValues(eventType).Inc() }

// EventParked counts one event a consumer parked.
func (m *Metrics) EventParked(consumer string) { m.eventsParked.WithLabelValues(consumer).Inc() }

// PullHeld counts one read or consumer whose first pull was held back.
func (m *Metrics) PullHeld() { m.pullsHeld.Inc() }

// Delivered counts one webhook delivery attempt by its outcome.
func (m *Metrics) Delivered(outcome string) { m.deliveries.WithLabelValues(outcome).Inc() }

// WatchFailingSubscriptions has every scrape ask count how many webhook
// subscriptions' last delivery attempt by this process failed: a receiver
// down is otherwise seen only as retries, by no subscription, until its
// deliveries are given up days later.
func (m *Metrics) WatchFailingSubscriptions(count func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "cargo_webhook_subscriptions_failing",
		Help: "Webhook subscriptions whose last delivery attempt by this process failed (the log names each: webhook subscription failing).",
	}, func() float64 { return float64(count()) }))
}

// ReadModels is how far this process's read models are.
type ReadModels struct {
	Applied    uint64 // the last sequence applied
	Target     uint64 // the stream's last sequence when the process started: the replay ends there
	StreamLast uint64 // the stream's last sequence now
}

// Backlog is the work waiting for one consumer that all replicas share.
type Backlog struct {
	Consumer string // a reactor, the webhook dispatcher, or a work queue
	Pending  uint64 // not handed to any replica yet
	InHand   uint64 // handed out and not done: being handled, or waiting to be tried again
	Parked   uint64 // given up on, waiting for an operator
}

// scrapeTimeout bounds what a scrape waits for the stream: Prometheus'
// default scrape timeout is 10 s, and a slow source must not cost the
// others.
const scrapeTimeout = 3 * time.Second

// WatchReadModels has every scrape ask f how far the read models are.
func (m *Metrics) WatchReadModels(f func(context.Context) (ReadModels, error)) {
	m.reg.MustRegister(&asking[ReadModels]{descs: []*prometheus.Desc{appliedDesc, targetDesc, streamDesc, lagDesc}, ask: f,
		report: func(rm ReadModels, gauge func(*prometheus.Desc, uint64, ...string)) {
			gauge(appliedDesc, rm.Applied)
			gauge(targetDesc, rm.Target)
			gauge(streamDesc, rm.StreamLast)
			gauge(lagDesc, rm.StreamLast-min(rm.Applied, rm.StreamLast))
		}})
}

// WatchBacklogs has every scrape ask f for the shared consumers' backlogs.
func (m *Metrics) WatchBacklogs(f func(context.Context) ([]Backlog, error)) {
	m.reg.MustRegister(&asking[[]Backlog]{descs: []*prometheus.Desc{pendingDesc, inHandDesc, parkedDesc}, ask: f,
		report: func(backlogs []Backlog, gauge func(*prometheus.Desc, uint64, ...string)) {
			for _, b := range backlogs {
				gauge(pendingDesc, b.Pending, b.Consumer)
				gauge(inHandDesc, b.InHand, b.Consumer)
				gauge(parkedDesc, b.Parked, b.Consumer)
			}
		}})
}

// Job is a rebuild or verification of the read models (see
// projections.Maintenance).
type Job struct {
	Kind    string // rebuild or verify
	Running bool
	Done    uint64 // events of its phase done so far
	Total   uint64 // events of its phase
}

// WatchJobs has every scrape ask f for the newest job of each kind.
func (m *Metrics) WatchJobs(f func(context.Context) ([]Job, error)) {
	m.reg.MustRegister(&asking[[]Job]{descs: []*prometheus.Desc{jobRunningDesc, jobDoneDesc, jobPhaseDesc}, ask: f,
		report: func(jobs []Job, gauge func(*prometheus.Desc, uint64, ...string)) {
			for _, j := range jobs {
				running := uint64(0)
				if j.Running {
					running = 1
				}
				gauge(jobRunningDesc, running, j.Kind)
				gauge(jobDoneDesc, j.Done, j.Kind)
				gauge(jobPhaseDesc, j.Total, j.Kind)
			}
		}})
}

var (
	jobRunningDesc = prometheus.NewDesc("cargo_readmodel_job_running",
		"1 while a rebuild or verification of this process's read models runs, by kind (rebuild, verify).", []string{"kind"}, nil)
	jobDoneDesc = prometheus.NewDesc("cargo_readmodel_job_events_done",
		"Events the newest rebuild or verification has done in its phase (checking the stream, replaying into fresh read models), by kind.", []string{"kind"}, nil)
	jobPhaseDesc = prometheus.NewDesc("cargo_readmodel_job_phase_events",
		"Events of that phase, by kind: done / total is its progress.", []string{"kind"}, nil)
)

var (
	appliedDesc = prometheus.NewDesc("cargo_readmodel_applied_sequence",
		"Stream sequence of the last event this process's read models applied.", nil, nil)
	targetDesc = prometheus.NewDesc("cargo_replay_target_sequence",
		"Stream sequence the read models replay up to at start (the stream's last when the process started); ready once applied reaches it.", nil, nil)
	lagDesc = prometheus.NewDesc("cargo_readmodel_lag_events",
		"Events in the stream that this process's read models have not applied yet.", nil, nil)
	streamDesc = prometheus.NewDesc("cargo_stream_last_sequence",
		"Sequence of the newest event in the stream.", nil, nil)
	pendingDesc = prometheus.NewDesc("cargo_consumer_pending",
		"Events (jobs, for a queue) not yet handed to any replica, by consumer.", []string{"consumer"}, nil)
	inHandDesc = prometheus.NewDesc("cargo_consumer_in_hand",
		"Events (jobs) handed out and not done, by consumer: being handled, or waiting to be tried again.", []string{"consumer"}, nil)
	parkedDesc = prometheus.NewDesc("cargo_consumer_parked",
		"Events parked now, by consumer: given up on after repeated failures, until an operator retries them (cargoctl parked).", []string{"consumer"}, nil)
)

// asking is a collector that asks for its figures at every scrape, and
// reports them as gauges.
type asking[T any] struct {
	descs  []*prometheus.Desc
	ask    func(context.Context) (T, error)
	report func(T, func(d *prometheus.Desc, v uint64, labels ...string))
}

func (c *asking[T]) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *asking[T]) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	v, err := c.ask(ctx)
	if err != nil {
		// The scrape goes on without these figures. Why is said to
		// nobody: the handler serves on past an invalid metric without
		// an ErrorLog, so their absence is the only sign (see the
		// README's Metrics).
		ch <- prometheus.NewInvalidMetric(c.descs[0], err)
		return
	}
	c.report(v, func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	})
}
