package projections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/projections"
)

// following runs a projector over new read models until the test ends,
// and returns it with its models once it has caught up with the stream.
func following(t *testing.T, store *eventstore.Store) (*projections.Projector, projections.Models) {
	t.Helper()
	models := projections.NewModels()
	p := projections.NewProjector(store, slog.New(slog.DiscardHandler), models.All()...)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { p.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	last, err := store.LastSequence(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wait, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if err := p.WaitFor(wait, last); err != nil {
		t.Fatal(err)
	}
	return p, models
}

// runJob starts a job and waits for its end.
func runJob(t *testing.T, m *projections.Maintenance, kind projections.JobKind) projections.JobStatus {
	t.Helper()
	if _, err := m.Start(context.Background(), kind); err != nil {
		t.Fatalf("starting a %s: %v", kind, err)
	}
	return waitForEnd(t, m, kind)
}

// waitForEnd waits for the end of the running job of kind.
func waitForEnd(t *testing.T, m *projections.Maintenance, kind projections.JobKind) projections.JobStatus {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		s, err := m.Status(kind)
		if err != nil {
			t.Fatal(err)
		}
		if s.State != projections.JobRunning {
			return s
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the %s did not end within a minute", kind)
	return projections.JobStatus{}
}

func TestVerifyFindsAReadModelThatDiffersFromAFreshReplayAndRebuildRepairsIt(t *testing.T) {
	store, _ := history(t, 2000)
	p, models := following(t, store)
	m := projections.NewMaintenance(context.Background(), p, store, slog.New(slog.DiscardHandler))
	var cachesDropped atomic.Int32
	m.AfterRebuild(func() { cachesDropped.Add(1) })

	if s := runJob(t, m, projections.Verify); s.State != projections.JobSucceeded || len(s.Models) > 0 || len(s.StreamProblems) > 0 {
		t.Fatalf("verify of healthy read models: %+v", s)
	}

	// One quote goes missing from the live model, as a bug would lose it.
	byID := reflect.ValueOf(projections.Fields(models.Quotes)[0]).Elem()
	lost := byID.MapKeys()[0]
	byID.SetMapIndex(lost, reflect.Value{})
	s := runJob(t, m, projections.Verify)
	if s.State != projections.JobFailed || len(s.Models) != 1 {
		t.Fatalf("verify of a corrupted read model: %+v", s)
	}
	want := `Quotes.byID["` + lost.String() + `"]: only in a fresh replay`
	if got := s.Models[0].String(); got != want {
		t.Errorf("the difference reads\n%s\nwant\n%s", got, want)
	}

	// Events keep coming while the rebuild runs.
	writing, stopWriting := context.WithCancel(context.Background())
	var wrote sync.WaitGroup
	wrote.Go(func() { keepWriting(writing, t, store) })
	rebuilt := runJob(t, m, projections.Rebuild)
	stopWriting()
	wrote.Wait()
	t.Logf("rebuild: %d events at %.0f/s", rebuilt.Done, rebuilt.Rate)
	if rebuilt.State != projections.JobSucceeded || rebuilt.Sequence == 0 || rebuilt.Done == 0 || rebuilt.Rate <= 0 {
		t.Fatalf("rebuild: %+v", rebuilt)
	}
	if !byID.MapIndex(lost).IsValid() {
		t.Error("the rebuild did not bring the lost quote back")
	}
	if n := cachesDropped.Load(); n != 1 {
		t.Errorf("after one rebuild (and two verifications) the caches were told %d times, want once", n)
	}
	if s := runJob(t, m, projections.Verify); s.State != projections.JobSucceeded {
		var found []string
		for _, d := range s.Models {
			found = append(found, d.String())
		}
		t.Errorf("verify after the rebuild: %s %s", s.Error, strings.Join(found, "\n"))
	}
}

// keepWriting appends authorization events, each on an aggregate of its
// own, until ctx ends.
func keepWriting(ctx context.Context, t *testing.T, store *eventstore.Store) {
	for i := 0; ctx.Err() == nil; i++ {
		id := fmt.Sprintf("during-%d", i)
		data, _ := json.Marshal(domain.AuthorizationRecorded{Action: domain.ActionTokenIssued, Subject: "client:forwarder-01"})
		_, err := store.Append(ctx, domain.Aggregate{Type: domain.AggregateAuthorization, ID: id}, 0, []domain.Envelope{{
			Type: "AuthorizationRecorded", SchemaVersion: 1, EventID: id, CommandID: id, CorrelationID: id, Actor: "client:forwarder-01",
			OccurredAt: time.Now(), Data: data}})
		if err != nil && ctx.Err() == nil {
			t.Error(err)
			return
		}
	}
}

// heldChecker checks the stream once release is closed.
type heldChecker struct {
	*eventstore.Store
	release chan struct{}
}

func (c heldChecker) Check(ctx context.Context, to uint64, progress func(uint64), problem func(domain.StreamProblem)) error {
	<-c.release
	return c.Store.Check(ctx, to, progress, problem)
}

func TestOneMaintenanceJobRunsAtATime(t *testing.T) {
	store, _ := history(t, 200)
	p, _ := following(t, store)
	checker := heldChecker{store, make(chan struct{})}
	m := projections.NewMaintenance(context.Background(), p, checker, slog.New(slog.DiscardHandler))
	if _, err := m.Status(projections.Verify); err == nil || !strings.Contains(err.Error(), "no verify of the read models ran") {
		t.Errorf("status before any verify: %v", err)
	}
	if _, err := m.Start(context.Background(), projections.Verify); err != nil {
		t.Fatal(err)
	}
	_, err := m.Start(context.Background(), projections.Rebuild)
	if err == nil || domain.ErrorCode(err) != domain.Conflict || !strings.Contains(err.Error(), "a verify of the read models is running") {
		t.Errorf("a rebuild started during a verify: %v", err)
	}
	close(checker.release)
	if s := waitForEnd(t, m, projections.Verify); s.State != projections.JobSucceeded {
		t.Errorf("the verify ended %+v", s)
	}
	if s := runJob(t, m, projections.Rebuild); s.State != projections.JobSucceeded {
		t.Errorf("a rebuild after the verify ended %+v", s)
	}
}

// writingFirst is the stream's checker, where an event without a
// correlation id is stored (as a writer with a bug would store it) and
// applied by the live read models just as the stream's check begins.
type writingFirst struct {
	*eventstore.Store
	p     *projections.Projector
	wrote atomic.Uint64 // its sequence
}

func (c *writingFirst) Check(ctx context.Context, to uint64, progress func(uint64), problem func(domain.StreamProblem)) error {
	if c.wrote.Load() == 0 {
		data, _ := json.Marshal(domain.AuthorizationRecorded{Action: domain.ActionTokenIssued, Subject: "client:forwarder-01"})
		seqs, err := c.Store.Append(ctx, domain.Aggregate{Type: domain.AggregateAuthorization, ID: "no-correlation"}, 0, []domain.Envelope{{
			Type: "AuthorizationRecorded", SchemaVersion: 1, EventID: "no-correlation", CommandID: "no-correlation", Actor: "client:forwarder-01",
			OccurredAt: time.Now(), Data: data}})
		if err != nil {
			return err
		}
		if err := c.p.WaitFor(ctx, seqs[0]); err != nil {
			return err
		}
		c.wrote.Store(seqs[0])
	}
	return c.Store.Check(ctx, to, progress, problem)
}

// A verification says the events up to its sequence are whole: every one
// of them is checked, those stored while it ran too.
func TestVerifyChecksEveryEventUpToTheSequenceItReports(t *testing.T) {
	store, _ := history(t, 200)
	p, _ := following(t, store)
	checker := &writingFirst{Store: store, p: p}
	m := projections.NewMaintenance(context.Background(), p, checker, slog.New(slog.DiscardHandler))
	s := runJob(t, m, projections.Verify)
	found := len(s.StreamProblems) == 1 && s.StreamProblems[0].Sequence == checker.wrote.Load()
	if s.Sequence >= checker.wrote.Load() && !found {
		t.Errorf("verify reports sequence %d, past the event at %d without a correlation id, and found %+v (%s)",
			s.Sequence, checker.wrote.Load(), s.StreamProblems, s.Error)
	}
}
