package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cargostream/cargostream/eventstore"
)

const parkedSynopsis = `Usage: cargoctl parked [flags]
       cargoctl parked retry [flags] SEQUENCE|--all

Lists the events that a reactor (pricing, bookings, shipments) or the
webhook dispatcher (webhooks) gave up on after failing on them
CARGO_REACTOR_ATTEMPTS times in a row (5 by default), oldest event first,
one line each: when it was parked, the event's stream sequence, the
reactor, the aggregate, the event type, the failures so far and the last
error. A parked event holds nothing up: the reactor went on with the
events after it. 'cargoctl events --from-seq N --to-seq N' prints the
event itself; cargod's log has a WARN line for each parking.

retry asks for the parked event at SEQUENCE (every reactor's entry of it,
or only --reactor's), or for every parked event with --all, to be handled
again: fix the cause first. A running cargod makes the retry within
moments and removes the entry; if the event fails again it is parked
again with the new error. Until the retry is made the list shows "retry
asked"; asked while cargod is stopped, it is made when cargod starts.

It finds the store as cargoctl events does (--nats-url, or --data-dir
while cargod is stopped); those flags may come before retry as well as
after it.
`

func runParked(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var o eventsOptions
	fs := newFlagSet("parked", parkedSynopsis)
	storeFlags(fs, &o, getenv)
	asJSON := fs.Bool("json", false, "print one JSON object a line")
	if help, err := parseFlags(fs, args, true, stdout); help || err != nil {
		return err
	}
	if fs.Arg(0) == "retry" {
		// The flags that say where the store is may come before retry,
		// as the connection flags before an admin command: retry takes
		// them with its own.
		before := args[:len(args)-fs.NArg()]
		return runRetryParked(ctx, append(slices.Clip(before), fs.Args()[1:]...), getenv, stdout, stderr)
	}
	if fs.NArg() > 0 {
		return usagef("parked", "unexpected argument %q", fs.Arg(0))
	}
	if err := natsCredentialsWithoutURL("parked", o); err != nil {
		return err
	}
	store, err := openStore(ctx, o, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	parked, err := store.ParkedEvents(ctx)
	if errors.Is(err, eventstore.ErrNoParkedStream) {
		return noParkedStream(o)
	}
	if err != nil {
		return err
	}
	// On stderr, so that --json's lines stay JSON: an empty stdout alone
	// does not tell "none" from a read that printed nothing.
	if len(parked) == 0 {
		fmt.Fprintln(stderr, "no parked events")
		return nil
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		for _, p := range parked {
			if err := enc.Encode(p); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PARKED AT\tSEQUENCE\tREACTOR\tAGGREGATE\tTYPE\tATTEMPTS\tLAST ERROR")
	for _, p := range parked {
		lastError := strings.Join(strings.Fields(p.LastError), " ") // one line
		if p.RetryAsked {
			lastError = "(retry asked) " + lastError
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s/%s\t%s\t%d\t%s\n", p.ParkedAt.UTC().Format("2006-01-02T15:04:05Z"), p.Sequence, p.Consumer,
			p.AggregateType, p.AggregateID, p.Type, p.Attempts, lastError)
	}
	return tw.Flush()
}

// parkingConsumers are the consumers that park events: cargod's reactors
// (commands.Reactors) and its webhook dispatcher.
var parkingConsumers = []string{"pricing", "bookings", "shipments", "webhooks"}

func runRetryParked(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var o eventsOptions
	fs := newFlagSet("parked retry", parkedSynopsis)
	storeFlags(fs, &o, getenv)
	all := fs.Bool("all", false, "retry every parked event")
	reactor := fs.String("reactor", "", "retry only the entries of this `reactor` ("+strings.Join(parkingConsumers, ", ")+")")
	positional, help, err := parseInterspersed(fs, args, stdout)
	if help || err != nil {
		return err
	}
	if err := natsCredentialsWithoutURL("parked retry", o); err != nil {
		return err
	}
	var seq uint64
	switch {
	case emptyFlag(fs, "reactor") != "":
		// Else every reactor's entries would be retried.
		return usagef("parked retry", "--reactor is empty: give it one of %s, or leave it out", strings.Join(parkingConsumers, ", "))
	case *reactor != "" && !slices.Contains(parkingConsumers, *reactor):
		return usagef("parked retry", "no reactor is called %q; those that park events are %s", *reactor, strings.Join(parkingConsumers, ", "))
	case *all && len(positional) > 0:
		return usagef("parked retry", "give a sequence or --all, not both")
	case !*all && len(positional) != 1:
		return usagef("parked retry", "give the sequence of one parked event, or --all")
	case !*all:
		n, err := strconv.ParseUint(positional[0], 10, 64)
		if err != nil || n == 0 {
			return usagef("parked retry", "%q is not a stream sequence", positional[0])
		}
		seq = n
	}
	store, err := openStore(ctx, o, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	asked, err := store.RetryParked(ctx, *reactor, seq)
	for _, p := range asked {
		fmt.Fprintf(stdout, "retry asked: %d %s %s/%s %s\n", p.Sequence, p.Consumer, p.AggregateType, p.AggregateID, p.Type)
	}
	if errors.Is(err, eventstore.ErrNoParkedStream) {
		return noParkedStream(o)
	}
	if errors.Is(err, eventstore.ErrNotParked) {
		switch {
		case *all && *reactor != "":
			return fmt.Errorf("%s has no parked event (cargoctl parked lists those parked)", *reactor)
		case *all:
			return errors.New("no event is parked")
		case *reactor != "":
			return fmt.Errorf("%s has not parked the event at sequence %d (cargoctl parked lists those parked)", *reactor, seq)
		default:
			return fmt.Errorf("no event is parked at sequence %d (cargoctl parked lists those parked)", seq)
		}
	}
	return err
}

// noParkedStream says that the store o opened has no stream of parked
// events. cargod makes it when it starts: without it the list was lost,
// which "no parked events" would have hidden.
func noParkedStream(o eventsOptions) error {
	where := "data directory " + o.dataDir
	if o.natsURL != "" {
		where = "the NATS server at " + o.natsURL
	}
	return fmt.Errorf("%s has no stream %s_PARKED, which holds the parked events: cargod makes it when it starts, so the list was lost "+
		"(a backup or copy made without it, or the stream deleted), or no cargod that parks events has run on stream %s; "+
		"it does not tell that none is parked", where, o.stream, o.stream)
}
