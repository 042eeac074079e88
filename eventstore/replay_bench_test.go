package eventstore_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/streamgen"
	"github.com/cargostream/cargostream/projections"
)

// replayHistories are the sizes of the histories BenchmarkReplay
// replays: two, so that what the read models hold per event can be told
// from what they hold whatever the history (reference data, timetables).
var replayHistories = []int{100_000, 400_000}

// BenchmarkReplay measures, in one run, the yardstick of replay (a bare
// ordered consumer reading every event of the stream, decoding nothing)
// against the projector rebuilding every read model of cargod from the
// same stream, and reports both rates and their ratio. Each operation
// replays the whole history both ways, one after the other, so that both
// meet the same machine. It then reports the heap the read models hold,
// per event of the history (see reportHeapPerEvent): replayed, and
// loaded from the snapshot those left at their stop ("restored-…"), as a
// restart loads them.
//
//	go test ./eventstore -run '^$' -bench Replay/events=100k -benchtime 3x
func BenchmarkReplay(b *testing.B) {
	for _, n := range replayHistories {
		b.Run(fmt.Sprintf("events=%dk", n/1000), func(b *testing.B) { benchmarkReplay(b, n) })
	}
}

func benchmarkReplay(b *testing.B, events int) {
	if testing.Short() {
		b.Skipf("writes a history of %d events first", events)
	}
	ctx := context.Background()
	store, last := history(b, events)
	defer store.Close()
	var raw, rebuild time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if n, err := eventstore.RawReplay(ctx, store); err != nil || uint64(n) != last {
			b.Fatalf("raw replay read %d of %d: %v", n, last, err)
		}
		raw += time.Since(start)
		start = time.Now()
		rebuildReadModels(ctx, b, store, last, nil)
		rebuild += time.Since(start)
	}
	b.ReportMetric(float64(last)*float64(b.N)/raw.Seconds(), "raw-events/s")
	b.ReportMetric(float64(last)*float64(b.N)/rebuild.Seconds(), "rebuild-events/s")
	b.ReportMetric(raw.Seconds()/rebuild.Seconds(), "rebuild/raw")
	snapshots, err := store.Objects(ctx, "snapshots")
	if err != nil {
		b.Fatal(err)
	}
	replayed := rebuildReadModels(ctx, b, store, last, snapshots)
	restored := rebuildReadModels(ctx, b, store, last, snapshots)
	// The embedded server's caches come and go: closed, it holds nothing
	// that would blur the read models' figures.
	store.Close()
	if f := flag.Lookup("test.memprofile"); f != nil && f.Value.String() != "" {
		// The heap profile is taken after every benchmark has run: the
		// read models must still be alive then to show as in use, so
		// they are not dropped one by one to be measured.
		heldModels = append(heldModels, replayed, restored)
		b.Log("read models kept for the heap profile: no B/event figures")
		return
	}
	reportHeapPerEvent(b, "", &replayed, last)
	reportHeapPerEvent(b, "restored-", &restored, last)
}

// history opens a store on an embedded server and writes a history of
// about events events to it: its last sequence is last.
func history(b *testing.B, events int) (store *eventstore.Store, last uint64) {
	store, _, err := streamgen.Embedded(context.Background(), b.TempDir(), streamgen.Options{Events: events})
	if err != nil {
		b.Fatal(err)
	}
	if last, err = store.LastSequence(context.Background()); err != nil {
		store.Close()
		b.Fatal(err)
	}
	return store, last
}

// heldModels keeps the read models built alive after the benchmarks, for
// a heap profile (-memprofile).
var heldModels []projections.Models

// live is the bytes of the heap that are live, after full collections.
func live() float64 {
	// Twice: what finalizers keep (the closed store's files) goes only at
	// the second collection.
	runtime.GC()
	runtime.GC()
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return float64(s.HeapAlloc)
}

// reportHeapPerEvent reports the bytes of heap the read models hold per
// event of the history, under names that start with prefix: all of them
// together ("all-B/event"), and each ("<model>-B/event"): what the heap
// loses when that model goes, the models going one after another in the
// order of projections.Models, so that the figures add up to all. Memory
// models share (a string of an event's envelope both keep) counts to the
// last of them to go.
func reportHeapPerEvent(b *testing.B, prefix string, models *projections.Models, events uint64) {
	was := live()
	v := reflect.ValueOf(models).Elem()
	before := was
	for i := range v.NumField() {
		v.Field(i).SetZero()
		after := live()
		b.ReportMetric((before-after)/float64(events), prefix+strings.ToLower(v.Type().Field(i).Name)+"-B/event")
		before = after
	}
	b.ReportMetric((was-before)/float64(events), prefix+"all-B/event")
}

// rebuildReadModels builds new read models, as cargod does at start,
// until they hold event last: replaying the stream, or with snapshots,
// loading the newest snapshot there is first; then stops them, which
// leaves a snapshot in snapshots if they have one.
func rebuildReadModels(ctx context.Context, b testing.TB, store *eventstore.Store, last uint64, snapshots projections.SnapshotStore) projections.Models {
	models := projections.NewModels()
	p := projections.NewProjector(store, slog.New(slog.DiscardHandler), models.All()...)
	if snapshots != nil {
		if err := p.KeepSnapshots(snapshots, 0); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := p.WaitFor(ctx, last); err != nil {
		b.Fatal(err)
	}
	return models
}
