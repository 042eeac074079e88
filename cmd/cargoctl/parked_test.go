package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
)

// TestParkedListsWhatAReactorGaveUpOnAndRetryHasItHandled runs a reactor
// whose step fails on one event, as on a running cargod started with
// CARGO_NATS_LISTEN: the event is parked after two tries, the events
// behind it are handled, cargoctl parked lists it, and once the cause is
// fixed cargoctl parked retry has it handled.
func TestParkedListsWhatAReactorGaveUpOnAndRetryHasItHandled(t *testing.T) {
	s, dir := listeningWith(t, testEvents, eventstore.Options{ConsumerAttempts: 2})
	getenv := env(map[string]string{"CARGO_NATS_URL": s.ClientURL(), "CARGO_DATA_DIR": dir})

	// The pricing reactor cannot price q1's request (sequence 1) until
	// its rate card is fixed.
	var fixed atomic.Bool
	handled := make(chan string, len(testEvents)+1)
	ctx, stop := context.WithCancel(context.Background())
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		s.Consume(ctx, "pricing", []string{s.Filter("quote", "")}, 4, func(r domain.Record) error {
			if r.Sequence == 1 && !fixed.Load() {
				return errors.New("no rate card for FRA-JFK\non 2026-11-24")
			}
			handled <- r.EventID
			return nil
		}, func(domain.Record, error) {})
	}()
	defer func() {
		stop()
		<-consumed
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case id := <-handled:
			return id
		case <-time.After(time.Minute):
			t.Fatalf("%s: nothing handled within a minute", what)
			return ""
		}
	}
	// cargoctl parked until its output says done.
	parkedUntil := func(what string, done func(out string) bool) (string, string, error) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			out, errOut, err := runCmd(t, getenv, "parked")
			if err != nil || done(out) {
				return out, errOut, err
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: cargoctl parked still prints %q after a minute", what, out)
			}
		}
	}

	// The later quote events, of q1's aggregate too, are handled.
	if got := []string{next("after the failing event"), next("after the failing event")}; !slices.Contains(got, "e3") || !slices.Contains(got, "e4") {
		t.Fatalf("handled %v first, want e3 and e4", got)
	}
	out, errOut, err := parkedUntil("parking", func(out string) bool { return out != "" })
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || errOut != "" || len(lines) != 2 {
		t.Fatalf("parked = %v, printed\n%s%s", err, out, errOut)
	}
	for _, field := range []string{"PARKED AT", "SEQUENCE", "REACTOR", "AGGREGATE", "TYPE", "ATTEMPTS", "LAST ERROR"} {
		if !strings.Contains(lines[0], field) {
			t.Errorf("heading %q has no %s", lines[0], field)
		}
	}
	if f := strings.Fields(lines[1]); len(f) < 7 || f[1] != "1" || f[2] != "pricing" || f[3] != "quote/q1" || f[4] != "QuoteRequested" || f[5] != "2" ||
		!strings.HasSuffix(lines[1], "no rate card for FRA-JFK on 2026-11-24") {
		t.Errorf("line %q", lines[1])
	}
	out, _, err = runCmd(t, getenv, "parked", "--json")
	var p eventstore.Parked
	if err != nil || json.Unmarshal([]byte(out), &p) != nil || p.Sequence != 1 || p.EventID != "e1" || p.ParkedAt.IsZero() {
		t.Errorf("parked --json = %v, %q", err, out)
	}

	fixed.Store(true)
	// The flags that say where the store is may come before retry, as
	// before an admin command; retry's own after it.
	out, _, err = runCmd(t, env(nil), "parked", "--nats-url", s.ClientURL(), "--data-dir", dir, "retry", "1", "--reactor", "pricing")
	if err != nil || out != "retry asked: 1 pricing quote/q1 QuoteRequested\n" {
		t.Fatalf("parked --nats-url … retry 1 = %v, %q", err, out)
	}
	if got := next("the retry"); got != "e1" {
		t.Fatalf("handled %s on the retry, want e1", got)
	}
	out, errOut, err = parkedUntil("the retry", func(out string) bool { return out == "" })
	if err != nil || out != "" || errOut != "no parked events\n" {
		t.Errorf("parked after the retry = %v, %q %q", err, out, errOut)
	}
	if out, errOut, err := runCmd(t, getenv, "parked", "--json"); err != nil || out != "" || errOut != "no parked events\n" {
		t.Errorf("parked --json after the retry = %v, %q %q, want the same note on stderr", err, out, errOut)
	}

	for _, tt := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"retry"}, "give the sequence of one parked event, or --all", 2},
		{[]string{"retry", "1", "--all"}, "give a sequence or --all, not both", 2},
		{[]string{"retry", "first"}, `"first" is not a stream sequence`, 2},
		{[]string{"retry", "0"}, `"0" is not a stream sequence`, 2},
		{[]string{"retry", "3"}, "no event is parked at sequence 3", 1},
		{[]string{"retry", "3", "--reactor", "webhooks"}, "webhooks has not parked the event at sequence 3", 1},
		{[]string{"retry", "--all"}, "no event is parked", 1},
		{[]string{"list"}, `unexpected argument "list"`, 2},
		{[]string{"--json", "retry", "3"}, "unknown flag --json (see 'cargoctl parked retry --help')", 2},
		// "$REACTOR" of a variable not set: not every reactor's entries.
		{[]string{"retry", "3", "--reactor", ""}, "--reactor is empty", 2},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := runCmd(t, getenv, append([]string{"parked"}, tt.args...)...)
			if err == nil || exitCode(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v (exit %d), want exit %d with %q", err, exitCode(err), tt.code, tt.want)
			}
		})
	}
}

// The parked events' stream, which cargod makes when it starts, missing
// from a data directory (a backup made without it) means the list was
// lost, not that none is parked: listing or retrying says so, exit 1.
func TestParkedSaysTheListIsLostWhereItsStreamIsMissing(t *testing.T) {
	dir := dataDirWithEvents(t) // written without cargod: no CARGO_PARKED
	want := "data directory " + dir + " has no stream CARGO_PARKED, which holds the parked events: cargod makes it when it starts, so the list was lost"
	for _, args := range [][]string{{"parked"}, {"parked", "--json"}, {"parked", "retry", "--all"}, {"parked", "retry", "1"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, errOut, err := runCmd(t, env(nil), append(args, "--data-dir", dir)...)
			if err == nil || exitCode(err) != 1 || !strings.HasPrefix(err.Error(), want) || out != "" || errOut != "" {
				t.Errorf("error = %v (exit %d), printed %q %q; want exit 1 with %q", err, exitCode(err), out, errOut, want)
			}
		})
	}
}
