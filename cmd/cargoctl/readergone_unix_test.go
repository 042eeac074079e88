//go:build unix

package main

import (
	"os"
	"strings"
	"testing"
)

// trace | head: once head has gone, the pipe says so to trace, which has
// written nothing since.
func TestAPipeWhoseReaderHasGoneIsToldWithoutAWrite(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if readerGone(w) {
		t.Error("a pipe whose reader is there is told gone")
	}
	r.Close()
	if !readerGone(w) {
		t.Error("a pipe whose reader has gone is not told gone")
	}
	if readerGone(&strings.Builder{}) {
		t.Error("a writer that is no file is told gone")
	}
}
