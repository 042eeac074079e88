package eventstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/cargostream/cargostream/projections"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// A message deleted from a stream made by hand that allows it leaves its
// sequence without an event. A page of the audit log that shows it is
// still answered, with the entry as the index has it (time, action,
// resource, actor) and nothing the event held; the other entries are
// whole. Such a page used to fail on every read, a 503 that never
// cleared.
func TestAnAuditPageShowsAnEntryWhoseEventWasDeleted(t *testing.T) {
	ctx := context.Background()
	store, stream, seqs, at := handMadeStream(t)
	audit := rebuildReadModels(ctx, t, store, seqs[2], nil).Audit
	if err := stream.DeleteMsg(ctx, seqs[1]); err != nil {
		t.Fatal(err)
	}

	entries, total, err := audit.Entries(ctx, store, projections.AuditFilter{}, 1, 100)
	if err != nil || total != 3 || len(entries) != 3 {
		t.Fatalf("the page = %d of %d entries, %v; want 3", len(entries), total, err)
	}
	// Newest first.
	deleted := projections.AuditEntry{Timestamp: at.Add(time.Minute), Action: domain.ActionCreate, Resource: domain.AggregateQuote,
		UserID: "client:org-1", Tenant: "org-1", Owner: "org-1"}
	if entries[1] != deleted {
		t.Errorf("the entry of the deleted event = %+v, want %+v", entries[1], deleted)
	}
	for i, e := range []projections.AuditEntry{entries[2], entries[0]} {
		if want := fmt.Sprint("q", 2*i); e.ID != fmt.Sprint("e", 2*i) || e.ResourceID != want || e.IPAddress != "192.0.2.7" || !e.Timestamp.Equal(at.Add(time.Duration(2*i)*time.Minute)) {
			t.Errorf("the entry of event %d = %+v", 2*i, e)
		}
	}
}

// handMadeStream is a store on a stream made by hand, which allows
// deletes, holding three quotes' RFQs, a minute apart from at.
func handMadeStream(t *testing.T) (*eventstore.Store, jetstream.Stream, []uint64, time.Time) {
	t.Helper()
	srv := natstest.Start(t, &server.Options{Port: natstest.FreePorts(t, 1)[0]})
	ctx := context.Background()
	stream := natstest.HandMadeStream(t, srv.ClientURL(), "HAND", "hand.evt.>")
	store, err := eventstore.Open(ctx, eventstore.Options{URL: srv.ClientURL(), Stream: "HAND", Existing: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	var seqs []uint64
	for i := range 3 {
		e := domain.QuoteRequested{QuoteID: fmt.Sprint("q", i), OrganizationID: "org-1", Origin: "FRA", Destination: "JFK"}
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		appended, err := store.Append(ctx, domain.Aggregate{Type: domain.AggregateQuote, ID: e.QuoteID}, 0, []domain.Envelope{{
			Type: e.EventType(), SchemaVersion: 1, EventID: fmt.Sprint("e", i), CommandID: fmt.Sprint("c", i), Actor: "client:org-1",
			Tenant: "org-1", ClientIP: "192.0.2.7", OccurredAt: at.Add(time.Duration(i) * time.Minute), Data: data}})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, appended...)
	}
	return store, stream, seqs, at
}

// A stream that lacks events (deleted from a stream made by hand that
// allows it, or lost with a damaged file) is replayed past them, loudly:
// the read models are built without them and the replica is ready, and
// the stream check lists the gap. The replay waited for them, trying
// again every second for good, and verify failed instead of listing it.
func TestAReplayGoesPastEventsTheStreamLacksAndTheCheckListsThem(t *testing.T) {
	for _, deleted := range []int{1, 2} { // of the three: one in the middle, the last
		t.Run(fmt.Sprint("event ", deleted+1, " of 3 deleted"), func(t *testing.T) {
			store, stream, seqs, _ := handMadeStream(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			gone := seqs[deleted]
			if err := stream.DeleteMsg(ctx, gone); err != nil {
				t.Fatal(err)
			}
			// Missing: the sequences not held, while the one after them
			// is, or the stream ends with them.
			for _, tt := range []struct {
				from, to uint64
				want     bool
			}{{gone, gone, true}, {seqs[0], gone, false}, {seqs[2] + 1, seqs[2] + 2, false}} {
				if got, err := store.Missing(ctx, tt.from, tt.to); err != nil || got != tt.want {
					t.Errorf("Missing(%d, %d) = %v, %v; want %v", tt.from, tt.to, got, err, tt.want)
				}
			}
			var logged lockedbuf.Buffer
			models := projections.NewModels()
			p := projections.NewProjector(store, slog.New(slog.NewTextHandler(&logged, nil)), models.All()...)
			done := make(chan struct{})
			go func() { defer close(done); p.Run(ctx) }()
			defer func() { cancel(); <-done }()
			if err := p.WaitFor(ctx, seqs[2]); err != nil || !p.CaughtUp() {
				t.Fatalf("the read models did not reach %d: %v\n%s", seqs[2], err, logged.String())
			}
			if want := fmt.Sprintf("events are missing from the stream (deleted, or lost with a damaged file); the read models go on without them, and cargoctl verify lists the gap\" from=%d to=%d", gone, gone); !strings.Contains(logged.String(), want) {
				t.Errorf("logged:\n%s\nwant a line with %s", logged.String(), want)
			}
			who := domain.Principal{OrganizationID: "org-1", Role: domain.RoleForwarder}
			for i := range 3 {
				if _, found := models.Quotes.Get(who, fmt.Sprint("q", i)); found != (i != deleted) {
					t.Errorf("quote q%d found: %v", i, found)
				}
			}
			var problems []string
			if err := store.Check(ctx, seqs[2], func(uint64) {}, func(p domain.StreamProblem) {
				if p.Check == domain.CheckSequence {
					problems = append(problems, p.Problem)
				}
			}); err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("the stream has no event at sequence %d", gone); len(problems) != 1 || problems[0] != want {
				t.Errorf("the check found %q, want %q", problems, want)
			}
			// And the events stored since are applied.
			data, _ := json.Marshal(domain.QuoteRequested{QuoteID: "q3", OrganizationID: "org-1", Origin: "FRA", Destination: "JFK"})
			next, err := store.Append(ctx, domain.Aggregate{Type: domain.AggregateQuote, ID: "q3"}, 0, []domain.Envelope{{
				Type: "QuoteRequested", SchemaVersion: 1, EventID: "e3", CommandID: "c3", Actor: "client:org-1", OccurredAt: time.Now(), Data: data}})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.WaitFor(ctx, next[0]); err != nil {
				t.Errorf("the event stored after: %v", err)
			}
		})
	}
}

// A stream whose events from the read models' position on are all gone
// hands over no message at all: the replay ends all the same, where it
// waited for one for good (a replica restarted from a snapshot taken
// before its stream's last events were lost was never ready).
func TestAReplayOfAStreamWhoseLastEventsAreAllGoneEnds(t *testing.T) {
	store, stream, seqs, _ := handMadeStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, seq := range seqs {
		if err := stream.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	var logged lockedbuf.Buffer
	p := projections.NewProjector(store, slog.New(slog.NewTextHandler(&logged, nil)), projections.NewQuotes())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := p.WaitFor(ctx, seqs[2]); err != nil || !p.CaughtUp() {
		t.Fatalf("the read models did not reach %d: %v\n%s", seqs[2], err, logged.String())
	}
	if want := fmt.Sprintf(`from=%d to=%d`, seqs[0], seqs[2]); !strings.Contains(logged.String(), want) {
		t.Errorf("logged:\n%s\nwant the gap %s", logged.String(), want)
	}
}

// Missing tells a gap of any length with one request to the stream (and
// one for its state), not one a sequence: a damaged file may lose
// thousands of events, each asked for again at every replay.
func TestMissingAsksOnceWhateverTheGap(t *testing.T) {
	store, stream, seqs, _ := handMadeStream(t)
	ctx := context.Background()
	for i := range 20 { // more events: all but the last deleted, with the first two
		id := fmt.Sprint("x", i)
		appended, err := store.Append(ctx, domain.Aggregate{Type: domain.AggregateQuote, ID: id}, 0, []domain.Envelope{{
			Type: "QuoteRequested", SchemaVersion: 1, EventID: id, CommandID: id, OccurredAt: time.Now(), Data: []byte(`{}`)}})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, appended...)
	}
	last := seqs[len(seqs)-1]
	for _, seq := range seqs[:len(seqs)-1] {
		if seq != seqs[2] {
			if err := stream.DeleteMsg(ctx, seq); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tt := range []struct {
		from, to uint64
		want     bool
	}{{seqs[0], seqs[1], true}, {seqs[0], seqs[2], false}, {seqs[3], last - 1, true}, {seqs[3], last, false}} {
		before := eventstore.MessagesSent(store)
		got, err := store.Missing(ctx, tt.from, tt.to)
		if err != nil || got != tt.want {
			t.Errorf("Missing(%d, %d) = %v, %v; want %v", tt.from, tt.to, got, err, tt.want)
		}
		if n := eventstore.MessagesSent(store) - before; n > 2 {
			t.Errorf("Missing(%d, %d) made %d requests, want 2 at most", tt.from, tt.to, n)
		}
	}
}
