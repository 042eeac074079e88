package commands

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/storetest"
	"github.com/cargostream/cargostream/projections"
)

// openTestFiles opens a test store and its bucket of documents' files.
func openTestFiles(t *testing.T) (*eventstore.Store, *eventstore.Objects) {
	t.Helper()
	store := storetest.Open(t)
	files, err := store.Objects(context.Background(), "documents")
	if err != nil {
		t.Fatal(err)
	}
	return store, files
}

// Files no upload names are swept once old enough; recorded ones stay.
func TestFileSweepDeletesOnlyOldFilesNoUploadNames(t *testing.T) {
	ctx := context.Background()
	store, files := openTestFiles(t)
	documents := projections.NewDocuments()
	documents.Apply(domain.Record{}, domain.DocumentUploaded{DocumentID: "recorded", AWBNumber: "020-00000011"})
	for _, name := range []string{"recorded", "orphan"} {
		if _, err := files.Put(ctx, name, strings.NewReader("%PDF-1.7\n"+name)); err != nil {
			t.Fatal(err)
		}
	}
	sweep := NewFileSweep(files, documents, store, slog.New(slog.DiscardHandler))

	if n, err := sweep.Sweep(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("sweep of young files = %d, %v", n, err)
	}
	if n, err := sweep.Sweep(ctx, 0); err != nil || n != 1 {
		t.Fatalf("sweep = %d, %v; want the orphan", n, err)
	}
	left, err := files.List(ctx)
	if err != nil || len(left) != 1 || left[0].Name != "recorded" {
		t.Errorf("left = %+v, %v", left, err)
	}
}

// The other stores a sweep is given (the snapshots of the read models)
// are swept of what crashes left half stored, as old as the documents'
// leftovers, and counted with them.
func TestFileSweepSweepsTheHalfStoredPartsOfTheOtherStoresToo(t *testing.T) {
	ctx := context.Background()
	store, files := openTestFiles(t)
	snapshots := &halfStoredParts{parts: 2}
	sweep := NewFileSweep(files, projections.NewDocuments(), store, slog.New(slog.DiscardHandler), snapshots)
	if n, err := sweep.Sweep(ctx, time.Hour); err != nil || n != 2 {
		t.Errorf("sweep = %d, %v; want the 2 half-stored parts of the other store", n, err)
	}
	if snapshots.age != time.Hour {
		t.Errorf("the other store was swept of parts older than %s, want %s", snapshots.age, time.Hour)
	}
}

// halfStoredParts is a store of files holding parts crashes left, which
// it says it deleted, and remembers how old they had to be; or fails
// with err.
type halfStoredParts struct {
	parts int
	age   time.Duration
	err   error
}

func (h *halfStoredParts) DeleteUnnamed(_ context.Context, age time.Duration) (int, error) {
	h.age = age
	if h.err != nil {
		return 0, h.err
	}
	return h.parts, nil
}

// A store of the others that cannot be swept (the snapshots' stream
// unavailable, its listing short) keeps neither the documents' orphans
// nor the stores after it from being swept; its failure is reported.
func TestFileSweepOfTheDocumentsGoesOnWhenAnotherStoreFails(t *testing.T) {
	ctx := context.Background()
	store, files := openTestFiles(t)
	if _, err := files.Put(ctx, "orphan", strings.NewReader("%PDF-1.7\norphan")); err != nil {
		t.Fatal(err)
	}
	failing := &halfStoredParts{err: errors.New("snapshots unavailable")}
	after := &halfStoredParts{parts: 2}
	sweep := NewFileSweep(files, projections.NewDocuments(), store, slog.New(slog.DiscardHandler), failing, after)
	n, err := sweep.Sweep(ctx, 0)
	if !errors.Is(err, failing.err) {
		t.Errorf("sweep = %v, want the other store's failure", err)
	}
	if n != 3 {
		t.Errorf("sweep = %d, want the orphan and the 2 parts of the store after the failing one", n)
	}
	if left, err := files.List(ctx); err != nil || len(left) != 0 {
		t.Errorf("left = %+v, %v; want the orphan swept", left, err)
	}
}

// A replica whose read models lag (they apply another replica's events
// late, or catch up after a partition) does not know every upload that is
// recorded: the sweep keeps the file of an upload the stream records even
// when the read model has not applied it yet.
func TestFileSweepKeepsTheFileOfAnUploadTheReadModelHasNotAppliedYet(t *testing.T) {
	ctx := context.Background()
	store, files := openTestFiles(t)
	h := New(store, 4, builtinReference())
	fwd := domain.Principal{Subject: "client:f", OrganizationID: "f", Role: domain.RoleForwarder}
	m := NewMeta(fwd, "", "")
	content := "%PDF-1.7\nrecorded elsewhere"
	if _, err := files.Put(ctx, DocumentID(m), strings.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	res, err := h.UploadDocument(ctx, m, domain.DocumentUploaded{AWBNumber: "020-00000011", DocumentType: "INVOICE",
		FileName: "invoice.pdf", ContentType: "application/pdf", Size: int64(len(content)), SHA256: "00"}, "")
	if err != nil {
		t.Fatal(err)
	}
	// The read model of this replica has not applied the upload.
	sweep := NewFileSweep(files, projections.NewDocuments(), store, slog.New(slog.DiscardHandler))
	if n, err := sweep.Sweep(ctx, 0); err != nil || n != 0 {
		t.Errorf("sweep = %d, %v; want the recorded file kept", n, err)
	}
	if r, _, err := files.Get(ctx, res.State.DocumentID); err != nil {
		t.Errorf("the file of the recorded upload: %v", err)
	} else {
		r.Close()
	}
}

// A sweep that never ends (the store's listing waiting for a name that
// another replica's sweep purged) is cut short and logged, rather than
// stopping every sweep after it.
func TestASweepThatNeverEndsIsCutShortAndLogged(t *testing.T) {
	lines := make(loggedLines, 8)
	sweep := NewFileSweep(hangingFiles{}, projections.NewDocuments(), nil, slog.New(lines))
	sweep.timeout = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sweep.Run(ctx); close(done) }()
	select {
	case line := <-lines:
		if !strings.Contains(line, "orphaned files not swept") || !strings.Contains(line, "deadline exceeded") {
			t.Errorf("logged %q, want the sweep cut short", line)
		}
	case <-time.After(30 * time.Second):
		t.Error("the sweep still runs after 30 s, its timeout 10 ms")
	}
	cancel()
	<-done
}

// hangingFiles is a store of files whose every call lasts until its
// context ends, as a listing that waits for a purged name does.
type hangingFiles struct{}

func (hangingFiles) List(ctx context.Context) ([]domain.StoredFile, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (hangingFiles) Delete(ctx context.Context, _ string) error {
	<-ctx.Done()
	return ctx.Err()
}

func (hangingFiles) DeleteUnnamed(ctx context.Context, _ time.Duration) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

// loggedLines is a log handler that sends each line (its message and
// attributes) to the channel.
type loggedLines chan string

func (loggedLines) Enabled(context.Context, slog.Level) bool { return true }

func (c loggedLines) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	c <- line
	return nil
}

func (c loggedLines) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c loggedLines) WithGroup(string) slog.Handler      { return c }
