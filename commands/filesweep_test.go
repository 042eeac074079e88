package commands

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

// Files no upload names are swept once old enough; recorded ones stay.
func TestFileSweepDeletesOnlyOldFilesNoUploadNames(t *testing.T) {
	ctx := context.Background()
	store := openTestStore(t)
	files, err := store.Objects(ctx, "documents")
	if err != nil {
		t.Fatal(err)
	}
	documents := projections.NewDocuments()
	documents.Apply(domain.Record{}, domain.DocumentUploaded{DocumentID: "recorded", AWBNumber: "020-00000011"})
	for _, name := range []string{"recorded", "orphan"} {
		if _, err := files.Put(ctx, name, strings.NewReader("%PDF-1.7\n"+name)); err != nil {
			t.Fatal(err)
		}
	}
	sweep := NewFileSweep(files, documents, slog.New(slog.DiscardHandler))

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
