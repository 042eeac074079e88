package metrics

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/internal/version"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape serves m's metrics once and parses them.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape = %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	return families
}

// labelsOf are the label sets of a family's series, as name=value maps.
func labelsOf(f *dto.MetricFamily) []map[string]string {
	var out []map[string]string
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		out = append(out, labels)
	}
	return out
}

func TestRequestLabelsTakeOnlyBoundedValues(t *testing.T) {
	tests := []struct {
		name          string
		route, method string
		want          map[string]string
	}{
		{name: "a route's pattern and a known method", route: "/api/quotes/{id}", method: "GET",
			want: map[string]string{"route": "/api/quotes/{id}", "method": "GET", "code": "200"}},
		{name: "no route", route: "", method: "POST", want: map[string]string{"route": "unmatched", "method": "POST", "code": "200"}},
		{name: "a method a client made up", route: "/api/quotes", method: "BREW", want: map[string]string{"route": "/api/quotes", "method": "other", "code": "200"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			m.Request(tt.route, tt.method, http.StatusOK, 3*time.Millisecond)
			families := scrape(t, m)
			got := labelsOf(families["cargo_http_requests_total"])
			if len(got) != 1 || len(got[0]) != len(tt.want) {
				t.Fatalf("series %v, want one with %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[0][k] != v {
					t.Errorf("label %s = %q, want %q", k, got[0][k], v)
				}
			}
			h := families["cargo_http_request_duration_seconds"].GetMetric()
			if len(h) != 1 || h[0].GetHistogram().GetSampleCount() != 1 || h[0].GetHistogram().GetSampleSum() != 0.003 {
				t.Errorf("duration histogram %v, want one observation of 0.003 s", h)
			}
		})
	}
}

func TestAScrapeReportsWhatItsSourcesAnswerAndGoesOnWithoutOneThatFails(t *testing.T) {
	readModels := func(context.Context) (ReadModels, error) {
		return ReadModels{Applied: 70, Target: 100, StreamLast: 120}, nil
	}
	tests := []struct {
		name     string
		backlogs func(context.Context) ([]Backlog, error)
		want     map[string]float64 // of gauges; -1: none
	}{
		{name: "both answer", backlogs: func(context.Context) ([]Backlog, error) {
			return []Backlog{{Consumer: "pricing", Pending: 3, InHand: 2, Parked: 1}}, nil
		}, want: map[string]float64{"cargo_readmodel_applied_sequence": 70, "cargo_replay_target_sequence": 100, "cargo_stream_last_sequence": 120,
			"cargo_readmodel_lag_events": 50, "cargo_consumer_pending": 3, "cargo_consumer_in_hand": 2, "cargo_consumer_parked": 1}},
		{name: "the backlogs fail", backlogs: func(context.Context) ([]Backlog, error) { return nil, errors.New("no quorum") },
			want: map[string]float64{"cargo_readmodel_lag_events": 50, "cargo_consumer_pending": -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			m.WatchReadModels(readModels)
			m.WatchBacklogs(tt.backlogs)
			families := scrape(t, m)
			for name, want := range tt.want {
				f, ok := families[name]
				switch {
				case want < 0 && ok:
					t.Errorf("%s reported although its source failed: %v", name, f)
				case want >= 0 && (!ok || f.GetMetric()[0].GetGauge().GetValue() != want):
					t.Errorf("%s = %v, want %v", name, f, want)
				}
			}
		})
	}
}

func TestAScrapeReportsTheNewestMaintenanceJobOfEachKind(t *testing.T) {
	m := New()
	m.WatchJobs(func(context.Context) ([]Job, error) {
		return []Job{{Kind: "rebuild", Running: true, Done: 400, Total: 1000}, {Kind: "verify", Done: 1000, Total: 1000}}, nil
	})
	families := scrape(t, m)
	got := map[string]float64{}
	for _, name := range []string{"cargo_readmodel_job_running", "cargo_readmodel_job_events_done", "cargo_readmodel_job_phase_events"} {
		for _, metric := range families[name].GetMetric() {
			got[name+"/"+metric.GetLabel()[0].GetValue()] = metric.GetGauge().GetValue()
		}
	}
	want := map[string]float64{"cargo_readmodel_job_running/rebuild": 1, "cargo_readmodel_job_running/verify": 0,
		"cargo_readmodel_job_events_done/rebuild": 400, "cargo_readmodel_job_phase_events/rebuild": 1000,
		"cargo_readmodel_job_events_done/verify": 1000, "cargo_readmodel_job_phase_events/verify": 1000}
	if !maps.Equal(got, want) {
		t.Errorf("scraped %v, want %v", got, want)
	}
}

// BenchmarkRequest is what counting costs each request, from 64
// goroutines (cargobench's clients) at once.
func BenchmarkRequest(b *testing.B) {
	m := New()
	b.SetParallelism(32) // 64 goroutines on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Request("/api/quotes/{id}", http.MethodGet, http.StatusOK, 1200*time.Microsecond)
		}
	})
}

// BenchmarkRequestByVectors is BenchmarkRequest's baseline, in the same
// run: the series found through the vectors' label lookup at every call,
// as Request did before it kept them.
func BenchmarkRequestByVectors(b *testing.B) {
	m := New()
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.requests.WithLabelValues("/api/quotes/{id}", http.MethodGet, strconv.Itoa(http.StatusOK)).Inc()
			m.requestDuration.WithLabelValues("/api/quotes/{id}", http.MethodGet).Observe((1200 * time.Microsecond).Seconds())
		}
	})
}

// TestEachHeldPullIsCountedOnce: the event store reports each read whose
// first pull it held, and the scrape shows how many.
func TestEachHeldPullIsCountedOnce(t *testing.T) {
	m := New()
	m.PullHeld()
	m.PullHeld()
	f := scrape(t, m)["cargo_eventstore_pulls_held_total"]
	if f == nil || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetCounter().GetValue() != 2 {
		t.Fatalf("cargo_eventstore_pulls_held_total = %v, want 2", f)
	}
}

func TestAScrapeSaysWhichBuildAnswers(t *testing.T) {
	f := scrape(t, New())["cargo_build_info"]
	if f == nil || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetGauge().GetValue() != 1 {
		t.Fatalf("cargo_build_info = %v, want one series of 1", f)
	}
	if got := labelsOf(f)[0]["version"]; got != version.String() || got == "" {
		t.Errorf("version label %q, want %q", got, version.String())
	}
}

// A help text says what an operator reading the scrape needs to read the
// figure right: the request durations leave out what a long poll waited
// (the middleware takes it off), which their help did not say, so a
// route's p99 looked lower than the long polls' wall clock for no reason
// the scrape gave.
func TestHelpTextsSayWhatTheFiguresLeaveOut(t *testing.T) {
	tests := []struct {
		family, says string
	}{
		{"cargo_http_request_duration_seconds", "less what a long poll (Prefer: wait) waited"},
	}
	m := New()
	m.Request("/api/quotes/{id}", http.MethodGet, http.StatusOK, time.Millisecond)
	families := scrape(t, m)
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			f := families[tt.family]
			if f == nil || !strings.Contains(f.GetHelp(), tt.says) {
				t.Errorf("help of %s = %q, want it to say %q", tt.family, f.GetHelp(), tt.says)
			}
		})
	}
}

// The long polls waiting are counted while they wait, and no more once
// each is done; a nil *Metrics counts nothing, without failing.
func TestLongPollsAreCountedWhileTheyWait(t *testing.T) {
	m := New()
	waiting := func() float64 {
		t.Helper()
		return scrape(t, m)["cargo_http_long_polls_waiting"].GetMetric()[0].GetGauge().GetValue()
	}
	first, second := m.LongPollWaiting(), m.LongPollWaiting()
	if n := waiting(); n != 2 {
		t.Errorf("%v long polls waiting, want 2", n)
	}
	first()
	second()
	if n := waiting(); n != 0 {
		t.Errorf("%v long polls waiting once both are done, want 0", n)
	}
	var none *Metrics
	none.LongPollWaiting()()
}

func TestAScrapeSaysHowManyWebhookSubscriptionsAreFailing(t *testing.T) {
	m := New()
	failing := 0
	m.WatchFailingSubscriptions(func() int { return failing })
	for _, n := range []int{0, 3, 1} {
		failing = n
		if got := scrape(t, m)["cargo_webhook_subscriptions_failing"].GetMetric()[0].GetGauge().GetValue(); got != float64(n) {
			t.Errorf("%v subscriptions failing, want %d", got, n)
		}
	}
}
