package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

const (
	// pollEvery is how often a client asks whether a booking is confirmed
	// or a quote priced: the resolution of those latencies.
	pollEvery = 2 * time.Millisecond
	// settleTimeout bounds the wait for a reactor: long enough for the
	// pricing reactor to work through the RFQs of earlier scenarios.
	settleTimeout = 2 * time.Minute
)

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

// awaitStatus polls the quote or booking at path until its status is
// want. A rejection is a failure of the kind "rejected: <reason>".
func (a *api) awaitStatus(ctx context.Context, path, want string) (resource, error) {
	deadline := time.Now().Add(settleTimeout)
	for {
		var r resource
		if err := a.json(ctx, "GET", path, nil, http.StatusOK, &r); err != nil {
			return r, err
		}
		switch {
		case r.Status == want:
			return r, nil
		case r.Status == "rejected":
			return r, &failure{kind: "rejected: " + r.RejectionReason, detail: fmt.Sprintf("%s was rejected: %s", path, r.RejectionReason)}
		case time.Now().After(deadline):
			return r, &failure{kind: "timeout", detail: fmt.Sprintf("%s still %s, not %s, after %s", path, r.Status, want, settleTimeout)}
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

// createQuote: durable POST /api/quotes against a bare POST echo.
func (b *bench) createQuote(ctx context.Context) ([]Row, error) {
	body := mustJSON(readmeRFQ())
	ours := measure(ctx, b.cfg, CreateQuote, "POST /api/quotes", "req/s", b.cfg.Clients, func(ctx context.Context, _ int) (time.Duration, error) {
		return timed(func() error { _, err := b.fwd.do(ctx, "POST", "/api/quotes", body, http.StatusCreated); return err })
	})
	bare := measure(ctx, b.cfg, CreateQuote, "bare POST echo", "req/s", b.cfg.Clients, func(ctx context.Context, _ int) (time.Duration, error) {
		return timed(func() error { _, err := b.bareAPI.do(ctx, "POST", "/echo", body, http.StatusCreated); return err })
	})
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
	get := func(path func(id string) string) op {
		return func(ctx context.Context, worker int) (time.Duration, error) {
			p := path(ids[worker%len(ids)])
			return timed(func() error { _, err := b.fwd.do(ctx, "GET", p, nil, http.StatusOK); return err })
		}
	}
	byQuery := measure(ctx, b.cfg, GetQuote, "GET /api/quotes?id=", "req/s", b.cfg.Clients, get(func(id string) string { return "/api/quotes?id=" + id }))
	byPath := measure(ctx, b.cfg, GetQuote, "GET /api/quotes/{id}", "req/s", b.cfg.Clients, get(func(id string) string { return "/api/quotes/" + id }))
	bare := measure(ctx, b.cfg, GetQuote, "bare GET JSON", "req/s", b.cfg.Clients, func(ctx context.Context, _ int) (time.Duration, error) {
		return timed(func() error { _, err := b.bareAPI.do(ctx, "GET", "/quote", nil, http.StatusOK); return err })
	})
	ratio(&byQuery, bare)
	ratio(&byPath, bare)
	return []Row{byQuery, byPath, bare}, nil
}
