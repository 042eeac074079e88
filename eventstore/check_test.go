package eventstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// checkAll runs Check over the whole stream and returns its problems as
// "sequence check: problem" lines, and the last sequence it read.
func checkAll(t *testing.T, s *Store) ([]string, uint64) {
	t.Helper()
	ctx := context.Background()
	last, err := s.LastSequence(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	var read uint64
	err = s.Check(ctx, last, func(seq uint64) { read = seq }, func(p domain.StreamProblem) {
		problems = append(problems, fmt.Sprintf("%d %s %s: %s", p.Sequence, p.Aggregate, p.Check, p.Problem))
	})
	if err != nil {
		t.Fatal(err)
	}
	return problems, read
}

func TestCheckFindsNothingWrongWithEventsTheStoreWrote(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	q1, q2 := domain.Aggregate{Type: "quote", ID: "q1"}, domain.Aggregate{Type: "quote", ID: "q2"}
	seqs, err := s.Append(ctx, q1, 0, []domain.Envelope{event("QuoteRequested", "e1", "c1", `{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, q2, 0, []domain.Envelope{event("QuoteRequested", "e2", "c2", `{}`)}); err != nil {
		t.Fatal(err)
	}
	// A decision of two events: the second carries no expectation.
	if _, err := s.Append(ctx, q1, seqs[0], []domain.Envelope{event("QuotePriced", "e3", "c3", `{}`), event("QuotePriced", "e4", "c3", `{}`)}); err != nil {
		t.Fatal(err)
	}
	problems, read := checkAll(t, s)
	if len(problems) > 0 || read != 4 {
		t.Errorf("check read up to %d and found %q; want 4 events and nothing", read, problems)
	}
}

func TestCheckReportsEventsThatDoNotDecodeOrHaveNoEnvelope(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "q1"}, 0, []domain.Envelope{event("QuoteRequested", "e1", "c1", `{}`)}); err != nil {
		t.Fatal(err)
	}
	// Published around the store: garbage without an envelope, and an
	// envelope of a known type around a payload that is not its JSON.
	if _, err := s.js.Publish(ctx, s.prefix+".evt.quote.garbage", []byte("\x00garbage")); err != nil {
		t.Fatal(err)
	}
	h := header(event("QuoteRequested", "e3", "c3", ""))
	h.Set(jetstream.MsgIDHeader, "e3")
	if _, err := s.js.PublishMsg(ctx, &nats.Msg{Subject: s.prefix + ".evt.quote.bad", Header: h, Data: []byte(`{"quoteId": 7`)}); err != nil {
		t.Fatal(err)
	}
	problems, read := checkAll(t, s)
	got := strings.Join(problems, "\n")
	for _, want := range []string{
		"2 quote/garbage envelope: eventstore: sequence 2 on " + s.prefix + ".evt.quote.garbage: bad Cargo-Schema-Version header",
		"3 quote/bad decodes: domain: decoding QuoteRequested:",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems:\n%s\nwant one starting %q", got, want)
		}
	}
	if len(problems) != 2 || read != 3 {
		t.Errorf("check read up to %d and found %d problems, want 3 events and 2: %s", read, len(problems), got)
	}
}

// An event stored with an expectation about another subject's last event
// (Nats-Expected-Last-Subject-Sequence-Subject) claims to follow on from
// an event its aggregate does not have: the store never writes that.
func TestCheckReportsAnAggregateWhoseEventsDoNotFollowOn(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "q1"}, 0, []domain.Envelope{event("QuoteRequested", "e1", "c1", `{}`)}); err != nil {
		t.Fatal(err)
	}
	h := header(event("QuotePriced", "e2", "c2", `{}`))
	h.Set(jetstream.MsgIDHeader, "e2")
	h.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	h.Set("Nats-Expected-Last-Subject-Sequence-Subject", s.prefix+".evt.quote.other")
	if _, err := s.js.PublishMsg(ctx, &nats.Msg{Subject: s.prefix + ".evt.quote.q1", Header: h, Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	problems, _ := checkAll(t, s)
	want := "2 quote/q1 sequence: stored as the aggregate's first event, but it has one before, at sequence 1"
	if strings.Join(problems, "\n") != want {
		t.Errorf("problems = %q, want %q", problems, want)
	}
}
