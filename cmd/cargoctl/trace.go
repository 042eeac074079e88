package main

import (
	"bufio"
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

It reads the whole stream, as cargoctl events does, and finds the store
the same way (--nats-url, or --data-dir while cargod is stopped).
`

func runTrace(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var o eventsOptions
	fs := newFlagSet("trace", traceSynopsis)
	storeFlags(fs, &o, getenv)
	asJSON := fs.Bool("json", false, "print the events as cargoctl events does, one JSON object a line")
	positional, help, err := parseInterspersed(fs, args, stdout)
	if help || err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("trace", "give one correlation id, not %d arguments", len(positional))
	}
	o.correlationID = positional[0]
	store, err := openStore(ctx, o, stderr)
	if err != nil {
		return err
	}
	defer store.Close()

	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	var first, last time.Time
	found := 0
	err = store.Read(ctx, nil, 0, 0, func(r domain.Record) error {
		if !o.matches(r) {
			return nil
		}
		if found == 0 {
			first = r.OccurredAt
		}
		found, last = found+1, r.OccurredAt
		if *asJSON {
			return enc.Encode(lineOf(r, stderr))
		}
		_, err := fmt.Fprintln(out, traceLine(r))
		return err
	})
	if ctx.Err() != nil {
		err = errors.New("interrupted")
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	switch {
	case err != nil:
		return err
	case found == 0:
		return fmt.Errorf("no event has correlation id %q", o.correlationID)
	case !*asJSON:
		noun := "events"
		if found == 1 {
			noun = "event"
		}
		fmt.Fprintf(stderr, "%d %s over %s\n", found, noun, last.Sub(first).Round(time.Millisecond))
	}
	return nil
}

// traceLine is one event of a trace, for people.
func traceLine(r domain.Record) string {
	line := fmt.Sprintf("%s  #%-6d %s/%s  %s  by %s", r.OccurredAt.UTC().Format("2006-01-02T15:04:05.000Z"), r.Sequence,
		r.Aggregate.Type, r.Aggregate.ID, r.Type, or(r.Actor, "?"))
	if r.Tenant != "" {
		line += " for " + r.Tenant
	}
	if r.CausationID != "" {
		line += ", after event " + r.CausationID
	}
	return line
}
