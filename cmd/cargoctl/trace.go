package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cargostream/cargostream/domain"
)

const traceSynopsis = `Usage: cargoctl trace [flags] CORRELATION_ID [flags]

Prints everything one request caused, in stream order: the events of the
command it carried out and those of the reactors' steps that followed
(pricing, confirmation, statuses; not webhook deliveries, which are recorded
under a correlation id of their own), one line each with
the time, the stream sequence, the aggregate, the event type and who caused
it. The correlation id is the request's X-Request-Id: sent by the client,
or made by cargod and returned in the response's header.

The correlation id is in no subject, so it reads the whole stream, or
with --since what was stored from then on, as cargoctl events does, saying
how far it has come on stderr every second; it finds the store the same
way (--nats-url, or --data-dir while cargod is stopped). All times are UTC.
`

// readerCheckEvery is how many events trace reads between looks at
// whether its output's reader is gone: a look is a system call.
const readerCheckEvery = 1024

// errReaderGone ends a trace's read once its output's reader is gone.
var errReaderGone = errors.New("the output's reader is gone")

func runTrace(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var o eventsOptions
	fs := newFlagSet("trace", traceSynopsis)
	storeFlags(fs, &o, getenv)
	asJSON := fs.Bool("json", false, "print the events as cargoctl events does, one JSON object a line")
	since := fs.String("since", "", "read only the events that occurred at or after this `time` (RFC 3339, or a date, UTC): a request of the last hour is found without reading the months before")
	positional, help, err := parseInterspersed(fs, args, stdout)
	if help || err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("trace", "give one correlation id, not %d arguments", len(positional))
	}
	o.correlationID = positional[0]
	if o.correlationID == "" {
		// An empty one filters nothing: "$REQUEST_ID" of a variable not
		// set would print every event of the stream.
		return usagef("trace", "the correlation id is empty")
	}
	// As events refuses it: "$SINCE" of a variable not set.
	if err := refuseEmpty("trace", fs, "since"); err != nil {
		return err
	}
	if o.since, err = parseTime(*since, false); err != nil {
		return usagef("trace", "--since: %v", err)
	}
	if err := natsCredentialsWithoutURL("trace", o); err != nil {
		return err
	}
	store, err := openStore(ctx, o, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	from, to, err := o.readRange(ctx, store)
	if err != nil {
		return err
	}
	progress := newReadProgress(stderr, "trace", from, to, true)

	// Each line is written as it is found, unbuffered: a trace is a few
	// lines, and trace | head must end the read once head has its lines,
	// not after a read of the whole stream: by SIGPIPE at the next line,
	// or, as the lines of a trace come together and the read goes on past
	// them, when the pipe says its reader is gone.
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	var first, last time.Time
	found := 0
	err = store.Read(ctx, nil, from, to, func(r domain.Record) error {
		if found > 0 && r.Sequence%readerCheckEvery == 0 && readerGone(stdout) {
			return errReaderGone
		}
		match := o.matches(r)
		progress.saw(r.Sequence, match)
		if !match {
			return nil
		}
		if found == 0 {
			first = momentOf(r)
		}
		found, last = found+1, momentOf(r)
		if *asJSON {
			return enc.Encode(lineOf(r, stderr))
		}
		_, err := fmt.Fprintln(stdout, traceLine(r))
		return err
	})
	if ctx.Err() != nil {
		err = errInterrupted
	}
	if errors.Is(err, errReaderGone) {
		return nil // as head asked
	}
	switch {
	case err != nil:
		return err
	case found == 0:
		within := "" // the whole stream
		if *since != "" {
			within = " since " + *since
		}
		if progress.missing > 0 {
			return fmt.Errorf("no event%s read has correlation id %q, but the stream misses some (%s): the request's may be among them", within, o.correlationID, progress.summary())
		}
		return fmt.Errorf("no event%s has correlation id %q (%s)", within, o.correlationID, progress.summary())
	case !*asJSON:
		fmt.Fprintf(stderr, "%s over %s; %s\n", eventCount(found), last.Sub(first).Round(time.Millisecond), progress.summary())
	default:
		fmt.Fprintln(stderr, progress.summary())
	}
	return nil
}

// momentOf is when r happened: when its command decided it, or, for an
// event whose envelope cannot be read (its time among what is lost), when
// the stream stored it.
func momentOf(r domain.Record) time.Time {
	if r.OccurredAt.IsZero() {
		return r.StoredAt
	}
	return r.OccurredAt
}

// traceLine is one event of a trace, for people.
func traceLine(r domain.Record) string {
	line := fmt.Sprintf("%s  #%-6d %s/%s  %s  by %s", momentOf(r).UTC().Format(utcMillis), r.Sequence,
		r.Aggregate.Type, r.Aggregate.ID, r.Type, or(r.Actor, "?"))
	if r.Tenant != "" {
		line += " for " + r.Tenant
	}
	if r.CausationID != "" {
		line += ", after event " + r.CausationID
	}
	return line
}
