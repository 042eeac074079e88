package loadtest

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"sync"
)

// bare is the yardstick: a net/http server on loopback whose handlers do
// what any JSON handler must (decode what is sent, encode the answer) and
// nothing else, so that ours/bare is the cost of what cargod does on top.
type bare struct {
	url  *url.URL
	srv  *http.Server
	mu   sync.Mutex
	body any // what GET answers: a quote as cargod answers it
}

func startBare() (*bare, error) {
	b := &bare{}
	mux := http.NewServeMux()
	// POST /echo answers with the JSON body it was sent.
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		var v any
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(v)
	})
	// GET /quote answers with the body set by serve.
	mux.HandleFunc("GET /quote", func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		v := b.body
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	})
	base, srv, err := serveLoopback(mux)
	if err != nil {
		return nil, err
	}
	b.srv = srv
	b.url, err = url.Parse(base)
	return b, err
}

// serveLoopback serves h on a free loopback port until the server is
// closed.
func serveLoopback(h http.Handler) (string, *http.Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln) // returns ErrServerClosed when the server is closed
	return "http://" + ln.Addr().String(), srv, nil
}

// serve sets the JSON that GET /quote answers with.
func (b *bare) serve(body []byte) error {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	b.mu.Lock()
	b.body = v
	b.mu.Unlock()
	return nil
}
