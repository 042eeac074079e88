package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The benchmarks talk real HTTP on loopback to cargod on its embedded
// server (every write synced to disk), without the OpenAPI checks of the
// tests. BenchmarkBareJSON is the yardstick: a net/http handler that only
// writes a JSON body of the same size, so ours/bare is our overhead.
//
//	go test ./cmd/cargod -run '^$' -bench . -benchmem

func benchServer(b *testing.B) (*testServer, string, *http.Client) {
	s := startServer(b, b.TempDir(), map[string]string{"CARGO_LOG_LEVEL": "error"})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return s, s.demoToken(b, "demo-forwarder"), client
}

func send(b *testing.B, client *http.Client, method, url, token string, body []byte, want int) []byte {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("%s %s = %d %s", method, url, resp.StatusCode, out)
	}
	return out
}

func reportOps(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkCreateQuote(b *testing.B) {
	s, tok, client := benchServer(b)
	body, _ := json.Marshal(rfq())
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			send(b, client, "POST", s.base+"/api/quotes", tok, body, http.StatusCreated)
		}
	})
	reportOps(b)
}

func BenchmarkGetQuote(b *testing.B) {
	s, tok, client := benchServer(b)
	body, _ := json.Marshal(rfq())
	var q quote
	json.Unmarshal(send(b, client, "POST", s.base+"/api/quotes", tok, body, http.StatusCreated), &q)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			send(b, client, "GET", s.base+"/api/quotes/"+q.ID, tok, nil, http.StatusOK)
		}
	})
	reportOps(b)
}

// BenchmarkBareJSON answers with a quote-sized JSON body and nothing else.
func BenchmarkBareJSON(b *testing.B) {
	payload, _ := json.Marshal(quote{ID: "3eeb7d56-42f5-53b2-b5c5-09311e2dc3ea", Status: "pending", Origin: "FRA", Destination: "JFK",
		Pieces: 2, Weight: 350.5, Volume: 1.92, Commodity: "GEN", SHC: []string{"EAP"}, CreatedAt: time.Now(), PriceOptions: []any{}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		var v map[string]any
		json.Unmarshal(payload, &v) // decode and encode once, as a handler would
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			send(b, client, "GET", srv.URL, "x", nil, http.StatusOK)
		}
	})
	reportOps(b)
}
