package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHealth(t *testing.T) {
	notReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"status":"not ready"}`))
	}))
	t.Cleanup(notReady.Close)
	// It answers, ready, only a minute on: a check that did not give up
	// at its --timeout fails on its exit code rather than hang the run.
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
			w.Write([]byte(`{"status":"ready"}`))
		}
	}))
	t.Cleanup(hanging.Close)

	tests := []struct {
		name     string
		args     []string
		wantOut  string
		wantCode int    // 0: no error
		wantErr  string // what the error says, if any
	}{
		{"a ready server passes", []string{"--url", startServer(t)}, `"status":"ready"`, 0, ""},
		{"a server that is not ready fails and its answer is printed", []string{"--url", notReady.URL}, `"not ready"`, 1, "answered 503"},
		{"a server that does not answer in time fails", []string{"--url", hanging.URL, "--timeout", "100ms"}, "", 1,
			"cargod at " + hanging.URL + " did not answer within 100ms"},
		{"a URL that is not http is a usage error", []string{"--url", "nats://127.0.0.1:4222"}, "", 2, "is not an http or https URL"},
		// As in --nats-url: a mistake in the command line, not a server
		// that does not answer.
		{"a port out of range is a usage error", []string{"--url", "http://127.0.0.1:99999"}, "", 2,
			`--url "http://127.0.0.1:99999" has a port outside 1..65535`},
		// A wait of none would fail a healthy server.
		{"a timeout of none is a usage error", []string{"--url", notReady.URL, "--timeout", "0"}, "", 2,
			`--timeout "0": give a wait longer than none`},
		{"a negative timeout is a usage error", []string{"--url", notReady.URL, "--timeout", "-1s"}, "", 2,
			`--timeout "-1s": give a wait longer than none`},
	}
	// Without --url or CARGOCTL_URL, the check finds cargod where
	// CARGO_ADDR tells it to listen, as in the container image.
	ready := strings.TrimPrefix(startServer(t), "http://")
	t.Run("a ready server at CARGO_ADDR passes", func(t *testing.T) {
		out, _, err := runCmd(t, env(map[string]string{"CARGO_ADDR": ready}), "health")
		if err != nil || !strings.Contains(out, `"status":"ready"`) {
			t.Errorf("= %v, printed %q", err, out)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runCmd(t, env(nil), append([]string{"health"}, tt.args...)...)
			code := 0
			if err != nil {
				code = exitCode(err)
			}
			if code != tt.wantCode || !strings.Contains(out, tt.wantOut) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("exit %d (%v), printed %q; want exit %d, %q and an error with %q", code, err, out, tt.wantCode, tt.wantOut, tt.wantErr)
			}
		})
	}
}

func TestTheDefaultURLIsWhereCargodListens(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "http://127.0.0.1:8080"},
		{map[string]string{"CARGO_ADDR": ":9090"}, "http://127.0.0.1:9090"},
		{map[string]string{"CARGO_ADDR": "0.0.0.0:9090"}, "http://127.0.0.1:9090"},
		{map[string]string{"CARGO_ADDR": "[::]:9090"}, "http://127.0.0.1:9090"},
		{map[string]string{"CARGO_ADDR": "[::1]:9090"}, "http://[::1]:9090"},
		{map[string]string{"CARGO_ADDR": "10.0.0.5:9090"}, "http://10.0.0.5:9090"},
		{map[string]string{"CARGO_ADDR": "not an address"}, "http://127.0.0.1:8080"},
		{map[string]string{"CARGO_ADDR": ":9090", "CARGOCTL_URL": "https://cargo.example"}, "https://cargo.example"},
	} {
		if got := defaultURL(env(tt.env)); got != tt.want {
			t.Errorf("with %v: %s, want %s", tt.env, got, tt.want)
		}
	}
}
