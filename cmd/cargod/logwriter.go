package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logWriter holds the log's lines for up to its delay and writes them out
// together. Written one system call a line, the access log at the default
// level (info) took a tenth of a replica's CPU at 30–40k reads a second,
// and the log handler's lock, held across each call, made every request
// wait its turn. A line at WARN or above is written at once, with the
// lines before it (levelFlusher), so that what explains a failure is out
// before the process may die of it; a kill -9, or the second stop signal
// (which exits at once), loses at most the last delay of INFO lines.
type logWriter struct {
	out   io.Writer
	delay time.Duration // logFlushDelay but in tests

	mu      sync.Mutex
	buf     []byte
	pending bool // a flush is due within delay
}

const (
	logFlushDelay = 100 * time.Millisecond
	// logBufferSize is how much is held before it is written without
	// waiting: a burst of lines is written in pieces of about this size.
	logBufferSize = 64 << 10
)

// Write takes one line (slog's handlers write a record whole, in one call).
func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) >= logBufferSize {
		return len(p), w.flushLocked()
	}
	if !w.pending {
		w.pending = true
		time.AfterFunc(w.delay, func() { w.Flush() })
	}
	return len(p), nil
}

// Flush writes out every line held. A timer that fires after a flush
// finds nothing or newer lines, and writes them early: no harm.
func (w *logWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *logWriter) flushLocked() error {
	w.pending = false
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.out.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// levelFlusher is a handler writing to a logWriter that flushes it after
// each record at WARN or above.
type levelFlusher struct {
	slog.Handler
	out *logWriter
}

func (h levelFlusher) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.out.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h levelFlusher) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelFlusher{h.Handler.WithAttrs(attrs), h.out}
}

func (h levelFlusher) WithGroup(name string) slog.Handler {
	return levelFlusher{h.Handler.WithGroup(name), h.out}
}

// newLogger is cargod's logger: JSON lines on out, held in a logWriter.
// Flush the writer before the process ends.
func newLogger(out io.Writer, level slog.Leveler) (*slog.Logger, *logWriter) {
	w := &logWriter{out: out, delay: logFlushDelay}
	return slog.New(levelFlusher{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}), w}), w
}
