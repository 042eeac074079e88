package projections_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/cargostream/cargostream/internal/streamgen"
	"github.com/cargostream/cargostream/projections"
	"github.com/google/uuid"
)

// history is a store with a short history written through the domain,
// and the object store of its snapshots.
func history(t *testing.T, events int) (*eventstore.Store, *eventstore.Objects) {
	t.Helper()
	ctx := context.Background()
	store, _, err := streamgen.Embedded(ctx, t.TempDir(), streamgen.Options{Events: events, Writers: 32})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	snapshots, err := store.Objects(ctx, "snapshots")
	if err != nil {
		t.Fatal(err)
	}
	return store, snapshots
}

// start runs a projector over new read models until it has caught up with
// the stream, then stops it (which leaves a snapshot if snapshots are
// kept), and returns the models and what it logged.
func start(t *testing.T, store *eventstore.Store, snapshots projections.SnapshotStore) ([]projections.ReadModel, string) {
	t.Helper()
	models := projections.NewModels().All()
	return models, runUntilCaughtUp(t, store, snapshots, models, func() {})
}

// modelOf is the read model of type M among models.
func modelOf[M projections.ReadModel](models []projections.ReadModel) M {
	for _, m := range models {
		if m, ok := m.(M); ok {
			return m
		}
	}
	panic(fmt.Sprintf("no %T among the read models", *new(M)))
}

// sameModels reports whether two sets of read models keep the same.
func sameModels(t *testing.T, got, want []projections.ReadModel) {
	t.Helper()
	for i := range want {
		g, w := projections.Fields(got[i]), projections.Fields(want[i])
		for j := range w {
			if !reflect.DeepEqual(g[j], w[j]) {
				t.Errorf("%T: field %d differs from a full replay's", want[i], j)
			}
		}
	}
}

// appendEvents appends events decided by the domain, each on an aggregate
// of its own: a booking's request on the booking it names (which the
// bookings model reads it from), any other on an authorization's.
func appendEvents(t *testing.T, store *eventstore.Store, events ...domain.Event) {
	t.Helper()
	for _, e := range events {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		id := uuid.NewString()
		aggregate := domain.Aggregate{Type: domain.AggregateAuthorization, ID: id}
		if b, ok := e.(domain.BookingRequested); ok {
			aggregate = domain.Aggregate{Type: domain.AggregateBooking, ID: b.BookingID}
		}
		_, err = store.Append(context.Background(), aggregate, 0, []domain.Envelope{{
			Type: e.EventType(), SchemaVersion: 1, EventID: id, CommandID: id, Actor: "client:forwarder-01", OccurredAt: time.Now(), Data: data}})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestAStartFromASnapshotHoldsWhatAFullReplayHolds(t *testing.T) {
	store, snapshots := history(t, 3000)
	// The generated history has no webhook deliveries: some of each kind
	// the delivery log keeps apart (see TestADeliveryReadsBackAsRecorded);
	// nor a booking with handling codes and routing: one with all a
	// booking request carries.
	hook, event, at := uuid.NewString(), uuid.NewString(), time.Date(2026, 11, 28, 9, 0, 0, 123456789, time.UTC)
	booked := domain.BookingRequested{BookingID: uuid.NewString(), QuoteID: uuid.NewString(), FlightID: "LH8400-2026-11-28", OrganizationID: "forwarder-01",
		Pieces: 2, WeightKg: 350.5, VolumeM3: 1.92, ChargeableWeightKg: 350.5, Commodity: "RLI", SHC: []string{"DGR", "RLI"},
		Shipper:    domain.FullParty{Name: "ACME Batteries GmbH", Address: "Hafenstr. 1, Frankfurt", Contact: "+49 69 1234"},
		Consignee:  domain.FullParty{Name: "Globex Inc"},
		Routing:    []domain.RoutingLeg{{From: "FRA", To: "JFK", Carrier: "LH", FlightNumber: "LH8400", Date: "2026-11-28"}},
		Dimensions: []domain.DimensionLine{{L: 120, W: 80, H: 100, Pieces: 2}}, RequestedAt: at}
	appendEvents(t, store, booked,
		domain.WebhookDeliveryAttempted{DeliveryID: uuid.NewString(), WebhookID: hook, EventName: "quote.created", EventID: event, EventSeq: 7,
			Attempt: 1, StatusCode: 503, LatencyMs: 12, Error: "503 Service Unavailable", Outcome: domain.DeliveryRetrying, NextTryAt: at.Add(time.Minute), At: at},
		domain.WebhookDeliveryAttempted{DeliveryID: "d-by-hand", WebhookID: hook, EventName: "quote.created", EventID: "e-by-hand", MessageID: "msg_original",
			Attempt: 1, StatusCode: 200, Outcome: domain.DeliveryDelivered, At: at})
	_, log := start(t, store, snapshots)
	if !strings.Contains(log, "no snapshot of the read models") || !strings.Contains(log, "snapshot of the read models written") {
		t.Fatalf("a first start, stopped, did not leave a snapshot:\n%s", log)
	}
	// Events after the snapshot are replayed on top of it.
	appendEvents(t, store, domain.AuthorizationRecorded{Action: domain.ActionTokenIssued, Subject: "client:forwarder-01", At: time.Now()},
		domain.WebhookDeliveryAttempted{DeliveryID: uuid.NewString(), WebhookID: hook, EventName: "quote.created", EventID: uuid.NewString(),
			Attempt: 1, StatusCode: 200, Outcome: domain.DeliveryDelivered, At: at})
	fromSnapshot, log := start(t, store, snapshots)
	if !strings.Contains(log, "read models loaded from a snapshot") {
		t.Fatalf("the second start did not load the snapshot:\n%s", log)
	}
	full, _ := start(t, store, nil)
	sameModels(t, fromSnapshot, full)

	// The booking read back from the snapshot holds what its request
	// carried.
	b, ok := modelOf[*projections.Bookings](fromSnapshot).Get(domain.Principal{Role: domain.RoleAdmin}, booked.BookingID)
	got := fmt.Sprint(b.Commodity, b.SHC, b.Shipper, b.Consignee, b.Routing, b.Dimensions)
	if want := fmt.Sprint(booked.Commodity, booked.SHC, booked.Shipper, booked.Consignee, booked.Routing, booked.Dimensions); !ok || got != want {
		t.Errorf("the booking from the snapshot holds %s, want %s", got, want)
	}

	// The lists of flights by departure, which are not in the snapshot,
	// are made again; the history's airlines published theirs one after
	// the other, so that the list of every flight was out of order.
	flights := func(models []projections.ReadModel, filter projections.FlightFilter) []domain.Flight {
		page, _ := modelOf[*projections.Flights](models).List(filter, 1, 1000)
		return page
	}
	all := flights(full, projections.FlightFilter{})
	byDeparture := func(a, b domain.Flight) int { return a.DepartsAt.Compare(b.DepartsAt) }
	if len(all) < 2 || !slices.IsSortedFunc(all, byDeparture) {
		t.Fatalf("a full replay lists %d flights, not in departure order", len(all))
	}
	oneRoute := projections.FlightFilter{Origin: all[0].Origin, Destination: all[0].Destination}
	for _, filter := range []projections.FlightFilter{{}, oneRoute} {
		if got, want := flights(fromSnapshot, filter), flights(full, filter); !reflect.DeepEqual(got, want) {
			t.Errorf("flights listed (%+v): %d from the snapshot, %d from a full replay, or in another order", filter, len(got), len(want))
		}
	}

	// The audit log's lists of each organisation's entries, which are not
	// in the snapshot, are made again.
	entries := func(models []projections.ReadModel, org string) ([]projections.AuditEntry, int) {
		page, total, err := modelOf[*projections.Audit](models).Entries(context.Background(), store, projections.AuditFilter{Tenant: org}, 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		return page, total
	}
	orgs := map[string]bool{}
	every, _ := entries(full, "")
	for _, e := range every {
		orgs[e.Tenant], orgs[e.Owner] = true, true
	}
	delete(orgs, "")
	if len(orgs) < 2 {
		t.Fatalf("the history's last entries name %d organisations", len(orgs))
	}
	for org := range orgs {
		got, gotTotal := entries(fromSnapshot, org)
		want, wantTotal := entries(full, org)
		if gotTotal != wantTotal || !reflect.DeepEqual(got, want) {
			t.Errorf("organisation %s: %d entries from the snapshot, %d from a full replay", org, gotTotal, wantTotal)
		}
	}
}

func TestASnapshotThatCannotBeTrustedIsIgnored(t *testing.T) {
	store, snapshots := history(t, 1000)
	start(t, store, snapshots)
	full, _ := start(t, store, nil)
	manifest := read(t, snapshots, projections.SnapshotManifest)
	part := strings.Split(manifest, "\n")
	name := projections.SnapshotManifest + "/" + part[1] + "/0"
	good := read(t, snapshots, name)
	other, otherSnapshots := history(t, 500)
	start(t, other, otherSnapshots)
	// A snapshot of a longer history covers an event past this stream's
	// end, as one does of a stream since cut short at its end.
	longer, longerSnapshots := history(t, 2000)
	start(t, longer, longerSnapshots)
	last, err := store.LastSequence(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name, log string
		spoil     func()
	}{
		{"a byte of it changed", "it is damaged or cut short", func() {
			b := []byte(good)
			b[len(b)/2] ^= 0x20
			put(t, snapshots, name, string(b))
		}},
		{"of an older format", fmt.Sprintf("format %d, this version reads %d", projections.SnapshotFormat-1, projections.SnapshotFormat), func() {
			put(t, snapshots, name, strings.Replace(good, fmt.Sprintf("read models\n%d\n", projections.SnapshotFormat),
				fmt.Sprintf("read models\n%d\n", projections.SnapshotFormat-1), 1))
		}},
		{"cut short", "it is damaged or cut short (its stored bytes changed, or some were lost, since it was written): unexpected EOF", func() { put(t, snapshots, name, good[:len(good)/2]) }},
		{"a part missing", "part 1 of 2", func() {
			put(t, snapshots, projections.SnapshotManifest, strings.Replace(manifest, "\n1\n", "\n2\n", 1))
		}},
		{"of another stream", "is not this stream's", func() {
			m := read(t, otherSnapshots, projections.SnapshotManifest)
			theirs := projections.SnapshotManifest + "/" + strings.Split(m, "\n")[1] + "/0"
			put(t, snapshots, theirs, read(t, otherSnapshots, theirs))
			put(t, snapshots, projections.SnapshotManifest, m)
		}},
		{"past the stream's end", fmt.Sprintf("and this stream ends at %d: it lost its last events", last), func() {
			m := read(t, longerSnapshots, projections.SnapshotManifest)
			theirs := projections.SnapshotManifest + "/" + strings.Split(m, "\n")[1] + "/0"
			put(t, snapshots, theirs, read(t, longerSnapshots, theirs))
			put(t, snapshots, projections.SnapshotManifest, m)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			put(t, snapshots, projections.SnapshotManifest, manifest)
			put(t, snapshots, name, good)
			tt.spoil()
			models, log := start(t, store, readOnly{snapshots})
			if !strings.Contains(log, "replaying the whole stream") || !strings.Contains(log, tt.log) {
				t.Errorf("the log does not say the snapshot was ignored (%q):\n%s", tt.log, log)
			}
			if strings.Contains(log, " sequence=0") {
				t.Errorf("the log gives the snapshot a sequence 0, which none covers:\n%s", log)
			}
			sameModels(t, models, full)
		})
	}
}

// readOnly is a snapshot store that refuses to write: a start that
// ignored a snapshot does not replace it when it stops.
type readOnly struct{ projections.SnapshotStore }

func (readOnly) Put(context.Context, string, io.Reader) (int64, error) { return 0, io.ErrClosedPipe }

func read(t *testing.T, o projections.SnapshotStore, name string) string {
	t.Helper()
	r, _, err := o.Get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func put(t *testing.T, o projections.SnapshotStore, name, content string) {
	t.Helper()
	if _, err := o.Put(context.Background(), name, strings.NewReader(content)); err != nil {
		t.Fatal(err)
	}
}

func TestASnapshotIsWrittenEverySoManyEventsApplied(t *testing.T) {
	store, snapshots := history(t, 300)
	var log lockedbuf.Buffer
	p := projections.NewProjector(store, slog.New(slog.NewTextHandler(&log, nil)), projections.NewModels().All()...)
	if err := p.KeepSnapshots(snapshots, 2); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wait, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	last, _ := store.LastSequence(ctx)
	if err := p.WaitFor(wait, last); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, store, domain.AuthorizationRecorded{Action: domain.ActionTokenIssued, Subject: "client:a", At: time.Now()},
		domain.AuthorizationRecorded{Action: domain.ActionTokenIssued, Subject: "client:b", At: time.Now()})
	for !strings.Contains(log.String(), "snapshot of the read models written") {
		select {
		case <-wait.Done():
			t.Fatalf("no snapshot written while running:\n%s", log.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	// None was written at the start: the first event applied after the
	// history is more than two events after none.
	m := read(t, snapshots, projections.SnapshotManifest)
	if !strings.HasPrefix(strings.Split(m, "\n")[1], fmt.Sprint(last+1, "-")) {
		t.Errorf("the snapshot written is %q, want one of sequence %d", m, last+1)
	}
}

func TestASnapshotThatCannotBeWrittenIsTriedAgainOnlyWhenTheNextFallsDue(t *testing.T) {
	store, snapshots := history(t, 300)
	var log lockedbuf.Buffer
	p := projections.NewProjector(store, slog.New(slog.NewTextHandler(&log, nil)), projections.NewModels().All()...)
	if err := p.KeepSnapshots(readOnly{snapshots}, 10); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	wait, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	last, _ := store.LastSequence(ctx)
	if err := p.WaitFor(wait, last); err != nil {
		t.Fatal(err)
	}
	// Ten events as they come: a snapshot falls due at the first, and
	// not again before the eleventh.
	var later []domain.Event
	for i := range 10 {
		later = append(later, domain.AuthorizationRecorded{Action: domain.ActionTokenIssued, Subject: fmt.Sprint("client:", i), At: time.Now()})
	}
	appendEvents(t, store, later...)
	if err := p.WaitFor(wait, last+10); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if tries := strings.Count(log.String(), "snapshot of the read models not written"); tries != 2 {
		t.Errorf("%d snapshots tried, want 2 (at the first event as it came, and at the stop):\n%s", tries, log.String())
	}
	// The stop's is the last try: not said to be tried again.
	if !strings.Contains(log.String(), "not written at the stop: the next start replays the events after the newest snapshot written before") ||
		strings.Count(log.String(), "tried again") != 1 {
		t.Errorf("the stop's snapshot not written is not said to be the last, with what the next start does:\n%s", log.String())
	}
}

// partNames lists the parts of snapshots in the object store.
func partNames(t *testing.T, o projections.SnapshotStore) []string {
	t.Helper()
	objects, err := o.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range objects {
		if strings.HasPrefix(f.Name, projections.SnapshotManifest+"/") {
			names = append(names, f.Name)
		}
	}
	return names
}

// namingMeanwhile is the object store of snapshots, where another replica
// names its snapshot, manifest, while this one writes its first part.
// With unreadable, the manifest cannot be read from then on (the store
// out of reach a moment).
type namingMeanwhile struct {
	projections.SnapshotStore
	manifest   string
	unreadable bool
	once       sync.Once
	named      atomic.Bool
}

func (n *namingMeanwhile) Put(ctx context.Context, name string, r io.Reader) (int64, error) {
	var err error
	n.once.Do(func() {
		_, err = n.SnapshotStore.Put(ctx, projections.SnapshotManifest, strings.NewReader(n.manifest))
		n.named.Store(true)
	})
	if err != nil {
		return 0, err
	}
	return n.SnapshotStore.Put(ctx, name, r)
}

func (n *namingMeanwhile) Get(ctx context.Context, name string) (io.ReadCloser, int64, error) {
	if n.unreadable && n.named.Load() && name == projections.SnapshotManifest {
		return nil, 0, errors.New("the object store did not answer")
	}
	return n.SnapshotStore.Get(ctx, name)
}

// namedAfterStart is the object store of snapshots, where another
// replica names its snapshot, manifest, once this one has started: after
// the start has read the manifest, before the stop reads it again.
type namedAfterStart struct {
	projections.SnapshotStore
	manifest string
	reads    int
}

func (n *namedAfterStart) Get(ctx context.Context, name string) (io.ReadCloser, int64, error) {
	if name == projections.SnapshotManifest {
		if n.reads++; n.reads == 2 {
			if _, err := n.SnapshotStore.Put(ctx, name, strings.NewReader(n.manifest)); err != nil {
				return nil, 0, err
			}
		}
	}
	return n.SnapshotStore.Get(ctx, name)
}

// Replicas share the snapshots: each leaves the newest named, and deletes
// only the parts of older ones.
func TestReplicasSharingSnapshotsLeaveTheNewestNamed(t *testing.T) {
	newer := "cargostream read models snapshot\n999999-1\n1\n"
	for _, tt := range []struct {
		name string
		// setup prepares the store before a replica stops and writes.
		setup func(t *testing.T, o projections.SnapshotStore) projections.SnapshotStore
		// manifest is what names the newest afterwards ("" ours), written
		// is whether the replica wrote its own, parts which are left.
		manifest string
		written  bool
		parts    []string
	}{
		{name: "another replica writing a newer one keeps its parts",
			setup: func(t *testing.T, o projections.SnapshotStore) projections.SnapshotStore {
				put(t, o, "read-models/999999-1/0", "part")
				return o
			},
			written: true, parts: []string{"ours", "read-models/999999-1/0"}},
		{name: "a newer one named while the replica ran is not written over",
			setup: func(t *testing.T, o projections.SnapshotStore) projections.SnapshotStore {
				return &namedAfterStart{SnapshotStore: o, manifest: newer}
			},
			manifest: newer},
		{name: "a newer one named while writing is not named over when the manifest cannot be read",
			setup: func(t *testing.T, o projections.SnapshotStore) projections.SnapshotStore {
				return &namingMeanwhile{SnapshotStore: o, manifest: newer, unreadable: true}
			},
			manifest: newer, parts: []string{"ours"}},
		{name: "a newer one named while writing is not named over, and ours is deleted",
			setup: func(t *testing.T, o projections.SnapshotStore) projections.SnapshotStore {
				return &namingMeanwhile{SnapshotStore: o, manifest: newer}
			},
			manifest: newer},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, snapshots := history(t, 300)
			_, log := start(t, store, tt.setup(t, snapshots))
			if got := strings.Contains(log, "snapshot of the read models written"); got != tt.written {
				t.Errorf("written = %v, want %v:\n%s", got, tt.written, log)
			}
			manifest := read(t, snapshots, projections.SnapshotManifest)
			last, _ := store.LastSequence(context.Background())
			want := tt.manifest
			if want == "" {
				want = fmt.Sprint(last, "-")
			}
			if !strings.Contains(manifest, want) {
				t.Errorf("the manifest names %q, want %q", manifest, want)
			}
			var parts []string
			for _, name := range partNames(t, snapshots) {
				if strings.HasPrefix(name, fmt.Sprint("read-models/", last, "-")) {
					name = "ours"
				}
				if !slices.Contains(parts, name) {
					parts = append(parts, name)
				}
			}
			if slices.Sort(parts); !slices.Equal(parts, tt.parts) {
				t.Errorf("parts left %q, want %q", parts, tt.parts)
			}
		})
	}
}

// A snapshot a start ignored, or one deleted while the replica ran, is
// no reason to write none at the stop: the next start would replay the
// whole stream again, and the parts of the one ignored would stay for
// good.
func TestAStopAfterAStartWithoutAUsableSnapshotLeavesOne(t *testing.T) {
	for _, tt := range []struct {
		name string
		// spoil is done to the snapshot a first start left, before the
		// replica starts again, or while it runs (running).
		spoil   func(t *testing.T, snapshots projections.SnapshotStore, id string)
		running bool
	}{
		{name: "a byte of it changed", spoil: func(t *testing.T, snapshots projections.SnapshotStore, id string) {
			part := projections.SnapshotManifest + "/" + id + "/0"
			b := []byte(read(t, snapshots, part))
			b[len(b)/2] ^= 0x20
			put(t, snapshots, part, string(b))
		}},
		{name: "of a longer stream, such as before a restore from an older backup", spoil: func(t *testing.T, snapshots projections.SnapshotStore, id string) {
			other, otherSnapshots := history(t, 1500)
			start(t, other, otherSnapshots)
			m := read(t, otherSnapshots, projections.SnapshotManifest)
			theirs := projections.SnapshotManifest + "/" + strings.Split(m, "\n")[1] + "/0"
			put(t, snapshots, theirs, read(t, otherSnapshots, theirs))
			put(t, snapshots, projections.SnapshotManifest, m)
			// Only the other stream's is there, as after a restore.
			if err := snapshots.Delete(context.Background(), projections.SnapshotManifest+"/"+id+"/0"); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "its manifest deleted while the replica ran", running: true, spoil: func(t *testing.T, snapshots projections.SnapshotStore, id string) {
			if err := snapshots.Delete(context.Background(), projections.SnapshotManifest); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, snapshots := history(t, 500)
			start(t, store, snapshots)
			id := strings.Split(read(t, snapshots, projections.SnapshotManifest), "\n")[1]
			var log string
			if tt.running {
				log = startAnd(t, store, snapshots, func() { tt.spoil(t, snapshots, id) })
			} else {
				tt.spoil(t, snapshots, id)
				_, log = start(t, store, snapshots)
			}
			if !strings.Contains(log, "snapshot of the read models written") {
				t.Fatalf("the stop wrote no snapshot:\n%s", log)
			}
			if _, log := start(t, store, snapshots); !strings.Contains(log, "read models loaded from a snapshot") {
				t.Errorf("the start after did not load a snapshot:\n%s", log)
			}
			named := strings.Split(read(t, snapshots, projections.SnapshotManifest), "\n")[1]
			for _, part := range partNames(t, snapshots) {
				if !strings.HasPrefix(part, projections.SnapshotManifest+"/"+named+"/") {
					t.Errorf("part %s of a snapshot no longer named is left; %s is named", part, named)
				}
			}
		})
	}
}

// startAnd is start, with during done once the read models have caught
// up, before the stop.
func startAnd(t *testing.T, store *eventstore.Store, snapshots projections.SnapshotStore, during func()) string {
	t.Helper()
	return runUntilCaughtUp(t, store, snapshots, projections.NewModels().All(), during)
}

// runUntilCaughtUp is start and startAnd: it runs a projector over models,
// keeping snapshots unless they are nil, does during once the models have
// caught up with the stream, then stops the projector and returns what it
// logged.
func runUntilCaughtUp(t *testing.T, store *eventstore.Store, snapshots projections.SnapshotStore, models []projections.ReadModel, during func()) string {
	t.Helper()
	var log lockedbuf.Buffer
	p := projections.NewProjector(store, slog.New(slog.NewTextHandler(&log, nil)), models...)
	if snapshots != nil {
		if err := p.KeepSnapshots(snapshots, 0); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	// A test that fails before the stop leaves no projector running.
	defer func() { cancel(); <-done }()
	last, err := store.LastSequence(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wait, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if err := p.WaitFor(wait, last); err != nil {
		t.Fatalf("the read models did not reach %d: %v\n%s", last, err, log.String())
	}
	during()
	// The stop is what leaves a snapshot, so it comes before the log is read.
	cancel()
	<-done
	return log.String()
}
