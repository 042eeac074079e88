package main

import (
	"fmt"
	"io"
	"time"
)

// progressEvery is how often a long read of the stream, a rebuild or a
// verify says how far it has come on stderr: one pace for every command.
var progressEvery = time.Second

// readProgress tells on stderr how far a read of the stream has come, a
// line every progressEvery: a read of every event of a large stream takes
// a minute or more, and an operator cannot tell silence from a hang. At
// the end it sums up what was read, which tells whether a filter that
// narrows the read (--type, --since) would have saved the time.
type readProgress struct {
	w             io.Writer
	cmd           string
	from, to      uint64 // the sequences read, inclusive
	read, printed int
	lastSeq       uint64
	shown         time.Time // when a line was last written
}

func newReadProgress(w io.Writer, cmd string, from, to uint64) *readProgress {
	return &readProgress{w: w, cmd: cmd, from: max(from, 1), to: to, shown: time.Now()}
}

// saw counts the event at seq, printed or not, and writes a line when
// the last one is progressEvery ago. It is called for every event read,
// so that a read that prints nothing for minutes still says so.
func (p *readProgress) saw(seq uint64, printed bool) {
	p.read++
	p.lastSeq = seq
	if printed {
		p.printed++
	}
	if time.Since(p.shown) < progressEvery {
		return
	}
	p.shown = time.Now()
	percent := 100.0
	if p.to > p.from {
		percent = 100 * float64(seq-p.from+1) / float64(p.to-p.from+1)
	}
	fmt.Fprintf(p.w, "%s: read %d events, up to sequence %d of %d (%.0f%%); %d printed\n", p.cmd, p.read, seq, p.to, percent, p.printed)
}

// summary is what was read: "read 221192 events, sequences 1 to 221192".
func (p *readProgress) summary() string {
	if p.read == 0 {
		return "read no event"
	}
	return fmt.Sprintf("read %d events, sequences %d to %d", p.read, p.from, p.lastSeq)
}

// printedSummary is the summary with how many of the events read were
// printed.
func (p *readProgress) printedSummary() string {
	return fmt.Sprintf("%s printed; %s", eventCount(p.printed), p.summary())
}

// eventCount is n events, "1 event" when there is one: the count of the
// last line on stderr of every command that reads or lists events.
func eventCount(n int) string {
	if n == 1 {
		return "1 event"
	}
	return fmt.Sprintf("%d events", n)
}
