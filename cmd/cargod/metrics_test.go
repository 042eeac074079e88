package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cargostream/cargostream/eventstore/natstest"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parseMetrics reads a scrape with the Prometheus text parser.
func parseMetrics(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the scrape does not parse: %v\n%s", err, body)
	}
	return families
}

// metricValue is the value of the counter or gauge of family with the
// labels given (name, value, ...), and whether there is one.
func metricValue(families map[string]*dto.MetricFamily, family string, labels ...string) (float64, bool) {
	f, ok := families[family]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		matches := true
		for i := 0; i+1 < len(labels); i += 2 {
			if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == labels[i] && l.GetValue() == labels[i+1] }) {
				matches = false
			}
		}
		switch {
		case !matches:
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func TestMetricsAreServedToAdminsAndOnTheirOwnListenerAndCountRequests(t *testing.T) {
	t.Parallel()
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", natstest.FreePorts(t, 1)[0])
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_METRICS_ADDR": metricsAddr})
	admin, forwarder := s.demoToken(t, "demo-admin"), s.demoToken(t, "demo-forwarder")
	scrape := func() map[string]*dto.MetricFamily {
		t.Helper()
		r := s.do(t, request{method: "GET", path: "/metrics", token: admin})
		if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
			t.Fatalf("GET /metrics as admin = %d %s\n%s", r.status, r.header.Get("Content-Type"), r.body)
		}
		return parseMetrics(t, r.body)
	}
	const reads = "cargo_http_requests_total"
	readsOf := func(families map[string]*dto.MetricFamily) float64 {
		v, _ := metricValue(families, reads, "route", "/api/quotes/{id}", "method", "GET", "code", "200")
		return v
	}

	q := createQuote(t, s, forwarder, rfq())
	before := scrape()
	for range 3 {
		if r := s.do(t, request{method: "GET", path: "/api/quotes/" + q.ID, token: forwarder}); r.status != http.StatusOK {
			t.Fatalf("GET quote = %d %s", r.status, r.body)
		}
	}
	after := scrape()
	if got := readsOf(after) - readsOf(before); got != 3 {
		t.Errorf("%s of GET /api/quotes/{id} moved by %v after 3 reads, want 3", reads, got)
	}
	for _, m := range after[reads].GetMetric() {
		for _, l := range m.GetLabel() {
			if strings.Contains(l.GetValue(), q.ID) {
				t.Errorf("a label holds the quote's id: %s=%q", l.GetName(), l.GetValue())
			}
		}
	}
	if v, ok := metricValue(after, "cargo_eventstore_events_appended_total", "type", "QuoteRequested"); !ok || v < 1 {
		t.Errorf("QuoteRequested events appended = %v, %v; want at least 1", v, ok)
	}
	if v, ok := metricValue(after, "cargo_readmodel_applied_sequence"); !ok || v < 1 {
		t.Errorf("applied sequence = %v, %v", v, ok)
	}
	for _, consumer := range []string{"pricing", "bookings", "shipments", "webhooks", "queue:webhooks"} {
		if _, ok := metricValue(after, "cargo_consumer_pending", "consumer", consumer); !ok {
			t.Errorf("no backlog of %s", consumer)
		}
	}
	for _, family := range []string{"cargo_http_request_duration_seconds", "cargo_eventstore_append_duration_seconds", "cargo_eventstore_batch_events",
		"cargo_readmodel_lag_events", "cargo_replay_target_sequence", "go_goroutines"} {
		if _, ok := after[family]; !ok {
			t.Errorf("no %s", family)
		}
	}

	// Admins only, on the main port.
	for _, tt := range []struct {
		name, token string
		status      int
		code        string
	}{
		{name: "without a token", status: http.StatusUnauthorized, code: "invalid_token"},
		{name: "as a forwarder", token: forwarder, status: http.StatusForbidden, code: "forbidden"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "GET", path: "/metrics", token: tt.token})
			if e := r.apiError(t); r.status != tt.status || e.Error != tt.code {
				t.Errorf("= %d %+v, want %d %s", r.status, e, tt.status, tt.code)
			}
		})
	}

	// The listener of their own serves them without a token.
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics on %s = %d %s", metricsAddr, resp.StatusCode, body)
	}
	if got := readsOf(parseMetrics(t, body)); got < 3 {
		t.Errorf("the metrics listener counts %v reads of quotes, want at least 3", got)
	}
}
