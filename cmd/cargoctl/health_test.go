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
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(hanging.Close)

	tests := []struct {
		name     string
		args     []string
		wantOut  string
		wantCode int // 0: no error
	}{
		{"a ready server passes", []string{"--url", startServer(t)}, `"status":"ready"`, 0},
		{"a server that is not ready fails and its answer is printed", []string{"--url", notReady.URL}, `"not ready"`, 1},
		{"a server that does not answer in time fails", []string{"--url", hanging.URL, "--timeout", "100ms"}, "", 1},
		{"a URL that is not http is a usage error", []string{"--url", "nats://127.0.0.1:4222"}, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			out, _, err := runCmd(t, env(nil), append([]string{"health"}, tt.args...)...)
			code := 0
			if err != nil {
				code = exitCode(err)
			}
			if code != tt.wantCode || !strings.Contains(out, tt.wantOut) {
				t.Errorf("exit %d (%v), printed %q; want exit %d and %q", code, err, out, tt.wantCode, tt.wantOut)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}
