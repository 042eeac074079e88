package main

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/internal/lockedbuf"
)

// The log's lines are held and written together, but never so long that
// one explaining a failure is lost with the process: a WARN or an ERROR
// writes out at once what is held, in order.
func TestTheLogHoldsInfoLinesAndWritesThemOutWithAWarning(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		log  func(*slog.Logger)
		want []string // messages written, in order, with no flush but the logger's own
	}{
		{"info lines are held", func(l *slog.Logger) { l.Info("one"); l.Info("two") }, nil},
		{"a warning writes them out before it", func(l *slog.Logger) { l.Info("one"); l.Warn("two") }, []string{"one", "two"}},
		{"an error too", func(l *slog.Logger) { l.Info("one"); l.Error("two") }, []string{"one", "two"}},
		{"a logger with attributes too", func(l *slog.Logger) { l.Info("one"); l.With("k", "v").WithGroup("g").Warn("two") }, []string{"one", "two"}},
		{"lines past the buffer's size are written without waiting", func(l *slog.Logger) {
			l.Info("big", "filler", strings.Repeat("x", logBufferSize))
		}, []string{"big"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out lockedbuf.Buffer
			log, w := newLogger(&out, slog.LevelInfo)
			w.delay = time.Hour
			c.log(log)
			if got := messagesOf(t, out.String()); strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("written %q, want %q", got, c.want)
			}
		})
	}
}

func TestTheLogWritesHeldLinesOutWithinItsDelay(t *testing.T) {
	t.Parallel()
	var out lockedbuf.Buffer
	log, _ := newLogger(&out, slog.LevelInfo)
	log.Info("one")
	log.Info("two")
	deadline := time.Now().Add(10 * time.Second)
	for len(messagesOf(t, out.String())) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("written after 10s: %q, want both lines", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := messagesOf(t, out.String()); got[0] != "one" || got[1] != "two" {
		t.Errorf("written %q, want one, two", got)
	}
}

// messagesOf is the "msg" of each JSON line of a log.
func messagesOf(t *testing.T, log string) []string {
	t.Helper()
	var msgs []string
	for line := range strings.Lines(log) {
		var l struct{ Msg string }
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("not a log line: %q: %v", line, err)
		}
		msgs = append(msgs, l.Msg)
	}
	return msgs
}
