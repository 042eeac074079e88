//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A pipe that brings nothing (a download that failed, piped in) is told
// as an empty file is, not imported as a success of 0 rows.
func TestAnImportFromAnEmptyPipeSaysItIsEmpty(t *testing.T) {
	url := startServer(t)
	fifo := filepath.Join(t.TempDir(), "airports.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close() // nothing written
		}
	}()
	// Should the import not open the pipe, the writer is let go.
	defer func() {
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
	}()
	_, _, err := runCmd(t, adminEnv(url), "import", "airports", fifo)
	if err == nil || !strings.Contains(err.Error(), fifo+" is empty: nothing to import") {
		t.Errorf("an import from an empty pipe = %v", err)
	}
}
