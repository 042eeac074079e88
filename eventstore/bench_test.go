package eventstore

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The benchmarks write from 64 goroutines, as 64 HTTP clients would, to
// the embedded server with every write synced to disk. BenchmarkRawPublish
// is the yardstick: plain JetStream publishes with the same headers,
// without the committer, so Append/RawPublish is what group commit buys.
//
//	go test ./eventstore -run '^$' -bench . -benchtime 5s

const benchWriters = 64

var benchData = []byte(`{"quoteId":"3eeb7d56-42f5-53b2-b5c5-09311e2dc3ea","organizationId":"demo-forwarder","origin":"FRA","destination":"JFK","pieces":2,"grossWeightKg":350.5}`)

// BenchmarkAppend appends one event to a new aggregate per operation.
func BenchmarkAppend(b *testing.B) {
	benchAppend(b, 1)
}

// BenchmarkAppendDecisionOfThree appends three events (one decision) to a
// new aggregate per operation.
func BenchmarkAppendDecisionOfThree(b *testing.B) {
	benchAppend(b, 3)
}

func benchAppend(b *testing.B, events int) {
	s := openForTest(b, Options{DataDir: b.TempDir()})
	benchWrites(b, func(id string) error {
		decision := make([]domain.Envelope, events)
		for i := range decision {
			decision[i] = benchEvent(fmt.Sprint(id, "-", i), id)
		}
		_, err := s.Append(context.Background(), domain.Aggregate{Type: "quote", ID: id}, 0, decision)
		return err
	})
}

// BenchmarkRawPublish publishes one event per operation straight to
// JetStream, with the headers Append sets.
func BenchmarkRawPublish(b *testing.B) {
	s := openForTest(b, Options{DataDir: b.TempDir()})
	benchWrites(b, func(id string) error {
		e := benchEvent(id, id)
		msg := &nats.Msg{Subject: s.subject(domain.Aggregate{Type: "quote", ID: id}), Header: header(e), Data: e.Data}
		_, err := s.js.PublishMsg(context.Background(), msg, jetstream.WithMsgID(id), jetstream.WithExpectLastSequencePerSubject(0))
		return err
	})
}

func benchEvent(id, commandID string) domain.Envelope {
	return domain.Envelope{Type: "QuoteRequested", SchemaVersion: 1, EventID: id, CommandID: commandID, OccurredAt: time.Now(), Data: benchData}
}

// benchWrites runs write from benchWriters goroutines, each time with a
// new id, and reports the rate.
func benchWrites(b *testing.B, write func(id string) error) {
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(benchWriters / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := write(fmt.Sprint("e", n.Add(1))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// BenchmarkLoadLongHistory loads an aggregate of 5,000 events with no
// state cached (a read model's first load after a restart, a history
// read), in the same run as two yardsticks: a bare ordered consumer of
// the aggregate's subject that decodes nothing (the most a load could
// do), and the walk of one request an event that loads used to make.
//
//	go test ./eventstore -run '^$' -bench LoadLongHistory
func BenchmarkLoadLongHistory(b *testing.B) {
	const events = 5000
	s := openForTest(b, Options{DataDir: b.TempDir()})
	ctx := context.Background()
	agg := domain.Aggregate{Type: "awbledger", ID: "long"}
	var last uint64
	for i := 0; i < events; i += 1000 {
		decision := make([]domain.Envelope, 1000)
		for j := range decision {
			decision[j] = benchEvent(fmt.Sprint("e", i+j), "long")
		}
		seqs, err := s.Append(ctx, agg, last, decision)
		if err != nil {
			b.Fatal(err)
		}
		last = seqs[len(seqs)-1]
		// Other aggregates' events between, as in a real stream.
		if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: fmt.Sprint("q", i)}, 0, []domain.Envelope{benchEvent(fmt.Sprint("q", i), "q")}); err != nil {
			b.Fatal(err)
		}
	}
	subject := s.subject(agg)
	for _, way := range []struct {
		name string
		read func() (int, error)
	}{
		{"raw consumer", func() (int, error) {
			n := 0
			err := s.readSubject(ctx, subject, 1, last+1, func(uint64, time.Time, nats.Header, []byte) { n++ }) // to the end
			return n, err
		}},
		{"one request an event", func() (int, error) {
			n := 0
			for seq := uint64(1); seq <= last; n++ {
				m, err := s.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
				if err != nil {
					return n, err
				}
				seq = m.Sequence + 1
			}
			return n, nil
		}},
		{"load", func() (int, error) {
			recs, err := s.LoadAfter(ctx, agg, 0)
			return len(recs), err
		}},
	} {
		b.Run(way.name, func(b *testing.B) {
			for range b.N {
				if n, err := way.read(); err != nil || n != events {
					b.Fatalf("read %d events (%v), want %d", n, err, events)
				}
			}
			b.ReportMetric(float64(events*b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
