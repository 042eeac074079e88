package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

const stateSynopsis = `Usage: cargoctl state [connection flags] TYPE ID --at TIME | --seq N

Prints a resource as the HTTP API showed it at a past moment, folded from
its events up to then, as pretty JSON: exactly what its GET answered at the
time (GET ... ?at= or ?seq=). On stderr, the version it had then (its ETag
then, the stream sequence of its last event up to that moment).

TYPE is one of quote, booking, stock-request, flight, shipment; ID is the
resource's id (the AWB number of a shipment, the flight id such as
LH8400-2026-07-01). --at takes an RFC 3339 time (2026-07-01T09:30:00Z)
or a plain date (2026-07-01: its first instant, UTC), as cargoctl events
--since does; --seq a stream sequence (a Cargo-Sequence a write answered, or the
sequence cargoctl events prints). Flags may come before or after TYPE and ID.

Calls the running cargod's API as an API client, with the flags of
cargoctl admin (--url, --client-id, CARGOCTL_CLIENT_SECRET or
--client-secret-file). Any client may: it sees what its organisation may
(an admin's, everything).
`

// stateTypes are the resources whose past states the API answers, by the
// name cargoctl state gives them, and the path of each one's GET.
var stateTypes = map[string]string{
	"quote":         "/api/quotes/",
	"booking":       "/api/bookings/",
	"stock-request": "/api/awb-stock/requests/",
	"flight":        "/api/flights/",
	"shipment":      "/api/shipments/",
}

func runState(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	conn := connFlagsOf(getenv)
	fs := newFlagSet("state", stateSynopsis)
	at := fs.String("at", "", "the moment: `TIME` such as 2026-07-01T09:30:00Z (RFC 3339), or a date such as 2026-07-01 (its first instant, UTC)")
	seq := fs.Uint64("seq", 0, "the stream sequence `N` instead of a moment")
	conn.register(fs)
	positional, help, err := parseInterspersed(fs, args, stdout)
	if help || err != nil {
		return err
	}
	if len(positional) != 2 {
		return usagef("state", "give TYPE and ID, not %d arguments", len(positional))
	}
	kind, id := positional[0], positional[1]
	path, ok := stateTypes[kind]
	if !ok {
		known := slices.Sorted(maps.Keys(stateTypes))
		return usagef("state", "unknown type %q%s: one of %s", kind, didYouMean(kind, known), strings.Join(known, ", "))
	}
	if id == "" {
		return usagef("state", "the %s id is empty", kind)
	}
	if kind == "shipment" {
		// Refused here as cargoctl shipment refuses it, exit 2, not as
		// the server's 400 after a token; and named as the server names
		// it on stderr.
		if id, err = parseAWBArg("state", id); err != nil {
			return err
		}
	}
	if err := refuseEmpty("state", fs, "at"); err != nil {
		return err
	}
	// Which were given, not which are non-zero: "--seq 0" is a mistake
	// to name, not a flag left out.
	givenAt, givenSeq := flagGiven(fs, "at"), flagGiven(fs, "seq")
	q := url.Values{}
	switch {
	case givenAt && givenSeq:
		return usagef("state", "give --at TIME or --seq N, not both")
	case !givenAt && !givenSeq:
		return usagef("state", "give --at TIME or --seq N (one of them)")
	case givenSeq && *seq == 0:
		return usagef("state", "--seq 0 is no stream sequence: the first is 1")
	case *at != "":
		t, err := parseTime(*at, false)
		if err != nil {
			return usagef("state", "--at: %v", err)
		}
		// The API takes RFC 3339 only: a date goes as its first instant.
		q.Set("at", t.Format(time.RFC3339Nano))
	default:
		q.Set("seq", strconv.FormatUint(*seq, 10))
	}
	client, err := conn.client("state", getenv, stderr)
	if err != nil {
		return err
	}
	if err := client.authorize(ctx); err != nil {
		return err
	}
	body, header, err := client.exchange(ctx, http.MethodGet, path+url.PathEscape(id)+"?"+q.Encode(), "", nil)
	if err != nil {
		return err
	}
	if err := printJSON(stdout, body); err != nil {
		return err
	}
	if v := strings.Trim(header.Get("ETag"), `"`); v != "" {
		fmt.Fprintf(stderr, "%s %s at version %s\n", kind, id, v)
	}
	return nil
}
