package loadtest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/internal/lockedbuf"
)

// A row whose every operation fails (a server that went away answers at
// once) shows no operations in its progress lines, and its failures apart:
// they read as tens of thousands of operations a second.
func TestProgressCountsFailuresApartFromOperations(t *testing.T) {
	var out lockedbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Row)
	go func() {
		cfg := Config{Progress: &out, Duration: time.Hour}
		done <- measure(ctx, cfg, "create-quote", "POST /api/quotes", "req/s", 2, func(ctx context.Context, worker int) (time.Duration, error) {
			time.Sleep(time.Millisecond)
			return 0, errors.New("connection refused")
		})
	}()
	// The first progress line comes after a second.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "\n") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	row := <-done
	line, _, _ := strings.Cut(out.String(), "\n")
	if !strings.Contains(line, " 0 operations ") || !strings.Contains(line, " failed") {
		t.Errorf("progress line %q, want 0 operations and the failures apart", line)
	}
	if row.Count != 0 || row.ErrorCount() == 0 {
		t.Errorf("row: %d measured, %d failed; want none measured and the failures counted", row.Count, row.ErrorCount())
	}
}
