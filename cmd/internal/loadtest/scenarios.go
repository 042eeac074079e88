package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// settleTimeout bounds the wait for a reactor: long enough for the
// pricing reactor to work through the RFQs of earlier scenarios.
const settleTimeout = 2 * time.Minute

// readmeRFQ is the RFQ of the README's quick start.
func readmeRFQ() map[string]any {
	return map[string]any{
		"shipper": map[string]any{"name": "ACME Machine Tools"}, "consignee": map[string]any{"name": "Globex Inc"},
		"routing": map[string]any{"origin": "FRA", "destination": "JFK"},
		"pieces":  2, "grossWeightKg": 350.5,
		"commodity":    map[string]any{"code": "GEN", "description": "Machine parts"},
		"dimensionsCm": []any{map[string]any{"l": 120, "w": 80, "h": 100, "pieces": 2}},
		"shc":          []string{"EAP"},
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings and numbers are marshalled
	}
	return b
}

// resource is what the tool reads of a quote or a booking.
type resource struct {
	ID              string `json:"id"`
	Status          string `json:"status"`
	RejectionReason string `json:"rejectionReason"`
	PriceOptions    []struct {
		FlightID string `json:"flightId"`
	} `json:"priceOptions"`
}

// fileRFQ posts an RFQ and returns the new quote's id.
func (b *bench) fileRFQ(ctx context.Context, body []byte) (string, error) {
	out, err := b.fwd.do(ctx, "POST", "/api/quotes", body, http.StatusCreated)
	if err != nil {
		return "", err
	}
	var q resource
	if err := json.Unmarshal(out, &q); err != nil || q.ID == "" {
		return "", fmt.Errorf("POST /api/quotes: 201 without a quote id: %s", clip(out))
	}
	return q.ID, nil
}

// awaitStatus waits until the quote or booking at path has the status
// want, as a client would: a long poll (If-None-Match with the version it
// holds, Prefer: wait) answers the moment the resource changes, so the
// latency is measured exactly and waiting clients send no polls. A
// rejection is a failure of the kind "rejected: <reason>".
func (a *api) awaitStatus(ctx context.Context, path, want string) (resource, error) {
	deadline := time.Now().Add(settleTimeout)
	var r resource
	version := ""
	for {
		header := http.Header{}
		if version != "" {
			header.Set("If-None-Match", version)
			header.Set("Prefer", "wait=20")
		}
		status, out, answer, err := a.exchange(ctx, "GET", path, nil, header)
		switch {
		case err != nil:
			return r, err
		case status == http.StatusOK:
			r = resource{}
			if err := json.Unmarshal(out, &r); err != nil {
				return r, fmt.Errorf("GET %s: the answer is not the JSON expected: %v: %s", path, err, clip(out))
			}
			version = answer.Get("ETag")
		case status != http.StatusNotModified || version == "":
			return r, statusFailure("GET", path, status, out)
		}
		switch {
		case r.Status == want:
			return r, nil
		case r.Status == "rejected":
			return r, &failure{kind: "rejected: " + r.RejectionReason, detail: fmt.Sprintf("%s was rejected: %s", path, r.RejectionReason)}
		case time.Now().After(deadline):
			return r, &failure{kind: "timeout", detail: fmt.Sprintf("%s still %s, not %s, after %s", path, r.Status, want, settleTimeout)}
		case status == http.StatusNotModified && answer.Get("Preference-Applied") == "":
			// A server, or a proxy, that does not wait: poll, gently.
			select {
			case <-ctx.Done():
				return r, ctx.Err()
			case <-time.After(unwaitedPollPause):
			}
		}
	}
}

// unwaitedPollPause is the pause between two looks at a resource when the
// server answered without waiting for a change (an older cargod, or a
// proxy that drops Prefer).
const unwaitedPollPause = 10 * time.Millisecond

// requestRow measures a prepared request per operation, each client
// sending on its own connection to base; req gives a client its request.
func (b *bench) requestRow(ctx context.Context, scenario, name string, base *url.URL, req func(worker int) request, want int) Row {
	conns := make([]conn, b.cfg.Clients)
	for i := range conns {
		conns[i].base = base
	}
	defer func() {
		for i := range conns {
			conns[i].close()
		}
	}()
	return measure(ctx, b.cfg, scenario, name, "req/s", b.cfg.Clients, func(_ context.Context, w int) (time.Duration, error) {
		r := req(w)
		return timed(func() error { return conns[w].send(r, want) })
	})
}

// same gives every client the same request.
func same(r request) func(int) request { return func(int) request { return r } }

// createQuote: durable POST /api/quotes against a bare POST echo.
func (b *bench) createQuote(ctx context.Context) ([]Row, error) {
	body := mustJSON(readmeRFQ())
	ours := b.requestRow(ctx, CreateQuote, "POST /api/quotes", b.server,
		same(prepare(b.server, "POST", "/api/quotes", b.fwd.token, body)), http.StatusCreated)
	bare := b.requestRow(ctx, CreateQuote, "bare POST echo", b.bare.url,
		same(prepare(b.bare.url, "POST", "/echo", "", body)), http.StatusCreated)
	ratio(&ours, bare)
	return []Row{ours, bare}, nil
}

// readQuotes is how many quotes the get-quote scenario reads.
const readQuotes = 20

// getQuote: GET /api/quotes?id= and GET /api/quotes/{id} against a bare
// GET answering with the same quote.
func (b *bench) getQuote(ctx context.Context) ([]Row, error) {
	body := mustJSON(readmeRFQ())
	ids := make([]string, readQuotes)
	for i := range ids {
		var err error
		if ids[i], err = b.fileRFQ(ctx, body); err != nil {
			return nil, err
		}
	}
	one, err := b.fwd.do(ctx, "GET", "/api/quotes/"+ids[0], nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	if err := b.bare.serve(one); err != nil {
		return nil, err
	}
	// Each client reads its own quote of the few.
	gets := func(path string) func(int) request {
		reqs := make([]request, len(ids))
		for i, id := range ids {
			reqs[i] = prepare(b.server, "GET", fmt.Sprintf(path, id), b.fwd.token, nil)
		}
		return func(w int) request { return reqs[w%len(reqs)] }
	}
	byQuery := b.requestRow(ctx, GetQuote, "GET /api/quotes?id=", b.server, gets("/api/quotes?id=%s"), http.StatusOK)
	byPath := b.requestRow(ctx, GetQuote, "GET /api/quotes/{id}", b.server, gets("/api/quotes/%s"), http.StatusOK)
	bare := b.requestRow(ctx, GetQuote, "bare GET JSON", b.bare.url, same(prepare(b.bare.url, "GET", "/quote", "", nil)), http.StatusOK)
	ratio(&byQuery, bare)
	ratio(&byPath, bare)
	return []Row{byQuery, byPath, bare}, nil
}
