package commands

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/projections"
)

// openTestFiles opens a test store and its bucket of documents' files.
func openTestFiles(t *testing.T) (*eventstore.Store, *eventstore.Objects) {
	t.Helper()
	store := openTestStore(t)
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
		FileName: "invoice.pdf", ContentType: "application/pdf", Size: int64(len(content)), SHA256: "00"})
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
