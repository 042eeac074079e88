package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore/natstest"
)

func TestBadCommandLinesExitWithStatus2AndSayWhy(t *testing.T) {
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"-clients", "0"}, "-clients must be at least 1"},
		{[]string{"-bookings", "-3"}, "-bookings must be at least 1"},
		{[]string{"-awb-stock", "0"}, "-awb-stock must be at least 1"},
		{[]string{"-subscribers", "26"}, "at most 25"},
		{[]string{"-duration", "0s"}, "-duration must be above 0"},
		{[]string{"-duration", "soon"}, "invalid value"},
		{[]string{"-scenarios", "create-quote,nap"}, `unknown scenario "nap"`},
		{[]string{"-url", "127.0.0.1:8080"}, "not an http(s) URL"},
		{[]string{"-bogus"}, "flag provided but not defined"},
		{[]string{"booking"}, `unexpected argument "booking"`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			if code := Main(context.Background(), tt.args, &stdout, &stderr); code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tt.says) {
				t.Errorf("stderr does not say %q:\n%s", tt.says, stderr.String())
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout: %s", stdout.String())
			}
		})
	}
}

func TestHelpExitsWithStatus0(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := Main(context.Background(), []string{"-help"}, &stdout, &stderr); code != 0 {
		t.Errorf("exit status %d", code)
	}
	if !strings.Contains(stderr.String(), "CARGO_WEBHOOK_ALLOW_PRIVATE=true") {
		t.Errorf("the usage does not say how to start cargod:\n%s", stderr.String())
	}
}

func TestFlagsSetTheRun(t *testing.T) {
	cfg, err := ParseArgs([]string{"-url", "http://127.0.0.1:9000", "-clients", "8", "-duration", "2s", "-warmup", "0s",
		"-scenarios", "webhooks,get-quote", "-rfqs", "200", "-awb-stock", "500", "-json"}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.URL != "http://127.0.0.1:9000" || cfg.Clients != 8 || cfg.Duration != 2*time.Second || cfg.Warmup != 0 ||
		strings.Join(cfg.Scenarios, ",") != "webhooks,get-quote" || cfg.RFQs != 200 || !cfg.JSON || cfg.Bookings != 300 || cfg.AWBStock != 500 {
		t.Errorf("%+v", cfg)
	}
}

func TestAServerThatDoesNotAnswerFailsTheRunWithStatus1(t *testing.T) {
	// A port held bound and not listening refuses for sure.
	url := fmt.Sprintf("http://127.0.0.1:%d", natstest.RefusingPort(t))
	var stdout, stderr strings.Builder
	if code := Main(context.Background(), []string{"-url", url}, &stdout, &stderr); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "is cargod running at "+url) {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestPercentilesAreNearestRank(t *testing.T) {
	var l []time.Duration
	for i := 1; i <= 200; i++ {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	if p := percentile(l, 0.5); p != 100*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := percentile(l, 0.99); p != 198*time.Millisecond {
		t.Errorf("p99 = %v", p)
	}
	if p := percentile(l[:1], 0.99); p != time.Millisecond {
		t.Errorf("p99 of one = %v", p)
	}
	if p := percentile(nil, 0.99); p != 0 {
		t.Errorf("p99 of none = %v", p)
	}
}

// An interrupt before any scenario started (while logging in) still
// prints a report whose rows are an empty list, not null.
func TestARunInterruptedBeforeItsScenariosPrintsNoRowsAsAnEmptyList(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not cargod", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr strings.Builder
	if code := Main(ctx, []string{"-url", srv.URL, "-json"}, &stdout, &stderr); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if rows, ok := rep["rows"].([]any); !ok || len(rows) != 0 {
		t.Errorf("rows = %#v, want []", rep["rows"])
	}
}
