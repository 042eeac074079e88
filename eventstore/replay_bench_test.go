package eventstore_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/streamgen"
	"github.com/cargostream/cargostream/projections"
)

// replayEvents is the size of the history BenchmarkReplay replays.
const replayEvents = 100_000

// BenchmarkReplay measures, in one run, the yardstick of replay (a bare
// ordered consumer reading every event of the stream, decoding nothing)
// against the projector rebuilding every read model of cargod from the
// same stream, and reports both rates and their ratio. Each operation
// replays the whole history both ways, one after the other, so that both
// meet the same machine.
//
//	go test ./eventstore -run '^$' -bench Replay -benchtime 3x
func BenchmarkReplay(b *testing.B) {
	if testing.Short() {
		b.Skip("writes a history of 100k events first")
	}
	ctx := context.Background()
	store, _, err := streamgen.Embedded(ctx, b.TempDir(), streamgen.Options{Events: replayEvents})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	last, err := store.LastSequence(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var raw, rebuild time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if n, err := eventstore.RawReplay(ctx, store); err != nil || uint64(n) != last {
			b.Fatalf("raw replay read %d of %d: %v", n, last, err)
		}
		raw += time.Since(start)
		start = time.Now()
		rebuildReadModels(ctx, b, store, last)
		rebuild += time.Since(start)
	}
	b.ReportMetric(float64(last)*float64(b.N)/raw.Seconds(), "raw-events/s")
	b.ReportMetric(float64(last)*float64(b.N)/rebuild.Seconds(), "rebuild-events/s")
	b.ReportMetric(raw.Seconds()/rebuild.Seconds(), "rebuild/raw")
}

// rebuildReadModels replays the stream into new read models, as cargod
// does at start without a snapshot, until they hold event last.
func rebuildReadModels(ctx context.Context, b *testing.B, store *eventstore.Store, last uint64) {
	p := projections.NewProjector(store, slog.New(slog.DiscardHandler), projections.NewModels().All()...)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := p.WaitFor(ctx, last); err != nil {
		b.Fatal(err)
	}
}
