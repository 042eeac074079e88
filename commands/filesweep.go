package commands

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// StoredFiles are the files kept beside the events, by name
// (eventstore.Objects implements it). Deleting a file that is not there
// is no error.
type StoredFiles interface {
	List(ctx context.Context) ([]domain.StoredFile, error)
	Delete(ctx context.Context, name string) error
	HalfStored
}

// HalfStored is a store of files that a crash mid-write can leave parts of
// a file in (eventstore.Objects). DeleteUnnamed deletes what stores of
// files left unfinished and no file names, once older than age, and says
// of how many; and the markers deleted files left.
type HalfStored interface {
	DeleteUnnamed(ctx context.Context, age time.Duration) (int, error)
}

// RecordedDocuments are the document uploads the read models know of, by
// document id, which is also the name of a document's file.
type RecordedDocuments interface {
	Get(id string) (domain.DocumentUploaded, bool)
}

// RecordedEvents are the events of an aggregate as the stream has them
// (eventstore.Store implements it).
type RecordedEvents interface {
	Load(ctx context.Context, agg domain.Aggregate) ([]domain.Record, error)
}

// FileSweep deletes orphaned files: those no recorded upload names. They
// are left by a crash between storing a file and recording its upload,
// or by a refused upload whose cleanup failed. And it deletes the parts
// of files a crash left half stored, there and in the other stores it is
// given (the snapshots of the read models: a stop killed while it wrote
// one left a part's chunks for good).
type FileSweep struct {
	files     StoredFiles
	others    []HalfStored
	documents RecordedDocuments
	events    RecordedEvents
	log       *slog.Logger
	timeout   time.Duration // of each sweep Run makes (see sweepTimeout)
}

// NewFileSweep returns the sweep of files by the uploads in documents,
// and, for a file documents does not know, in events: the read model
// may lag the stream (an upload another replica recorded is applied here
// later, or long after a partition), and a file it does not know yet is
// not an orphan. Of others, it sweeps what crashes left half stored.
func NewFileSweep(files StoredFiles, documents RecordedDocuments, events RecordedEvents, log *slog.Logger, others ...HalfStored) *FileSweep {
	return &FileSweep{files: files, others: others, documents: documents, events: events, log: log, timeout: sweepTimeout}
}

// sweepTimeout bounds each sweep Run makes, so that one that never ends
// cannot stop the sweeps after it: the object store's listing waits for
// the names the store held when it began, and reading nats.go 1.55 one
// purged meanwhile (another replica's sweep deleting it) may never come.
// A sweep takes seconds; one cut short is logged, and the next goes on.
const sweepTimeout = 10 * time.Minute

// orphanAge is how old a file no upload names must be before it is swept:
// well past the longest an upload may take (five minutes, httpapi's
// uploadReadTimeout), so that a file whose upload is being recorded this
// moment is left alone.
const orphanAge = time.Hour

// Run sweeps every hour, while ctx lasts.
func (f *FileSweep) Run(ctx context.Context) {
	tick := time.NewTicker(orphanAge)
	defer tick.Stop()
	for {
		sctx, cancel := context.WithTimeout(ctx, f.timeout)
		n, err := f.Sweep(sctx, orphanAge)
		cancel()
		switch {
		case err != nil && ctx.Err() != nil: // cut short by shutdown: the next start sweeps
		case err != nil:
			f.log.Error("orphaned files not swept", "err", err)
		case n > 0:
			// n counts the documents' orphans and the half-stored parts of
			// every store swept (the snapshots' among them) together.
			f.log.Info("orphaned files and half-stored parts swept", "deleted", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Sweep deletes the files older than age that no recorded upload names,
// and the parts of files left half stored as old (in every store it
// sweeps), and says how many.
// Every replica may sweep: deleting twice is harmless. A store that
// cannot be swept keeps none of the others from being swept.
func (f *FileSweep) Sweep(ctx context.Context, age time.Duration) (int, error) {
	n, err := f.sweepFiles(ctx, age)
	errs := []error{err}
	for _, store := range f.others {
		parts, err := store.DeleteUnnamed(ctx, age)
		n += parts
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// sweepFiles sweeps the documents' files: the parts of files left half
// stored, and the orphans.
func (f *FileSweep) sweepFiles(ctx context.Context, age time.Duration) (int, error) {
	// A half-stored file is no file that List shows: nothing else would
	// ever delete its parts.
	n, err := f.files.DeleteUnnamed(ctx, age)
	if err != nil {
		return n, err
	}
	files, err := f.files.List(ctx)
	if err != nil {
		return n, err
	}
	for _, file := range files {
		if _, recorded := f.documents.Get(file.Name); recorded || time.Since(file.ModTime) < age {
			continue
		}
		// The stream decides: orphans are few, so this load is rare.
		recs, err := f.events.Load(ctx, documentAggregate(file.Name))
		if err != nil {
			return n, err
		}
		if len(recs) > 0 {
			continue
		}
		if err := f.files.Delete(ctx, file.Name); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
