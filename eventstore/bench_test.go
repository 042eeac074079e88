package eventstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAppend appends one event to a new aggregate per operation on
// the embedded server, synced to disk before each acknowledgement, from
// parallel writers as the HTTP layer would.
func BenchmarkAppend(b *testing.B) {
	s := openForTest(b, Options{DataDir: b.TempDir()})
	ctx := context.Background()
	data := []byte(`{"quoteId":"3eeb7d56-42f5-53b2-b5c5-09311e2dc3ea","organizationId":"demo-forwarder","origin":"FRA","destination":"JFK","pieces":2,"grossWeightKg":350.5}`)
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			id := fmt.Sprint("e", i)
			e := Event{Type: "QuoteRequested", SchemaVersion: 1, EventID: id, CommandID: id, OccurredAt: time.Now(), Data: data}
			if _, err := s.Append(ctx, Aggregate{"quote", id}, 0, []Event{e}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
