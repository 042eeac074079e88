package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/cargostream/cargostream/internal/version"
)

// env is a getenv over a map.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// runCmd runs cargoctl and returns what it printed.
func runCmd(t *testing.T, getenv func(string) string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, getenv, &out, &errOut)
	return out.String(), errOut.String(), err
}

// closedPort is a loopback address where nothing listens: one taken and
// let go, so that a connection to it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", natstest.FreePorts(t, 1)[0])
}

type testEvent struct {
	agg domain.Aggregate
	e   domain.Envelope
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// testEvents are appended in this order: sequence i+1.
var testEvents = []testEvent{
	{domain.Aggregate{Type: "quote", ID: "q1"}, domain.Envelope{Type: "QuoteRequested", SchemaVersion: 1, EventID: "e1",
		CommandID: "c1", CorrelationID: "corr1", CausationID: "cause1", Actor: "user:alice", Tenant: "acme",
		OccurredAt: at("2026-11-24T10:00:00Z"), Data: []byte(`{ "weightKg": 120, "note": "<fragile> & dry" }`)}},
	{domain.Aggregate{Type: "org", ID: "acme"}, domain.Envelope{Type: "OrganizationCreated", SchemaVersion: 1, EventID: "e2",
		CommandID: "c2", CorrelationID: "c2", Actor: "system:cargod",
		OccurredAt: at("2026-11-24T23:59:59.5Z"), Data: []byte(`{"organizationId":"acme"}`)}},
	{domain.Aggregate{Type: "quote", ID: "q2"}, domain.Envelope{Type: "QuoteRequested", SchemaVersion: 1, EventID: "e3",
		CommandID: "c3", CorrelationID: "c3", Actor: "user:bob", Tenant: "acme",
		OccurredAt: at("2026-11-25T00:00:00Z"), Data: []byte(`{"weightKg":5}`)}},
	{domain.Aggregate{Type: "quote", ID: "q1"}, domain.Envelope{Type: "QuotePriced", SchemaVersion: 2, EventID: "e4",
		CommandID: "c4", CorrelationID: "corr1", CausationID: "e1", Actor: "client:lh", Tenant: "lh",
		OccurredAt: at("2026-11-25T12:30:00.123456789Z"), Data: []byte(`{"amount":"99.50"}`)}},
	// Only the required headers.
	{domain.Aggregate{Type: "client", ID: "c-1"}, domain.Envelope{Type: "ClientCreated", SchemaVersion: 1, EventID: "e5",
		OccurredAt: at("2026-11-26T08:00:00Z"), Data: []byte(`{}`)}},
}

// wantLines are the lines cargoctl prints for testEvents, by sequence.
var wantLines = map[int]string{
	1: `{"sequence":1,"aggregateType":"quote","aggregateId":"q1","type":"QuoteRequested","schemaVersion":1,"eventId":"e1","commandId":"c1","correlationId":"corr1","causationId":"cause1","actor":"user:alice","tenant":"acme","occurredAt":"2026-11-24T10:00:00Z","data":{"weightKg":120,"note":"<fragile> & dry"}}`,
	2: `{"sequence":2,"aggregateType":"org","aggregateId":"acme","type":"OrganizationCreated","schemaVersion":1,"eventId":"e2","commandId":"c2","correlationId":"c2","actor":"system:cargod","occurredAt":"2026-11-24T23:59:59.5Z","data":{"organizationId":"acme"}}`,
	3: `{"sequence":3,"aggregateType":"quote","aggregateId":"q2","type":"QuoteRequested","schemaVersion":1,"eventId":"e3","commandId":"c3","correlationId":"c3","actor":"user:bob","tenant":"acme","occurredAt":"2026-11-25T00:00:00Z","data":{"weightKg":5}}`,
	4: `{"sequence":4,"aggregateType":"quote","aggregateId":"q1","type":"QuotePriced","schemaVersion":2,"eventId":"e4","commandId":"c4","correlationId":"corr1","causationId":"e1","actor":"client:lh","tenant":"lh","occurredAt":"2026-11-25T12:30:00.123456789Z","data":{"amount":"99.50"}}`,
	5: `{"sequence":5,"aggregateType":"client","aggregateId":"c-1","type":"ClientCreated","schemaVersion":1,"eventId":"e5","occurredAt":"2026-11-26T08:00:00Z","data":{}}`,
}

func linesOf(seqs ...int) string {
	var b strings.Builder
	for _, s := range seqs {
		b.WriteString(wantLines[s] + "\n")
	}
	return b.String()
}

func appendTestEvents(t *testing.T, s *eventstore.Store, events []testEvent) {
	t.Helper()
	for _, e := range events {
		recs, err := s.Load(context.Background(), e.agg)
		if err != nil {
			t.Fatal(err)
		}
		var last uint64
		if len(recs) > 0 {
			last = recs[len(recs)-1].Sequence
		}
		if _, err := s.Append(context.Background(), e.agg, last, []domain.Envelope{e.e}); err != nil {
			t.Fatal(err)
		}
	}
}

// dataDirWithEvents is a closed store holding testEvents.
func dataDirWithEvents(t *testing.T) string {
	dir := t.TempDir()
	storeTestEvents(t, eventstore.Options{DataDir: dir})
	return dir
}

// storeTestEvents opens the store of o, appends testEvents and closes it.
func storeTestEvents(t *testing.T, o eventstore.Options) {
	t.Helper()
	s, err := eventstore.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	appendTestEvents(t, s, testEvents)
	s.Close()
}

func TestEvents(t *testing.T) {
	dir := dataDirWithEvents(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"everything", nil, linesOf(1, 2, 3, 4, 5)},
		{"aggregate type", []string{"--type", "quote"}, linesOf(1, 3, 4)},
		{"one aggregate", []string{"--type", "quote", "--id", "q1"}, linesOf(1, 4)},
		{"no such aggregate", []string{"--type", "quote", "--id", "q9"}, ""},
		{"sequence range", []string{"--from-seq", "2", "--to-seq", "4"}, linesOf(2, 3, 4)},
		{"from a sequence", []string{"--from-seq", "4"}, linesOf(4, 5)},
		{"up to a sequence", []string{"--to-seq", "1"}, linesOf(1)},
		{"beyond the end", []string{"--from-seq", "6"}, ""},
		{"since a date", []string{"--since", "2026-11-25"}, linesOf(3, 4, 5)},
		{"until a date includes the day", []string{"--until", "2026-11-25"}, linesOf(1, 2, 3, 4)},
		{"one day", []string{"--since", "2026-11-24", "--until", "2026-11-24"}, linesOf(1, 2)},
		{"times are inclusive", []string{"--since", "2026-11-24T23:59:59.5Z", "--until", "2026-11-25T12:30:00.123456789Z"}, linesOf(2, 3, 4)},
		{"times with an offset", []string{"--since", "2026-11-25T13:30:00+01:00"}, linesOf(4, 5)},
		{"event type", []string{"--event-type", "QuoteRequested"}, linesOf(1, 3)},
		{"all filters", []string{"--type", "quote", "--event-type", "QuoteRequested", "--since", "2026-11-25", "--from-seq", "2", "--to-seq", "5"}, linesOf(3)},
		{"what one request caused", []string{"--correlation-id", "corr1"}, linesOf(1, 4)},
		{"one actor", []string{"--actor", "user:bob"}, linesOf(3)},
		{"one tenant", []string{"--tenant", "acme"}, linesOf(1, 3)},
		{"one tenant's events of a type", []string{"--tenant", "lh", "--event-type", "QuoteRequested"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCmd(t, env(nil), append([]string{"events", "--data-dir", dir}, tt.args...)...)
			if err != nil {
				t.Fatalf("error %v; stderr %s", err, errOut)
			}
			if out != tt.want {
				t.Errorf("printed\n%s\nwant\n%s", out, tt.want)
			}
		})
	}
	t.Run("data directory from the environment", func(t *testing.T) {
		out, _, err := runCmd(t, env(map[string]string{"CARGO_DATA_DIR": dir}), "events", "--type", "org")
		if err != nil || out != linesOf(2) {
			t.Errorf("printed %q, %v", out, err)
		}
	})
	t.Run("an unknown stream is not created", func(t *testing.T) {
		_, _, err := runCmd(t, env(map[string]string{"CARGO_NATS_STREAM": "OTHER"}), "events", "--data-dir", dir)
		if err == nil || !strings.Contains(err.Error(), "data directory "+dir+" has no stream OTHER: check --stream (CARGO_NATS_STREAM)") {
			t.Errorf("error = %v, want the stream named as not there, and its flag", err)
		}
		if out, _, err := runCmd(t, env(nil), "events", "--data-dir", dir, "--stream", "OTHER"); err == nil {
			t.Errorf("second read of stream OTHER printed %q: the first one created it", out)
		}
	})
}

// An --id of an AWB number's shape with a wrong check digit is read as it
// is (an organisation's id may have that shape), and finding nothing says
// why: before, "0 events printed" alone.
func TestAnIDOfAnAWBNumbersShapeWithAWrongCheckDigitSaysSoWhenNothingIsFound(t *testing.T) {
	dir := dataDirWithEvents(t)
	for _, tt := range []struct {
		id, want string
	}{
		{"020-00000061", "--id 020-00000061 has an AWB number's shape, but no shipment has it: its check digit is 1 but must be 6"},
		{"02000000061", "--id 02000000061 has an AWB number's shape, but no shipment has it: its check digit is 1 but must be 6"},
		{"020-00000066", ""},
		{"q9", ""},
	} {
		t.Run(tt.id, func(t *testing.T) {
			out, errOut, err := runCmd(t, env(nil), "events", "--data-dir", dir, "--id", tt.id)
			if err != nil || out != "" {
				t.Fatalf("printed %q, error %v", out, err)
			}
			if got := strings.Contains(errOut, "AWB number's shape"); got != (tt.want != "") || !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q, want it to say %q", errOut, tt.want)
			}
		})
	}
}

// TestATenantsEventsIncludeTheReactorsFollowUps: a reactor stores what it
// does in answer to an organisation's request under no organisation;
// --tenant follows the causation ids to it, through answers to answers,
// and not to a follow-up of another organisation's request that shares
// its correlation id (a client may send any X-Request-Id).
func TestATenantsEventsIncludeTheReactorsFollowUps(t *testing.T) {
	event := func(typ, id, eventID, causationID, actor, tenant string) testEvent {
		return testEvent{domain.Aggregate{Type: typ, ID: id}, domain.Envelope{Type: "QuoteRequested", SchemaVersion: 1,
			EventID: eventID, CorrelationID: "req-1", CausationID: causationID, Actor: actor, Tenant: tenant,
			OccurredAt: at("2026-11-24T10:00:00Z"), Data: []byte(`{}`)}}
	}
	dir := t.TempDir()
	s, err := eventstore.Open(context.Background(), eventstore.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	appendTestEvents(t, s, []testEvent{
		event("booking", "b1", "e1", "", "client:f1", "f1"),        // the forwarder's booking
		event("flight", "f-1", "e2", "e1", "reactor:bookings", ""), // capacity reserved for it
		event("booking", "b1", "e3", "e1", "reactor:bookings", ""), // confirmed
		event("quote", "q1", "e4", "e3", "reactor:bookings", ""),   // its quote accepted, in answer to the confirmation
		event("booking", "b2", "e5", "", "client:f2", "f2"),        // another's, with the same X-Request-Id
		event("booking", "b2", "e6", "e5", "reactor:bookings", ""), // and its confirmation
		event("quote", "q1", "e7", "e1", "system:cargod", ""),      // no reactor's
	})
	s.Close()
	for _, tt := range []struct {
		name string
		args []string
		want []string // event ids
	}{
		{"an organisation's", []string{"--tenant", "f1"}, []string{"e1", "e2", "e3", "e4"}},
		{"another's", []string{"--tenant", "f2"}, []string{"e5", "e6"}},
		{"of a type, through causes of another", []string{"--tenant", "f1", "--type", "quote"}, nil},
		{"of an aggregate, with its causes", []string{"--tenant", "f1", "--type", "booking"}, []string{"e1", "e3"}},
		{"from a sequence past its request", []string{"--tenant", "f1", "--from-seq", "2"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCmd(t, env(nil), append([]string{"events", "--data-dir", dir}, tt.args...)...)
			if err != nil {
				t.Fatalf("error %v; stderr %s", err, errOut)
			}
			var got []string
			for line := range strings.Lines(out) {
				var e struct{ EventID string }
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatal(err)
				}
				got = append(got, e.EventID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("printed %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEventsDataDirInUse(t *testing.T) {
	dir := dataDirWithEvents(t)
	s, err := eventstore.Open(context.Background(), eventstore.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, err = runCmd(t, env(nil), "events", "--data-dir", dir)
	// The port it suggests is not NATS's own, 4222, which another server
	// on the host (a packaged one) may hold.
	if !errors.Is(err, eventstore.ErrDataDirInUse) || !strings.Contains(err.Error(), "only while cargod is not running") ||
		!strings.Contains(err.Error(), "CARGO_NATS_LISTEN=127.0.0.1:4223") {
		t.Errorf("error = %v", err)
	}
}

// A data directory cargoctl cannot open for another reason than cargod
// holding it (here, a lock file it cannot write) is not said to be held.
func TestADataDirectoryThatFailsOtherwiseIsNotSaidToBeInUse(t *testing.T) {
	dir := dataDirWithEvents(t)
	lock := filepath.Join(dir, "eventstore.lock")
	if err := os.Remove(lock); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCmd(t, env(nil), "events", "--data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "data directory lock") || strings.Contains(err.Error(), "cargod is not running") {
		t.Errorf("error = %v, want the lock's failure without a cargod blamed", err)
	}
}

// A stream whose metadata is lost or damaged is not loaded by the server,
// its events left in its directory: the name given is not the mistake,
// and the error says what is.
func TestAStreamWhoseMetadataIsLostIsNotSaidToBeMisnamed(t *testing.T) {
	dir := dataDirWithEvents(t)
	metas, err := filepath.Glob(filepath.Join(dir, "jetstream", "jetstream", "*", "streams", "CARGO", "meta.inf"))
	if err != nil || len(metas) != 1 {
		t.Fatalf("the stream's metadata: %v, %v", metas, err)
	}
	if err := os.Remove(metas[0]); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCmd(t, env(nil), "events", "--data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "has a directory of stream CARGO ("+filepath.Dir(metas[0])+"), but the NATS server did not load it: its metadata (meta.inf, meta.sum) is missing or damaged") {
		t.Errorf("error = %v", err)
	}
}

// listening is a store holding events whose embedded server listens, as
// cargod's with CARGO_NATS_LISTEN, and its data directory.
func listening(t *testing.T, events []testEvent) (*eventstore.Store, string) {
	t.Helper()
	return listeningWith(t, events, eventstore.Options{})
}

// listeningWith is listening with the store's other options o.
func listeningWith(t *testing.T, events []testEvent, o eventstore.Options) (*eventstore.Store, string) {
	t.Helper()
	dir := t.TempDir()
	o.DataDir, o.Listen = dir, "127.0.0.1:-1"
	s, err := eventstore.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	appendTestEvents(t, s, events)
	return s, dir
}

// TestEventsFollow reads through the server's NATS port, as from a
// running cargod started with CARGO_NATS_LISTEN, with the seed it finds
// in the data directory.
func TestEventsFollow(t *testing.T) {
	s, dir := listening(t, testEvents[:3])

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"events", "--follow", "--type", "quote", "--since", "2026-11-24T12:00:00Z"},
			env(map[string]string{"CARGO_NATS_URL": s.ClientURL(), "CARGO_DATA_DIR": dir}), pw, io.Discard)
		pw.Close()
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	next := func() string {
		if !lines.Scan() {
			t.Fatalf("output ended: %v", lines.Err())
		}
		return lines.Text()
	}
	if got := next(); got != wantLines[3] {
		t.Errorf("first line %s, want %s", got, wantLines[3])
	}
	appendTestEvents(t, s, testEvents[3:])
	if got := next(); got != wantLines[4] {
		t.Errorf("followed line %s, want %s", got, wantLines[4])
	}
	cancel()
	go io.Copy(io.Discard, pr)
	if err := <-done; err != nil {
		t.Errorf("--follow ended with %v, want nil after an interrupt", err)
	}
}

// TestEventsThroughTheListenerNeedItsSeed: the listener's seed is found
// in --data-dir or named by --nats-nkey; without it, or with another
// server's, cargoctl says that the server refused it, with what, and
// which flag fixes it (it said the server did not answer).
func TestEventsThroughTheListenerNeedItsSeed(t *testing.T) {
	s, dir := listening(t, testEvents)
	elsewhere := filepath.Join(t.TempDir(), "cargod.nk")
	if err := os.Rename(filepath.Join(dir, eventstore.ListenSeedFile), elsewhere); err != nil {
		t.Fatal(err)
	}
	_, otherDir := listening(t, nil)
	otherSeed := filepath.Join(otherDir, eventstore.ListenSeedFile)

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"without a seed", []string{"--data-dir", dir}, "without credentials, as there is no nkey seed at " + filepath.Join(dir, eventstore.ListenSeedFile)},
		{"with another server's seed", []string{"--data-dir", otherDir}, "with the nkey seed " + otherSeed + ": not the one it accepts"},
	} {
		out, _, err := runCmd(t, env(nil), append([]string{"events", "--nats-url", s.ClientURL(), "--to-seq", "1"}, tt.args...)...)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization violation") || !strings.Contains(err.Error(), "refused cargoctl") ||
			!strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--nats-nkey") {
			t.Errorf("%s: %q, %v; want the server's refusal, %q and the flags that fix it", tt.name, out, err, tt.want)
		}
	}
	out, _, err := runCmd(t, env(map[string]string{"CARGO_NATS_URL": s.ClientURL()}), "events", "--nats-nkey", elsewhere, "--to-seq", "1")
	if err != nil || out != linesOf(1) {
		t.Errorf("with --nats-nkey: %q, %v", out, err)
	}
}

// A stream name the server does not have is that mistake, said at once
// with the flag that fixes it, not the server's 404 of its API (a data
// directory's: see TestEvents).
func TestAStreamTheServerDoesNotHaveIsNamedWithItsFlag(t *testing.T) {
	s, dir := listening(t, testEvents[:1])
	_, _, err := runCmd(t, env(nil), "events", "--stream", "NOPE", "--nats-url", s.ClientURL(), "--data-dir", dir)
	if want := "the NATS server at " + s.ClientURL() + " has no stream NOPE: check --stream (CARGO_NATS_STREAM)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v; want %q", err, want)
	}
}

func TestEventsUsageErrors(t *testing.T) {
	dataDir := dataDirWithEvents(t) // none is read: every line is refused first
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--type", "quote.*"}, `--type "quote.*" is not an aggregate type`},
		{[]string{"--type", ">"}, "is not an aggregate type"},
		{[]string{"--type", "quote", "--id", "a b"}, "is not an aggregate id"},
		{[]string{"--type", "Quote"}, `--type "Quote" is not an aggregate type (did you mean quote?); one of: org, client, user,`},
		{[]string{"--type", "shipments"}, "booking, flight, ratecard, stockrequest, awbprefix, awbledger, awb, waybill"},
		{[]string{"--event-type", "quoterequested"}, `--event-type "quoterequested" is not an event type (did you mean QuoteRequested?); one of: APIKeyCreated,`},
		{[]string{"--event-type", "QuoteRequsted"}, `--event-type "QuoteRequsted" is not an event type (did you mean QuoteRequested?); one of: APIKeyCreated,`},
		{[]string{"--event-type", "quote.created"}, `is not an event type; one of: APIKeyCreated, APIKeyRevoked, AWBNumberReleased, AWBNumberUsed,`},
		{[]string{"--from-seq", "5", "--to-seq", "2"}, "--from-seq 5 is after --to-seq 2"},
		{[]string{"--to-seq", "0", "--follow"}, "--to-seq 0 is no sequence: the first is 1"},
		{[]string{"--from-seq", "-1"}, `--from-seq "-1": not a stream sequence: the first is 1`},
		{[]string{"--since", "yesterday"}, `--since: "yesterday" is neither an RFC 3339 time`},
		{[]string{"--until", "2026-13-01"}, "--until:"},
		{[]string{"--since", "2026-11-25", "--until", "2026-11-24"}, "--until 2026-11-24 is before --since 2026-11-25"},
		{[]string{"--follow", "--to-seq", "3"}, "--follow cannot be combined"},
		{[]string{"--follow", "--until", "2026-11-24"}, "--follow cannot be combined"},
		{[]string{"--bogus"}, "unknown flag --bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		// A filter given an empty value ("$REQUEST_ID" of a variable not
		// set) would filter nothing and print every event.
		{[]string{"--correlation-id", ""}, "--correlation-id is empty"},
		{[]string{"--tenant="}, "--tenant is empty"},
		{[]string{"--type", "quote", "--id", ""}, "--id is empty"},
		{[]string{"--actor", "", "--type", "quote"}, "--actor is empty"},
		{[]string{"--since", ""}, "--since is empty"},
		// A filter no event can match, written for another: it would
		// print nothing, as if the subject or organisation had done
		// nothing.
		{[]string{"--actor", "demo-forwarder"}, `--actor "demo-forwarder" is no subject as events name them: client:demo-forwarder, user:demo-forwarder,`},
		{[]string{"--tenant", "client:demo-forwarder"}, `--tenant "client:demo-forwarder" is no organisation id`},
		// The store would refuse it only once opened, as if cargod held
		// the data directory.
		{[]string{"--stream", "CARGO.1"}, `--stream "CARGO.1": not a stream name cargod takes: "CARGO.1" is not made of letters, digits`},
		{[]string{"--nats-url", "https://127.0.0.1:4222"}, `--nats-url "https://127.0.0.1:4222": not a NATS URL cargod takes: "https://127.0.0.1:4222" is not a nats://, tls://, ws:// or wss:// URL`},
		{[]string{"--nats-url", "127.0.0.1:99999"}, `"127.0.0.1:99999" has a port outside 1..65535`},
		{[]string{"--stream", ""}, `--stream "": not a stream name`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, _, err := runCmd(t, env(nil), append([]string{"events", "--data-dir", dataDir}, tt.args...)...)
			if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v (exit %d), want a usage error with %q", err, exitCode(err), tt.want)
			}
			if out != "" {
				t.Errorf("printed %q", out)
			}
		})
	}
	t.Run("CARGO_NATS_URL that cargod would refuse", func(t *testing.T) {
		_, _, err := runCmd(t, env(map[string]string{"CARGO_NATS_URL": "https://127.0.0.1:4222"}), "events", "--data-dir", dataDir)
		if want := `CARGO_NATS_URL is not a NATS URL cargod takes: "https://127.0.0.1:4222" is not a nats://`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want %q", err, want)
		}
	})
	t.Run("CARGO_NATS_STREAM that cargod would refuse", func(t *testing.T) {
		_, _, err := runCmd(t, env(map[string]string{"CARGO_NATS_STREAM": "CARGO.1"}), "events", "--data-dir", dataDir)
		if want := `CARGO_NATS_STREAM is not a stream name cargod takes: "CARGO.1" is not made of letters`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want %q", err, want)
		}
	})
	t.Run("no event store", func(t *testing.T) {
		_, _, err := runCmd(t, env(nil), "events", "--data-dir", t.TempDir())
		if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "no event store") {
			t.Errorf("error = %v", err)
		}
	})
}

func TestHelp(t *testing.T) {
	tests := []struct {
		args     []string
		want     string
		wantCode int // 0: no error
	}{
		{nil, "Commands:", 2},
		{[]string{"help"}, "Commands:", 0},
		{[]string{"--help"}, "Commands:", 0},
		{[]string{"help", "events"}, "--follow", 0},
		{[]string{"events", "--help"}, "--event-type", 0},
		// An actor is stored with its kind: a bare client id matches nothing.
		{[]string{"events", "--help"}, "client:<id>, user:<name>, apikey:<key id>", 0},
		{[]string{"admin", "--help"}, "revoke-api-key", 0},
		{[]string{"help", "admin"}, "revoke-api-key", 0},
		{[]string{"admin"}, "revoke-api-key", 2},
		{[]string{"admin", "help"}, "create-org", 0},
		{[]string{"admin", "help", "create-user"}, "--password-file", 0},
		{[]string{"admin", "create-org", "-h"}, "--awb-prefix", 0},
		{[]string{"help", "health"}, "--timeout", 0},
		{[]string{"help", "import"}, "dangerous-goods", 0},
		{[]string{"import", "--help"}, "--format", 0},
		{[]string{"version"}, "cargoctl " + version.String() + " go", 0},
		{[]string{"--version"}, "cargoctl " + version.String() + " go", 0},
		{[]string{"version", "now"}, "", 2},
		{[]string{"help", "version"}, "cargo_build_info", 0},
		{[]string{"version", "--help"}, "cargo_build_info", 0},
		{[]string{"admin", "--help"}, "set-rate-limits --org ORG", 0},
		{[]string{"frobnicate"}, "", 2},
		// Help of a command that does not exist is a usage error, not the
		// list of commands with exit 0.
		{[]string{"help", "frobnicate"}, "", 2},
		{[]string{"admin", "frobnicate"}, "", 2},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, err := runCmd(t, env(nil), tt.args...)
			code := 0
			if err != nil {
				code = exitCode(err)
			}
			if code != tt.wantCode || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("exit %d (%v), printed %q %q; want exit %d and %q", code, err, out, errOut, tt.wantCode, tt.want)
			}
			if code == 0 && errOut != "" {
				t.Errorf("help printed on stderr: %q", errOut)
			}
		})
	}
}

// TestEventsFromACluster reads the test events, and 500 more, from a
// stream of three replicas on a three-node cluster: every one, in order.
func TestEventsFromACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	c := natstest.StartCluster(t)
	ctx := context.Background()
	s, err := eventstore.Open(ctx, eventstore.Options{URL: c.URL(), Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	appendTestEvents(t, s, testEvents)
	for i := range 500 {
		id := fmt.Sprint("bulk-", i)
		e := domain.Envelope{Type: "QuoteRequested", SchemaVersion: 1, EventID: id, CommandID: id, OccurredAt: time.Now(), Data: []byte(`{}`)}
		if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: id}, 0, []domain.Envelope{e}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	out, errOut, err := runCmd(t, env(nil), "events", "--nats-url", c.URL(), "--to-seq", "5")
	if err != nil || out != linesOf(1, 2, 3, 4, 5) {
		t.Errorf("the test events from the cluster: %v\n%s\nstderr %s", err, out, errOut)
	}
	out, errOut, err = runCmd(t, env(nil), "events", "--nats-url", c.URL(), "--type", "quote", "--from-seq", "6")
	if lines := strings.Count(out, "\n"); err != nil || lines != 500 {
		t.Errorf("the bulk events from the cluster: %d lines, %v; stderr %s", lines, err, errOut)
	}
}

// fakeNATS listens on loopback where a NATS server would, and counts the
// connections it takes. With hangUp it hangs up on each at once; else it
// speaks the protocol (INFO, PONG) but leaves every JetStream request
// unanswered, as a cluster electing its leader does.
func fakeNATS(t *testing.T, hangUp bool) (url string, connections *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	connections = new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// Counted before the client can learn of it: by the time an
			// attempt has failed, it is counted.
			connections.Add(1)
			if hangUp {
				c.Close()
				continue
			}
			go func() {
				defer c.Close()
				fmt.Fprintf(c, "INFO {\"server_id\":\"FAKE\",\"version\":\"2.15.2\",\"proto\":1,\"headers\":true,\"max_payload\":1048576}\r\n")
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					if sc.Text() == "PING" {
						fmt.Fprintf(c, "PONG\r\n")
					}
				}
			}()
		}
	}()
	return "nats://" + ln.Addr().String(), connections
}

// A command that connects to NATS makes one attempt to reach the server:
// a mistyped --nats-url fails at once, saying where and why, not after the
// wait for a cluster that is forming. A server that answers is waited for
// as long as --nats-wait says. (No times are measured: the connections the
// server took, and the message, tell.)
func TestACommandThatConnectsToNATSTriesOnceAndWaitsOnlyForAServerThatAnswers(t *testing.T) {
	refused := "nats://" + closedPort(t)
	for _, cmd := range [][]string{{"events"}, {"trace", "corr1"}, {"parked"}} {
		t.Run(cmd[0]+": nothing listens", func(t *testing.T) {
			_, errOut, err := runCmd(t, env(nil), append(cmd, "--nats-url", refused, "--data-dir", t.TempDir())...)
			want := "the NATS server at " + refused + " does not answer: connection refused"
			if err == nil || err.Error() != want || exitCode(err) != 1 {
				t.Errorf("error = %v, want %q, exit 1", err, want)
			}
			// The store's warnings that it is trying again are for a
			// service waiting for its cluster: the one line says it all.
			if errOut != "" {
				t.Errorf("stderr %q, want nothing but the error", errOut)
			}
		})
		t.Run(cmd[0]+": a server that hangs up", func(t *testing.T) {
			url, connections := fakeNATS(t, true)
			_, _, err := runCmd(t, env(nil), append(cmd, "--nats-url", url, "--data-dir", t.TempDir())...)
			want := "the NATS server at " + url + " does not answer: it closed the connection"
			if err == nil || err.Error() != want || exitCode(err) != 1 {
				t.Errorf("error = %v, want %q, exit 1", err, want)
			}
			if n := connections.Load(); n != 1 {
				t.Errorf("%d connections, want one attempt", n)
			}
		})
		t.Run(cmd[0]+": an HTTP server, such as cargod's API", func(t *testing.T) {
			// It waits for a request, as the NATS client waits for a
			// greeting: the connect timed out, "i/o timeout", as if
			// nothing answered there.
			api := httptest.NewServer(http.NotFoundHandler())
			t.Cleanup(api.Close)
			url := "nats://" + strings.TrimPrefix(api.URL, "http://")
			_, _, err := runCmd(t, env(nil), append(cmd, "--nats-url", url, "--data-dir", t.TempDir())...)
			want := "an HTTP server answers at " + url + ", not a NATS server: --nats-url is the address of a NATS server " +
				"(cargod's CARGO_NATS_LISTEN, or your own); cargod's HTTP API address (its CARGO_ADDR) is for --url"
			if err == nil || !strings.HasPrefix(err.Error(), want) || exitCode(err) != 1 {
				t.Errorf("error = %v, want %q..., exit 1", err, want)
			}
		})
		t.Run(cmd[0]+": a server that answers but has no stream for it yet", func(t *testing.T) {
			url, connections := fakeNATS(t, false)
			_, _, err := runCmd(t, env(nil), append(cmd, "--nats-url", url, "--data-dir", t.TempDir(), "--nats-wait", "300ms")...)
			want := "the NATS server at " + url + " did not give stream CARGO within --nats-wait 300ms: "
			if err == nil || !strings.HasPrefix(err.Error(), want) || exitCode(err) != 1 {
				t.Errorf("error = %v, want %q..., exit 1", err, want)
			}
			if n := connections.Load(); n != 1 {
				t.Errorf("%d connections, want one", n)
			}
		})
		t.Run(cmd[0]+": a wait of none", func(t *testing.T) {
			_, _, err := runCmd(t, env(nil), append(cmd, "--nats-url", refused, "--nats-wait", "0s")...)
			want := `--nats-wait "0s": give a wait longer than none, such as 10s`
			if err == nil || !strings.Contains(err.Error(), want) || exitCode(err) != 2 {
				t.Errorf("error = %v, want %q, exit 2", err, want)
			}
		})
	}
}

// TestEventsSaysWhyAnEventItCannotReadHasNoType: verify sends the operator
// to 'cargoctl events --from-seq N --to-seq N' for an event whose envelope
// is broken. Such an event is printed without its type and time, as every
// reader hands it on, with the time the stream stored it; stderr must say
// why, not leave a blank type unexplained.
func TestEventsSaysWhyAnEventItCannotReadHasNoType(t *testing.T) {
	url := natstest.StartServer(t, 0)
	storeTestEvents(t, eventstore.Options{URL: url})
	natstest.Publish(t, url, "cargo.evt.quote.q9", map[string]string{
		"Cargo-Event-Type": "QuoteRequested", "Cargo-Schema-Version": "1", "Cargo-Event-Id": "e6", "Cargo-Occurred-At": "yesterday",
	}, []byte(`{"weightKg":1}`))

	out, errOut, err := runCmd(t, env(nil), "events", "--nats-url", url, "--from-seq", "6", "--to-seq", "6")
	if err != nil || !strings.Contains(out, `"sequence":6,`) {
		t.Fatalf("printed %q, %v", out, err)
	}
	var line struct {
		OccurredAt *time.Time
		StoredAt   time.Time
	}
	if err := json.Unmarshal([]byte(out), &line); err != nil || line.OccurredAt != nil || time.Since(line.StoredAt) > time.Minute {
		t.Errorf("printed %q (%v), want no occurredAt and when it was stored", out, err)
	}
	if !strings.Contains(errOut, "sequence 6") || !strings.Contains(errOut, `bad Cargo-Occurred-At header: parsing time \"yesterday\"`) {
		t.Errorf("stderr %q, want why sequence 6 has no type", errOut)
	}
}

// TestASinceReadsOnlyTheEventsStoredSince: --since starts the read at the
// first event the stream stored at that moment, found by the server,
// instead of reading every event before it only to leave it out, and
// --until ends it at the last event stored before that moment; stderr
// says how many were read.
func TestASinceReadsOnlyTheEventsStoredSince(t *testing.T) {
	defer func(skew time.Duration) { storeClockSkew = skew }(storeClockSkew)
	storeClockSkew = 0 // one machine, one clock
	s, dir := listening(t, testEvents)
	time.Sleep(20 * time.Millisecond)
	since := time.Now().UTC()
	later := []testEvent{
		{domain.Aggregate{Type: "quote", ID: "q3"}, domain.Envelope{Type: "QuoteRequested", SchemaVersion: 1, EventID: "e6",
			CorrelationID: "corr6", Actor: "user:carol", OccurredAt: since.Add(time.Millisecond), Data: []byte(`{}`)}},
		{domain.Aggregate{Type: "quote", ID: "q3"}, domain.Envelope{Type: "QuotePriced", SchemaVersion: 1, EventID: "e7",
			CorrelationID: "corr6", Actor: "reactor:pricing", OccurredAt: since.Add(2 * time.Millisecond), Data: []byte(`{}`)}},
	}
	appendTestEvents(t, s, later)
	getenv := env(map[string]string{"CARGO_NATS_URL": s.ClientURL(), "CARGO_DATA_DIR": dir})
	tests := []struct {
		name   string
		args   []string
		lines  int // printed
		errOut string
	}{
		{"events since the moment", []string{"events", "--since", since.Format(time.RFC3339Nano)}, 2, "2 events printed; read 2 events, sequences 6 to 7"},
		{"events since a day before every event, all stored since", []string{"events", "--since", "2026-11-25"}, 5, "5 events printed; read 7 events, sequences 1 to 7"},
		{"events since a moment before the stream", []string{"events", "--since", "2000-01-01"}, 7, "7 events printed; read 7 events, sequences 1 to 7"},
		{"events until before the later ones were stored", []string{"events", "--until", since.Add(-time.Millisecond).Format(time.RFC3339Nano)}, 5, "5 events printed; read 5 events, sequences 1 to 5"},
		{"events until before the stream", []string{"events", "--until", "2000-01-01"}, 0, "0 events printed"},
		{"events since the moment until after it", []string{"events", "--since", since.Format(time.RFC3339Nano), "--until", since.Add(time.Minute).Format(time.RFC3339Nano)}, 2, "2 events printed; read 2 events, sequences 6 to 7"},
		{"events since the moment, of a type", []string{"events", "--since", since.Format(time.RFC3339Nano), "--event-type", "QuotePriced"}, 1, "1 event printed; read 2 events, sequences 6 to 7"},
		{"a trace since the moment", []string{"trace", "--since", since.Format(time.RFC3339Nano), "corr6"}, 2, "2 events over 1ms; read 2 events, sequences 6 to 7"},
		{"a trace", []string{"trace", "corr6"}, 2, "2 events over 1ms; read 7 events, sequences 1 to 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCmd(t, getenv, tt.args...)
			if err != nil {
				t.Fatalf("error %v; stderr %s", err, errOut)
			}
			if n := strings.Count(out, "\n"); n != tt.lines {
				t.Errorf("printed %d lines:\n%s\nwant %d", n, out, tt.lines)
			}
			if !strings.Contains(errOut, tt.errOut) {
				t.Errorf("stderr %q, want it to contain %q", errOut, tt.errOut)
			}
		})
	}
}

func TestALongReadSaysHowFarItHasComeOnStderr(t *testing.T) {
	defer func(every time.Duration) { progressEvery = every }(progressEvery)
	progressEvery = 0 // a line for every event read
	dir := dataDirWithEvents(t)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"events of a type", []string{"events", "--type", "quote", "--event-type", "QuoteRequested"},
			"events: read 2 events, up to sequence 3 of 5 (60%); 2 printed\nevents: read 3 events, up to sequence 4 of 5 (80%); 2 printed\n"},
		{"a trace", []string{"trace", "corr1"}, "trace: read 5 events, up to sequence 5 of 5 (100%); 2 printed\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, err := runCmd(t, env(nil), append(tt.args, "--data-dir", dir)...)
			if err != nil || !strings.Contains(errOut, tt.want) {
				t.Errorf("error %v, stderr:\n%s\nwant it to contain:\n%s", err, errOut, tt.want)
			}
		})
	}
}

// Events lost from the stream (a damaged file, a backup cut short) leave
// their sequences without an event. A read of every event says so, as it
// passes them and in its last line, and a trace that found nothing does
// not say the request left no event; a read the server filters, which
// skips sequences by design, says nothing of gaps.
func TestAReadOfEveryEventSaysWhereTheStreamHasNone(t *testing.T) {
	url := natstest.StartServer(t, 0)
	ctx := context.Background()
	stream := natstest.HandMadeStream(t, url, "CARGO", "cargo.evt.>")
	storeTestEvents(t, eventstore.Options{URL: url, Existing: true})
	for _, seq := range []uint64{1, 3} {
		if err := stream.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name      string
		args      []string
		errOut    []string // lines of stderr
		failsWith string
	}{
		{"every event", []string{"events"}, []string{
			"events: the stream has no event at sequence 1: lost (a damaged file, a backup cut short); cargoctl verify checks the whole stream",
			"events: the stream has no event at sequence 3: lost (a damaged file, a backup cut short); cargoctl verify checks the whole stream",
			"3 events printed; read 3 events, sequences 2 to 5; 2 events missing from the stream, in 2 gaps",
		}, ""},
		{"events from the second gap on: one event missing", []string{"events", "--from-seq", "3"}, []string{
			"events: the stream has no event at sequence 3: lost (a damaged file, a backup cut short); cargoctl verify checks the whole stream",
			"2 events printed; read 2 events, sequences 4 to 5; 1 event missing from the stream, in one gap",
		}, ""},
		{"events of a type, which the server filters", []string{"events", "--type", "quote"}, []string{
			"1 event printed; read 1 event, sequences 4 to 4",
		}, ""},
		{"a trace of a request whose events are among those lost", []string{"trace", "c3"}, []string{
			"trace: the stream has no event at sequence 1: lost (a damaged file, a backup cut short); cargoctl verify checks the whole stream",
			"trace: the stream has no event at sequence 3: lost (a damaged file, a backup cut short); cargoctl verify checks the whole stream",
		}, `no event read has correlation id "c3", but the stream misses some (read 3 events, sequences 2 to 5; 2 events missing from the stream, in 2 gaps): the request's may be among them`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, err := runCmd(t, env(nil), append(tt.args, "--nats-url", url)...)
			if tt.failsWith == "" && err != nil || tt.failsWith != "" && (err == nil || err.Error() != tt.failsWith) {
				t.Errorf("error %v, want %q", err, tt.failsWith)
			}
			if want := strings.Join(tt.errOut, "\n") + "\n"; errOut != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", errOut, want)
			}
		})
	}
}

// TestAnIDWithoutATypeReadsEveryAggregateOfThatID: an AWB number is the id
// of its waybill, filings, shipment and AWB; --id alone reads them all
// through one subject filter, not the whole stream. An AWB number without
// its dash, or a flight id written as a timetable writes it, is read as
// the service stores it, as the API and cargoctl shipment take them.
func TestAnIDWithoutATypeReadsEveryAggregateOfThatID(t *testing.T) {
	awb := "020-81140743"
	event := func(typ, id, eventType string) testEvent {
		return testEvent{domain.Aggregate{Type: typ, ID: id}, domain.Envelope{Type: eventType, SchemaVersion: 1, EventID: typ + id,
			OccurredAt: at("2026-11-26T09:00:00Z"), Data: []byte(`{}`)}}
	}
	dir := t.TempDir()
	s, err := eventstore.Open(context.Background(), eventstore.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	appendTestEvents(t, s, []testEvent{event("waybill", awb, "MAWBCreated"), event("quote", "q1", "QuoteRequested"),
		event("shipment", awb, "ShipmentStatusRecorded"), event("shipment", "020-00000011", "ShipmentStatusRecorded"),
		event("flight", "LH84-2026-11-26", "FlightScheduled")})
	s.Close()
	for _, tt := range []struct {
		id, stored string
		events     int
	}{
		{awb, awb, 2},
		{"02081140743", awb, 2},
		{"LH84-2026-11-26", "LH84-2026-11-26", 1},
		{"lh0084-2026-11-26", "LH84-2026-11-26", 1},
		{"q1", "q1", 1},
		{"Q1", "Q1", 0}, // the service's own ids are as given
	} {
		t.Run(tt.id, func(t *testing.T) {
			out, errOut, err := runCmd(t, env(nil), "events", "--data-dir", dir, "--id", tt.id)
			if err != nil {
				t.Fatalf("error %v; stderr %s", err, errOut)
			}
			if got := strings.Count(out, `"aggregateId":"`+tt.stored+`"`); got != tt.events || strings.Count(out, "\n") != tt.events {
				t.Errorf("printed\n%s\nwant the %d events of %s", out, tt.events, tt.stored)
			}
			if want := fmt.Sprintf("%s printed", eventCount(tt.events)); !strings.Contains(errOut, want) {
				t.Errorf("stderr %q, want %q", errOut, want)
			}
		})
	}
}

// TestAnEventTypeWithoutATypeNamesTheTypeThatReadsLess: an event type is
// in no subject, so --event-type alone reads every event; when all it
// found were of one aggregate type, stderr names the --type that has the
// server read only that type's events next time.
func TestAnEventTypeWithoutATypeNamesTheTypeThatReadsLess(t *testing.T) {
	dir := dataDirWithEvents(t)
	hint := "add --type quote"
	for _, tt := range []struct {
		name string
		args []string
		hint bool
	}{
		{"an event type alone", []string{"--event-type", "QuoteRequested"}, true},
		{"with its aggregate type", []string{"--event-type", "QuoteRequested", "--type", "quote"}, false},
		{"with an id", []string{"--event-type", "QuoteRequested", "--id", "q1"}, false},
		{"an event type nothing has", []string{"--event-type", "QuoteRejected"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, err := runCmd(t, env(nil), append([]string{"events", "--data-dir", dir}, tt.args...)...)
			if err != nil || strings.Contains(errOut, hint) != tt.hint {
				t.Errorf("error %v, stderr %q; want a hint %q: %v", err, errOut, hint, tt.hint)
			}
		})
	}
}

// TestEventsFollowGoesOnAcrossARestartOfItsServer: --follow reading the
// server of a cargod that restarts goes on from the event after the last
// it read, without a gap, as the README says. Its subscription stalled
// across the restart, and ended it with exit 1.
func TestEventsFollowGoesOnAcrossARestartOfItsServer(t *testing.T) {
	o := eventstore.Options{DataDir: t.TempDir(), Listen: fmt.Sprintf("127.0.0.1:%d", natstest.FreePorts(t, 1)[0])}
	s, err := eventstore.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	appendTestEvents(t, s, testEvents[:3])

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	var errOut lockedbuf.Buffer
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"events", "--follow", "--nats-url", "nats://" + o.Listen, "--data-dir", o.DataDir}, env(nil), pw, &errOut)
		pw.Close()
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	next := func() string {
		if !lines.Scan() {
			t.Fatalf("output ended: %v; stderr:\n%s", lines.Err(), errOut.String())
		}
		return lines.Text()
	}
	for seq := 1; seq <= 3; seq++ {
		if got := next(); got != wantLines[seq] {
			t.Errorf("line %s, want %s", got, wantLines[seq])
		}
	}
	s.Close()
	// Down longer than a subscription may hear nothing while the
	// stream is ahead of it, as a cargod restarting is.
	time.Sleep(4 * time.Second)
	if s, err = eventstore.Open(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	appendTestEvents(t, s, testEvents[3:])
	for seq := 4; seq <= 5; seq++ {
		if got := next(); got != wantLines[seq] {
			t.Errorf("line after the restart %s, want %s", got, wantLines[seq])
		}
	}
	// Stderr said why nothing came, and that it comes again (the README
	// promises both lines).
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(errOut.String(), "the connection to NATS is back") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	for _, line := range []string{"the connection to NATS is lost", "the connection to NATS is back"} {
		if !strings.Contains(errOut.String(), line) {
			t.Errorf("stderr does not say %q:\n%s", line, errOut.String())
		}
	}
	cancel()
	go io.Copy(io.Discard, pr)
	if err := <-done; err != nil {
		t.Errorf("--follow ended with %v, want nil after an interrupt", err)
	}
}

// Credentials for the NATS server of --nats-url, given without it, went
// unused while the data directory was read: they are a usage error, from
// a flag or from the environment.
func TestNATSCredentialsWithoutANATSURLAreAUsageError(t *testing.T) {
	dir, file := dataDirWithEvents(t), secretFile(t, "credentials")
	for _, tt := range []struct {
		name   string
		getenv func(string) string
		args   []string
		want   string
	}{
		{"parked --nats-creds", env(nil), []string{"parked", "--nats-creds", file}, "--nats-creds (or CARGO_NATS_CREDS) is for the NATS server of --nats-url"},
		{"parked retry --nats-creds", env(nil), []string{"parked", "retry", "1", "--nats-creds", file}, "--nats-creds (or CARGO_NATS_CREDS) is for"},
		{"parked --nats-nkey", env(nil), []string{"parked", "--nats-nkey", file}, "--nats-nkey (or CARGO_NATS_NKEY) is for the NATS server of --nats-url"},
		{"CARGO_NATS_CREDS", env(map[string]string{"CARGO_NATS_CREDS": file}), []string{"parked"}, "--nats-creds (or CARGO_NATS_CREDS) is for"},
		{"events --nats-creds", env(nil), []string{"events", "--nats-creds", file}, "--nats-creds (or CARGO_NATS_CREDS) is for the NATS server of --nats-url"},
		{"trace --nats-nkey", env(nil), []string{"trace", "corr1", "--nats-nkey", file}, "--nats-nkey (or CARGO_NATS_NKEY) is for the NATS server of --nats-url"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCmd(t, tt.getenv, append(tt.args, "--data-dir", dir)...)
			if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v (exit %d), want exit 2 with %q", err, exitCode(err), tt.want)
			}
		})
	}
}
