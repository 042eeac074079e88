package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/cmd/internal/loadtest"
	"github.com/cargostream/cargostream/internal/lockedbuf"
)

// The load tool (cmd/cargobench) is tested against a real server, briefly
// and with few clients: that every scenario works and reports, never how
// fast.
func TestTheLoadToolRunsEveryScenarioWithoutErrors(t *testing.T) {
	// Serial: each scenario runs for a fixed time and must count work done in it, which parallel servers would starve.
	// The half second of warm-up puts bookings in flight before the measured second begins: under -race on a busy
	// machine, one booking to confirmed took longer than the 400 ms this test once measured, and it counted nothing.
	s := startServer(t, t.TempDir(), nil)
	cfg := loadtest.DefaultConfig()
	cfg.URL = s.base
	cfg.Clients, cfg.Duration, cfg.Warmup = 4, time.Second, 500*time.Millisecond
	cfg.Bookings, cfg.Subscribers, cfg.RFQs, cfg.Sequential = 4, 2, 20, 5
	// Fewer AWB numbers than the bookings use: the tool tops the stock up
	// as they go, else bookings are rejected for want of one.
	cfg.AWBStock = 100

	rep, err := loadtest.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) > 0 {
		t.Errorf("notes: %q", rep.Notes)
	}
	want := []struct {
		scenario, name string
		ratio          bool // compared with a bare handler
	}{
		{loadtest.CreateQuote, "POST /api/quotes", true},
		{loadtest.CreateQuote, "bare POST echo", false},
		{loadtest.GetQuote, "GET /api/quotes?id=", true},
		{loadtest.GetQuote, "GET /api/quotes/{id}", true},
		{loadtest.GetQuote, "bare GET JSON", false},
		{loadtest.Booking, "POST booking → confirmed on GET, 4 in flight", false},
		{loadtest.Webhooks, "20 RFQs from 4 clients, 2 subscribers", false},
		{loadtest.Webhooks, "one RFQ at a time, 5 RFQs, 2 subscribers", false},
	}
	if len(rep.Rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rep.Rows), len(want), rep.Rows)
	}
	for i, w := range want {
		row := rep.Rows[i]
		if row.Scenario != w.scenario || row.Name != w.name {
			t.Errorf("row %d is %s %q, want %s %q", i, row.Scenario, row.Name, w.scenario, w.name)
		}
		// A delivery may arrive before its RFQ's 201 is read: a latency of 0.
		if row.Count == 0 || row.Rate <= 0 || row.P50Ms < 0 || row.P99Ms < row.P50Ms {
			t.Errorf("%s %s measured nothing: %+v", row.Scenario, row.Name, row)
		}
		if row.ErrorCount() > 0 {
			t.Errorf("%s %s has errors %v: %q", row.Scenario, row.Name, row.Errors, row.Examples)
		}
		if (row.Ratio > 0) != w.ratio {
			t.Errorf("%s %s has ratio %v", row.Scenario, row.Name, row.Ratio)
		}
	}
	if got, want := rep.Rows[6].Count, 20*2; got != want {
		t.Errorf("the burst verified %d deliveries, want %d", got, want)
	}

	var table strings.Builder
	rep.WriteTable(&table)
	t.Log("\n" + table.String())
	for _, col := range []string{"scenario", "p50", "p99", "errors", "ours/bare", "req/s", "bookings/s", "deliveries/s", "×"} {
		if !strings.Contains(table.String(), col) {
			t.Errorf("the table has no %q:\n%s", col, table.String())
		}
	}

	// The tool deletes the subscriptions it made.
	var subs struct{ Webhooks []any }
	s.do(t, request{method: "GET", path: "/api/webhooks", token: s.demoToken(t, "demo-forwarder")}).json(t, &subs)
	if len(subs.Webhooks) != 0 {
		t.Errorf("%d subscriptions left behind", len(subs.Webhooks))
	}
}

// cancelOn is the load tool's stderr: it cancels the run the first time a
// progress line starts with prefix, as Ctrl-C would.
type cancelOn struct {
	lockedbuf.Buffer
	prefix string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), c.prefix) {
		c.cancel()
	}
	return c.Buffer.Write(p)
}

func TestAnInterruptedLoadToolReportsTheScenariosItFinishedAndDeletesItsSubscriptions(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupted during the webhooks' second row, which has far more RFQs to send than it can in the second
	// before its first progress line.
	stderr := &cancelOn{prefix: "webhooks one RFQ at a time", cancel: cancel}
	var stdout lockedbuf.Buffer
	args := []string{"-url", s.base, "-scenarios", "create-quote,webhooks", "-clients", "2", "-duration", "300ms", "-warmup", "0s",
		"-subscribers", "1", "-rfqs", "4", "-sequential", "1000000", "-json"}
	if code := loadtest.Main(ctx, args, &stdout, stderr); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", stderr.String())
	}
	var rep loadtest.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, stdout.String())
	}
	var rows []string
	for _, row := range rep.Rows {
		rows = append(rows, row.Scenario+" "+row.Name)
	}
	if want := []string{"create-quote POST /api/quotes", "create-quote bare POST echo"}; !slices.Equal(rows, want) {
		t.Errorf("rows %q, want those of the scenario finished, %q", rows, want)
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "interrupted during webhooks") }) {
		t.Errorf("no note says where the run was interrupted: %q", rep.Notes)
	}
	var subs struct{ Webhooks []any }
	s.do(t, request{method: "GET", path: "/api/webhooks", token: s.demoToken(t, "demo-forwarder")}).json(t, &subs)
	if len(subs.Webhooks) != 0 {
		t.Errorf("%d subscriptions left behind", len(subs.Webhooks))
	}
}

func TestTheLoadToolSaysHowToAllowLoopbackWebhooksWhenCargodRefusesThem(t *testing.T) {
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_WEBHOOK_ALLOW_PRIVATE": "false"})
	var stdout, stderr lockedbuf.Buffer
	args := []string{"-url", s.base, "-scenarios", "webhooks"}
	if code := loadtest.Main(context.Background(), args, &stdout, &stderr); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if !strings.Contains(stdout.String(), "start it with CARGO_WEBHOOK_ALLOW_PRIVATE=true") {
		t.Errorf("the report does not give the hint to allow private targets:\n%s", stdout.String())
	}
}

func TestTheLoadToolsJSONListsNoRowsAsAnEmptyListWhenNoScenarioCouldRun(t *testing.T) {
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_WEBHOOK_ALLOW_PRIVATE": "false"})
	var stdout, stderr lockedbuf.Buffer
	args := []string{"-url", s.base, "-scenarios", "webhooks", "-json"}
	if code := loadtest.Main(context.Background(), args, &stdout, &stderr); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	var rep struct {
		Rows  *[]json.RawMessage
		Notes []string
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, stdout.String())
	}
	if rep.Rows == nil || len(*rep.Rows) != 0 || len(rep.Notes) != 1 {
		t.Errorf("want no rows, as an empty list, and a note:\n%s", stdout.String())
	}
}

func TestTheLoadToolAdvisesALongerDurationOnlyForARowWithoutErrors(t *testing.T) {
	// The day's limit runs out while the quotes are read: the rows after it have only 429s to show.
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_RATE_LIMIT_PER_DAY": "40"})
	cfg := loadtest.DefaultConfig()
	cfg.URL, cfg.Scenarios = s.base, []string{loadtest.GetQuote}
	cfg.Clients, cfg.Duration, cfg.Warmup = 2, 300*time.Millisecond, 0
	rep, err := loadtest.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, row := range rep.Rows {
		if row.Count > 0 || row.ErrorCount() == 0 {
			continue
		}
		failed++
		for _, n := range rep.Notes {
			if strings.Contains(n, row.Name) && strings.Contains(n, "longer -duration") {
				t.Errorf("a row of nothing but errors %v has the note %q", row.Errors, n)
			}
		}
	}
	if failed == 0 {
		t.Fatalf("no row failed throughout: %+v", rep.Rows)
	}
}

// The tool tops the forwarder's AWB stock up to -awb-stock in blocks of
// ten thousand; a floor that is no multiple of a block takes one block
// more, and the booking scenario runs on a fresh store (it stopped, the
// stock below the floor after the last block asked).
func TestTheLoadToolTopsTheStockUpToAFloorThatIsNoMultipleOfItsBlock(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	cfg := loadtest.DefaultConfig()
	cfg.URL, cfg.Scenarios = s.base, []string{loadtest.Booking}
	cfg.Clients, cfg.Duration, cfg.Warmup, cfg.Bookings = 2, 500*time.Millisecond, 0, 2
	cfg.AWBStock = 10050
	rep, err := loadtest.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) > 0 || len(rep.Rows) != 1 {
		t.Errorf("notes %q, rows %+v; want the booking row alone", rep.Notes, rep.Rows)
	}
}

// A run interrupted while it registers its webhook subscriptions deletes
// every one cargod made, that whose answer was on its way included: one
// cut short was made, its id never read, and left behind.
func TestARunInterruptedWhileItSubscribesLeavesNoSubscriptionBehind(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	target, err := url.Parse(s.base)
	if err != nil {
		t.Fatal(err)
	}
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	// The first registration is made, and its answer held until the run
	// is interrupted.
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/webhooks" {
			proxy.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r.WithContext(context.WithoutCancel(r.Context())))
		interrupt()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer front.Close()
	cfg := loadtest.DefaultConfig()
	cfg.URL, cfg.Scenarios = front.URL, []string{loadtest.Webhooks}
	cfg.Clients, cfg.Subscribers, cfg.RFQs, cfg.Sequential = 2, 3, 5, 1
	loadtest.Run(ctx, cfg) // interrupted: its report is not the point
	var list struct {
		Webhooks []struct{ WebhookID, URL string }
	}
	s.do(t, request{method: "GET", path: "/api/webhooks", token: s.demoToken(t, "demo-forwarder")}).json(t, &list)
	if len(list.Webhooks) != 0 {
		t.Errorf("left behind: %+v", list.Webhooks)
	}
}
