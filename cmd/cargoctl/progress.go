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
//
// A read of every event (no aggregate filter) also says where the stream
// has none: a sequence skipped is an event lost (a damaged file, a backup
// cut short), which the read would otherwise pass over without a word.
type readProgress struct {
	w             io.Writer
	cmd           string
	from, to      uint64 // the sequences read, inclusive
	every         bool   // every event from..to is read: none is filtered out by the server
	read, printed int
	firstSeq      uint64
	lastSeq       uint64
	missing       uint64 // sequences skipped, when every
	gaps          int
	shown         time.Time // when a line was last written
}

func newReadProgress(w io.Writer, cmd string, from, to uint64, every bool) *readProgress {
	return &readProgress{w: w, cmd: cmd, from: max(from, 1), to: to, every: every, shown: time.Now()}
}

// saw counts the event at seq, printed or not, and writes a line when
// the last one is progressEvery ago. It is called for every event read,
// so that a read that prints nothing for minutes still says so.
func (p *readProgress) saw(seq uint64, printed bool) {
	next := p.lastSeq + 1 // the sequence that should come
	if p.read == 0 {
		next, p.firstSeq = p.from, seq
	}
	if p.every && seq > next {
		p.skipped(next, seq-1)
	}
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

// shownGaps is how many gaps a read names, each on a line of its own; the
// summary counts them all.
const shownGaps = 10

// skipped tells of the sequences from..to, which the stream has no events
// at.
func (p *readProgress) skipped(from, to uint64) {
	p.missing += to - from + 1
	p.gaps++
	switch {
	case p.gaps <= shownGaps:
		where := fmt.Sprintf("no events at sequences %d to %d", from, to)
		if from == to {
			where = fmt.Sprintf("no event at sequence %d", from)
		}
		fmt.Fprintf(p.w, "%s: the stream has %s: lost (a damaged file, a backup cut short); cargoctl verify checks the whole stream\n",
			p.cmd, where)
	case p.gaps == shownGaps+1:
		fmt.Fprintf(p.w, "%s: more sequences without events follow; the last line counts them\n", p.cmd)
	}
}

// summary is what was read: "read 221192 events, sequences 1 to 221192",
// and how many events are missing among them, if any.
func (p *readProgress) summary() string {
	if p.read == 0 {
		return "read no event"
	}
	s := fmt.Sprintf("read %s, sequences %d to %d", eventCount(p.read), p.firstSeq, p.lastSeq)
	if p.missing > 0 {
		gaps := fmt.Sprintf("%d gaps", p.gaps)
		if p.gaps == 1 {
			gaps = "one gap"
		}
		missing := fmt.Sprintf("%d events", p.missing)
		if p.missing == 1 {
			missing = "1 event"
		}
		s += fmt.Sprintf("; %s missing from the stream, in %s", missing, gaps)
	}
	return s
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
