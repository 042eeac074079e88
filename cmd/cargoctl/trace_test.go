package main

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
)

func TestTraceTellsWhatOneRequestCaused(t *testing.T) {
	dir := dataDirWithEvents(t)
	tests := []struct {
		name       string
		args       []string
		out, notes string // stdout; what stderr must contain
		err        string // what the error must contain, or ""
	}{
		{"a request and the step a reactor took after it", []string{"corr1"},
			"2026-11-24T10:00:00.000Z  #1      quote/q1  QuoteRequested  by user:alice for acme, after event cause1\n" +
				"2026-11-25T12:30:00.123Z  #4      quote/q1  QuotePriced  by client:lh for lh, after event e1\n",
			"2 events over 26h30m0.123s", ""},
		{"as JSON lines", []string{"--json", "corr1"}, linesOf(1, 4), "", ""},
		{"flags after the correlation id", []string{"corr1", "--json"}, linesOf(1, 4), "", ""},
		{"an event without actor or tenant", []string{"c2"},
			"2026-11-24T23:59:59.500Z  #2      org/acme  OrganizationCreated  by system:cargod\n", "1 event over 0s", ""},
		{"no such request", []string{"nobody"}, "", "", `no event has correlation id "nobody"`},
		{"no correlation id", nil, "", "", "give one correlation id, not 0 arguments"},
		{"two correlation ids", []string{"corr1", "c2"}, "", "", "give one correlation id, not 2 arguments"},
		// A shell variable that is not set: not a trace of every event.
		{"an empty correlation id", []string{""}, "", "", "the correlation id is empty"},
		// Nor is --since "$SINCE" of a variable not set, as events refuses it.
		{"an empty --since", []string{"--since", "", "corr1"}, "", "", "--since is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCmd(t, env(nil), append([]string{"trace", "--data-dir", dir}, tt.args...)...)
			switch {
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error = %v, want %q", err, tt.err)
			case tt.err == "" && err != nil:
				t.Errorf("error = %v", err)
			}
			if out != tt.out || !strings.Contains(errOut, tt.notes) {
				t.Errorf("stdout:\n%s\nwant:\n%s\nstderr %q, want it to contain %q", out, tt.out, errOut, tt.notes)
			}
		})
	}
}

// pipeToHead is stdout piped to head -1: it takes the first write, and
// then the reader is gone (EPIPE; a real cargoctl dies of SIGPIPE there).
type pipeToHead struct{ writes []string }

func (p *pipeToHead) Write(b []byte) (int, error) {
	if len(p.writes) > 0 {
		return 0, syscall.EPIPE
	}
	p.writes = append(p.writes, string(b))
	return len(b), nil
}

// A trace piped to head must write each line as it finds it, so that head
// ends it at once: not keep the lines until it has read the whole stream.
func TestTraceWritesEachLineAsItFindsItSoThatHeadEndsTheRead(t *testing.T) {
	defer func(every time.Duration) { progressEvery = every }(progressEvery)
	progressEvery = 0 // a progress line for every event read
	dir := dataDirWithEvents(t)
	for _, tt := range []struct {
		name  string
		args  []string
		first string // the one write head takes
	}{
		{"lines for people", []string{"corr1"}, "2026-11-24T10:00:00.000Z  #1      quote/q1  QuoteRequested  by user:alice for acme, after event cause1\n"},
		{"JSON lines", []string{"--json", "corr1"}, linesOf(1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr := &pipeToHead{}, &strings.Builder{}
			err := run(context.Background(), append([]string{"trace", "--data-dir", dir}, tt.args...), env(nil), stdout, stderr)
			if !errors.Is(err, syscall.EPIPE) {
				t.Errorf("error = %v, want the broken pipe", err)
			}
			if len(stdout.writes) != 1 || stdout.writes[0] != tt.first {
				t.Errorf("writes %q, want one of the first line %q", stdout.writes, tt.first)
			}
			// corr1 is events 1 and 4 of 5: the second line fails, and
			// event 5 is never read.
			if !strings.Contains(stderr.String(), "up to sequence 4 of 5") || strings.Contains(stderr.String(), "up to sequence 5 of 5") {
				t.Errorf("stderr %q, want the read to end at sequence 4", stderr)
			}
		})
	}
}

// An event whose envelope cannot be read has no time of its own: a trace
// shows when the stream stored it, not the year 1.
func TestATraceLineOfAnUnreadableEventShowsWhenItWasStored(t *testing.T) {
	stored := time.Date(2026, 11, 29, 6, 50, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		r    domain.Record
		want string
	}{
		{"an event", domain.Record{Envelope: domain.Envelope{OccurredAt: stored.Add(-time.Second)}, StoredAt: stored}, "2026-11-29T06:49:59.000Z"},
		{"an unreadable event", domain.Record{StoredAt: stored}, "2026-11-29T06:50:00.000Z"},
	} {
		if line := traceLine(tt.r); !strings.HasPrefix(line, tt.want) {
			t.Errorf("%s: %q, want it to start with %s", tt.name, line, tt.want)
		}
	}
}
