package loadtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// deliveryTimeout bounds the wait for the deliveries of a row once its
// RFQs are in.
const deliveryTimeout = time.Minute

// receiver takes webhook deliveries on loopback and verifies their
// Standard Webhooks signatures.
type receiver struct {
	url      string
	srv      *http.Server
	verifier *standardwebhooks.Webhook

	mu       sync.Mutex
	seen     map[string]bool        // webhook-ids taken, so a retry is not counted twice
	arrivals map[string][]time.Time // by quote id, one per subscription delivered
	bad      []string               // deliveries that did not verify, since the last take
	count    atomic.Int64           // verified deliveries, for progress
	arrived  chan struct{}          // a token after each verified delivery, for waiters
}

func startReceiver(secret string) (*receiver, error) {
	v, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, err
	}
	rc := &receiver{verifier: v, seen: map[string]bool{}, arrivals: map[string][]time.Time{}, arrived: make(chan struct{}, 1)}
	rc.url, rc.srv, err = serveLoopback(http.HandlerFunc(rc.deliver))
	return rc, err
}

func (rc *receiver) deliver(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = rc.verifier.Verify(body, r.Header)
	}
	var p struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err == nil {
		err = json.Unmarshal(body, &p)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err != nil {
		rc.bad = append(rc.bad, fmt.Sprintf("delivery %s to %s: %v", r.Header.Get("webhook-id"), r.URL.Path, err))
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if id := r.Header.Get("webhook-id"); !rc.seen[id] {
		rc.seen[id] = true
		rc.arrivals[p.Data.ID] = append(rc.arrivals[p.Data.ID], arrived)
		rc.count.Add(1)
		select {
		case rc.arrived <- struct{}{}:
		default: // a waiter has a token to wake it already
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// delivered is the arrivals of the deliveries of a quote so far.
func (rc *receiver) delivered(quoteID string) []time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.arrivals[quoteID]
}

// tally adds to t, for each quote filed at its time in sent, the latency
// of each delivery, the deliveries missing (wanted a quote), and the
// deliveries that did not verify; it returns when the last delivery came.
func (rc *receiver) tally(t *tally, sent map[string]time.Time, wanted int) (last time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for id, at := range sent {
		got := rc.arrivals[id]
		for _, arrived := range got {
			// A delivery may come before the client has read the 201:
			// that is no delay at all.
			t.ok(max(0, arrived.Sub(at)))
			if arrived.After(last) {
				last = arrived
			}
		}
		if missing := wanted - len(got); missing > 0 {
			t.fail(&failure{kind: "missing", detail: fmt.Sprintf("quote %s: %d of %d deliveries did not come within %s", id, missing, wanted, deliveryTimeout)})
		}
	}
	for _, bad := range rc.bad {
		t.fail(&failure{kind: "bad signature", detail: bad})
	}
	rc.bad = nil
	return last
}

// webhooks: cfg.Subscribers subscriptions to quote.created on a local
// verifying receiver; a burst of cfg.RFQs from cfg.Clients clients, then
// cfg.Sequential RFQs one at a time, each waiting for its deliveries. The
// latency is from an RFQ's 201 to a delivery's arrival.
func (b *bench) webhooks(ctx context.Context) ([]Row, error) {
	key := make([]byte, 32)
	rand.Read(key)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	rc, err := startReceiver(secret)
	if err != nil {
		return nil, err
	}
	defer rc.srv.Close()
	var subscriptions []string
	// Deleted even when the run is interrupted, before the receiver goes.
	defer func() { b.unsubscribe(context.WithoutCancel(ctx), subscriptions) }()
	for i := range b.cfg.Subscribers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var wh struct {
			WebhookID string `json:"webhookId"`
		}
		sub := map[string]any{"url": fmt.Sprintf("%s/hooks/%d", rc.url, i), "events": []string{"quote.created"}, "secret": secret}
		// Not cut short by an interruption: cargod may have made the
		// subscription, and the answer names it, for the cleanup to
		// delete (a registration cut short left one behind, unnoted).
		out, err := b.fwd.do(context.WithoutCancel(ctx), "POST", "/api/webhooks", mustJSON(sub), http.StatusCreated)
		// The whole answer, not the error's clipped copy of it: the
		// field's code comes last.
		if err != nil && bytes.Contains(out, []byte(`"URL_NOT_ALLOWED"`)) {
			return nil, fmt.Errorf("cargod refuses a webhook on loopback: start it with CARGO_WEBHOOK_ALLOW_PRIVATE=true (%w)", err)
		}
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(out, &wh); err != nil || wh.WebhookID == "" {
			return nil, fmt.Errorf("POST /api/webhooks: 201 without a webhook id: %s", clip(out))
		}
		subscriptions = append(subscriptions, wh.WebhookID)
	}
	body := mustJSON(readmeRFQ())

	burst := newTally()
	name := fmt.Sprintf("%d RFQs from %d clients, %d subscribers", b.cfg.RFQs, b.cfg.Clients, b.cfg.Subscribers)
	stop := progress(b.cfg.Progress, Webhooks+" "+name, "deliveries", &rc.count, &burst.failed)
	start := time.Now()
	var mu sync.Mutex
	sent := map[string]time.Time{}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range b.cfg.Clients {
		wg.Go(func() {
			for next.Add(1) <= int64(b.cfg.RFQs) && ctx.Err() == nil {
				id, err := b.fileRFQ(ctx, body)
				if err != nil {
					burst.fail(err)
					continue
				}
				mu.Lock()
				sent[id] = time.Now()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b.awaitDeliveries(ctx, rc, len(sent)*b.cfg.Subscribers)
	stop()
	last := rc.tally(burst, sent, b.cfg.Subscribers)
	burstRow := burst.row(Webhooks, name, "deliveries/s", last.Sub(start))

	one := newTally()
	name = fmt.Sprintf("one RFQ at a time, %d RFQs, %d subscribers", b.cfg.Sequential, b.cfg.Subscribers)
	start = time.Now()
	stop = progress(b.cfg.Progress, Webhooks+" "+name, "deliveries", &one.done, &one.failed)
	for i := 0; i < b.cfg.Sequential && ctx.Err() == nil; i++ {
		id, err := b.fileRFQ(ctx, body)
		if err != nil {
			one.fail(err)
			continue
		}
		at := time.Now()
		rc.await(ctx, func() bool { return len(rc.delivered(id)) >= b.cfg.Subscribers })
		rc.tally(one, map[string]time.Time{id: at}, b.cfg.Subscribers)
	}
	stop()
	oneRow := one.row(Webhooks, name, "deliveries/s", time.Since(start))
	return []Row{burstRow, oneRow}, nil
}

// awaitDeliveries waits until the receiver has want deliveries in all, or
// deliveryTimeout.
func (b *bench) awaitDeliveries(ctx context.Context, rc *receiver, want int) {
	rc.await(ctx, func() bool { return rc.count.Load() >= int64(want) })
}

// await waits, at most deliveryTimeout, until done holds, checking after
// each delivery rather than spinning: the tool shares the machine's cores
// with the server it measures.
func (rc *receiver) await(ctx context.Context, done func() bool) {
	deadline := time.NewTimer(deliveryTimeout)
	defer deadline.Stop()
	for !done() {
		select {
		case <-rc.arrived:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// unsubscribe deletes the subscriptions the run made.
func (b *bench) unsubscribe(ctx context.Context, ids []string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, id := range ids {
		if _, err := b.fwd.do(ctx, "DELETE", "/api/webhooks/"+id, nil, http.StatusNoContent); err != nil {
			b.note("webhooks: subscription %s is left behind: %v", id, err)
		}
	}
}
