package eventstore_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/projections"
)

// auditReaders is how many pages of the audit log are read at once: the
// 160 concurrent GET /api/audit-logs that took p50 4.7 s a page.
const auditReaders = 160

// BenchmarkAuditPages reads pages of 100 entries of the audit log of a
// history of 20k events from 160 goroutines at once, against the embedded
// server, and beside it, in the same run, the yardstick: the same
// sequences each page reads, read with the stream's plain GetMsg, eight
// at a time, decoding nothing. "newest" reads the log's first ten pages
// over and over, as readers of a log mostly do; "every" reads each page of
// the log in turn. Each page benchmark reports its rate against the
// yardstick's of the same run ("page/raw"). Each run of a page benchmark starts with the store's
// cache of events empty, and reports at its end what the cache held, and
// its heap (the heap its emptying leaves; it may include caches of the
// embedded server dropped meanwhile).
//
//	go test ./eventstore -run '^$' -bench AuditPages -count 3
func BenchmarkAuditPages(b *testing.B) {
	if testing.Short() {
		b.Skip("writes a history of 20k events first")
	}
	ctx := context.Background()
	store, last := history(b, 20_000)
	defer store.Close()
	audit := rebuildReadModels(ctx, b, store, last, nil).Audit
	// What each page reads, for the yardstick.
	rec := &recordingEvents{store: store}
	var pages [][]uint64
	for page := 1; ; page++ {
		rec.seqs = nil
		entries, _, err := audit.Entries(ctx, rec, projections.AuditFilter{}, page, 100)
		if err != nil {
			b.Fatal(err)
		}
		if len(entries) < 100 {
			break
		}
		pages = append(pages, rec.seqs)
	}
	for _, c := range []struct {
		name  string
		pages int
	}{{"newest", 10}, {"every", len(pages)}} {
		var rawRate float64
		b.Run(c.name+"/raw", func(b *testing.B) {
			rawRate = readPages(b, func(page int) error { return eventstore.RawGets(ctx, store, pages[page%c.pages]) })
		})
		b.Run(c.name+"/page", func(b *testing.B) {
			rate := readPages(b, func(page int) error {
				entries, _, err := audit.Entries(ctx, store, projections.AuditFilter{}, page%c.pages+1, 100)
				if err == nil && len(entries) != 100 {
					err = fmt.Errorf("page %d has %d entries", page%c.pages+1, len(entries))
				}
				return err
			})
			b.ReportMetric(rate/rawRate, "page/raw")
			reportRecordCache(b, store)
		})
	}
}

// reportRecordCache reports what the store's cache of events read by
// sequence holds, and the heap it takes, by the heap it leaves when
// emptied, which it is.
func reportRecordCache(b *testing.B, store *eventstore.Store) {
	b.StopTimer()
	before := live()
	events, counted := eventstore.DropRecordCache(store)
	b.ReportMetric(float64(events), "cached-events")
	b.ReportMetric(float64(counted)/1e6, "cache-counted-MB")
	b.ReportMetric((before-live())/1e6, "cache-heap-MB")
}

// readPages reads a page per operation from auditReaders goroutines, the
// n-th page read being page n, and reports and returns the rate.
func readPages(b *testing.B, read func(page int) error) (pagesPerSecond float64) {
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(max(1, auditReaders/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := read(int(n.Add(1) - 1)); err != nil {
				b.Fatal(err)
			}
		}
	})
	pagesPerSecond = float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(pagesPerSecond, "pages/s")
	return pagesPerSecond
}

// recordingEvents reads events from store, and keeps which.
type recordingEvents struct {
	store *eventstore.Store
	mu    sync.Mutex
	seqs  []uint64
}

func (r *recordingEvents) RecordsAt(ctx context.Context, seqs []uint64) ([]domain.Record, error) {
	r.mu.Lock()
	r.seqs = append(r.seqs, slices.Clone(seqs)...)
	r.mu.Unlock()
	return r.store.RecordsAt(ctx, seqs)
}
