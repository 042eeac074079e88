package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cargostream/cargostream/config"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/closest"
)

const eventsSynopsis = `Usage: cargoctl events [flags]

Prints events from the event stream, oldest first, one JSON object a line.

It reads through a NATS server: an external one, or cargod's embedded
server when cargod was started with CARGO_NATS_LISTEN (pass that address
as --nats-url; the seed that proves who you are is read from the data
directory's nats-listen.nk, or --nats-nkey). A server that cannot be
reached fails at the first attempt; one that answers is waited for, for
its stream, as long as --nats-wait says. Without --nats-url it opens
the data directory with an embedded server of its own, which works only
while cargod is not running on that directory.

Times are RFC 3339 (2026-11-25T10:00:00Z) or plain dates (2026-11-25,
UTC); they are compared with the time each event occurred. --until with a
plain date includes that whole day. --since also starts the read at the
events the stream stored from then on (less ten minutes, for clocks that
differ), instead of reading every event before it to leave it out, and
--until ends it at the first event that occurred more than ten minutes
after it; the other filters but --type and --id are applied to every
event read.

Every second of a long read, a line on stderr says how far it has come;
at the end, a line says how many events were printed of how many read,
and, when --event-type alone printed events of one aggregate type only,
the --type that has the server read only those next time.
`

// eventsOptions select what cargoctl events prints.
type eventsOptions struct {
	natsURL, natsCreds, natsNkey string
	dataDir, stream              string
	aggType, aggID, eventType    string
	correlationID, actor, tenant string
	fromSeq, toSeq               uint64
	since, until                 time.Time // zero: unbounded; both inclusive
	follow                       bool
	natsWait                     time.Duration // see storeFlags
	// tenantCauses holds the ids of the events printed for --tenant, whose
	// reactors' follow-ups are its too (see ofTenant).
	tenantCauses map[string]bool
}

func runEvents(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, help, err := parseEventsFlags(args, getenv, stdout)
	if help || err != nil {
		return err
	}
	store, err := openStore(ctx, o, stderr)
	if err != nil {
		return err
	}
	defer store.Close()

	var filters []string
	if o.aggType != "" || o.aggID != "" {
		filters = []string{store.Filter(o.aggType, o.aggID)}
	}
	from, to, err := o.readRange(ctx, store)
	if err != nil {
		return err
	}
	if o.follow {
		return o.followEvents(ctx, store, filters, from, stdout, stderr)
	}
	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	progress := newReadProgress(stderr, "events", from, to, len(filters) == 0)
	aggTypes := map[string]bool{} // of the events printed
	err = store.Read(ctx, filters, from, to, func(r domain.Record) error {
		if o.pastUntil(r) {
			return errPastUntil
		}
		match := o.matches(r)
		progress.saw(r.Sequence, match)
		if !match {
			return nil
		}
		aggTypes[r.Aggregate.Type] = true
		return enc.Encode(lineOf(r, stderr))
	})
	switch {
	case ctx.Err() != nil:
		err = errInterrupted
	case errors.Is(err, errPastUntil):
		err = nil
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		fmt.Fprintln(stderr, progress.printedSummary())
		if why := wrongCheckDigit(o.aggID); why != "" && progress.printed == 0 {
			fmt.Fprintf(stderr, "--id %s has an AWB number's shape, but no shipment has it: its %s\n", o.aggID, why)
		}
	}
	// An event type is in no subject: the server handed over every event
	// for cargoctl to leave out most. The aggregate type is, and every
	// event printed had the same one: say so, for the next read.
	if err == nil && o.eventType != "" && len(filters) == 0 && len(aggTypes) == 1 {
		for t := range aggTypes {
			fmt.Fprintf(stderr, "the %s events printed are all of aggregate type %s: add --type %s to have the server read only those\n", o.eventType, t, t)
		}
	}
	return err
}

// followEvents prints the events from sequence from on as they come,
// until interrupted. A subscription that ends (its consumer stalled
// across a restart of cargod, whose server it reads, or the server
// away) is begun again from the event after the last one read, without a
// gap, and stderr says so. A line that cannot be written ends it, and so
// do followRetries ends in a row without an event: a failure that lasts
// (the stream deleted, a permission taken away) is not tried for good.
func (o eventsOptions) followEvents(ctx context.Context, store *eventstore.Store, filters []string, from uint64, stdout, stderr io.Writer) error {
	// Unbuffered: each line is written as it comes, in one write.
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	// A filtered subscription notices a stalled consumer only when told
	// of each quiet second (see Subscribe).
	var idle func() error
	if len(filters) > 0 {
		idle = func() error { return nil }
	}
	var written error
	for ends := 0; ; {
		read := false
		err := store.Subscribe(ctx, filters, from, func(r domain.Record) error {
			from, read = r.Sequence+1, true
			if !o.matches(r) {
				return nil
			}
			written = enc.Encode(lineOf(r, stderr))
			return written
		}, idle)
		if read {
			ends = 0
		}
		switch ends++; {
		case ctx.Err() != nil:
			return nil // interrupted: the normal end of --follow
		case written != nil:
			return err
		case ends > followRetries:
			return fmt.Errorf("%w (the subscription ended %d times in a row without an event)", err, ends)
		}
		fmt.Fprintf(stderr, "cargoctl: the subscription ended (%v); reading on from sequence %d\n", err, from)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// followRetries is how many times in a row --follow begins its
// subscription again without an event before it gives up: a restart of
// cargod, a second each, is well within it.
const followRetries = 30

// storeClockSkew is how much earlier than --since a read starts, by the
// time the stream stored each event: an event's time is cargod's clock
// just before the NATS server stored it, by the server's clock, which may
// be behind. The events read before --since are left out as ever.
var storeClockSkew = 10 * time.Minute

// errPastUntil ends a read at the first event that occurred after --until
// by more than storeClockSkew: the stream holds the events in the order
// cargod decided them, each at its replica's clock, so none that follows
// occurred by --until.
var errPastUntil = errors.New("past --until")

// pastUntil reports whether r ends a read with --until (see errPastUntil).
// The stream's own time would find the end without reading to it, but a
// stream copied to another (sourced, to move a cluster) was stored anew,
// all of it at the copy's time: --until would read none of it. For the
// same reason an event whose envelope cannot be read, which has only that
// time (see momentOf), ends no read.
func (o eventsOptions) pastUntil(r domain.Record) bool {
	return !o.until.IsZero() && !r.OccurredAt.IsZero() && r.OccurredAt.After(o.until.Add(storeClockSkew))
}

// readRange is the stream sequences a read covers. It starts at
// --from-seq, or with --since the first event the stream stored since
// (less storeClockSkew), whichever is later, so that a read of the last
// hour does not read the months before it only to leave them out. It ends
// at --to-seq, or at the stream's last event, asked once: with --since,
// FirstSequenceSince has asked it already. --follow reads on past any
// end, and asks none.
func (o eventsOptions) readRange(ctx context.Context, store *eventstore.Store) (from, to uint64, err error) {
	from, to = o.fromSeq, o.toSeq
	switch {
	case !o.since.IsZero():
		first, last, err := store.FirstSequenceSince(ctx, o.since.Add(-storeClockSkew))
		if to == 0 {
			to = last
		}
		return max(from, first), to, err
	case to == 0 && !o.follow:
		to, err = store.LastSequence(ctx)
	}
	return from, to, err
}

func parseEventsFlags(args []string, getenv func(string) string, stdout io.Writer) (o eventsOptions, help bool, err error) {
	fs := newFlagSet("events", eventsSynopsis)
	storeFlags(fs, &o, getenv)
	fs.StringVar(&o.aggType, "type", "", "only events of this aggregate `type`: "+strings.Join(domain.AggregateTypes, ", "))
	fs.StringVar(&o.aggID, "id", "", "only events of the aggregates with this `id`: of --type, or of every type (an AWB number is the id of its waybill, compliance and shipment)")
	fs.StringVar(&o.eventType, "event-type", "", "only events of this event `type`, such as QuoteRequested (a wrong one is refused with the list)")
	fs.StringVar(&o.correlationID, "correlation-id", "", "only events of this correlation `id`: all that one request caused")
	fs.StringVar(&o.actor, "actor", "", "only events caused by this `subject`: client:<id>, user:<name>, apikey:<key id>, reactor:<step> or system:<name>, as events print it")
	fs.StringVar(&o.tenant, "tenant", "", "only events of this organisation `id`: those its own requests stored, and the reactors' follow-ups of those read")
	fs.Uint64Var(&o.fromSeq, "from-seq", 0, "first stream `sequence` to print")
	fs.Uint64Var(&o.toSeq, "to-seq", 0, "last stream `sequence` to print")
	since := fs.String("since", "", "only events that occurred at or after this `time`")
	until := fs.String("until", "", "only events that occurred at or before this `time`")
	fs.BoolVar(&o.follow, "follow", false, "keep printing new events until interrupted")
	if help, err := parseFlags(fs, args, false, stdout); help || err != nil {
		return o, help, err
	}
	bad := func(format string, args ...any) (eventsOptions, bool, error) {
		return o, false, usagef("events", format, args...)
	}
	if err := refuseEmpty("events", fs, "type", "id", "event-type", "correlation-id", "actor", "tenant", "since", "until"); err != nil {
		return o, false, err
	}
	o.aggID = storedID(o.aggID)
	switch {
	case o.aggType != "" && !slices.Contains(domain.AggregateTypes, o.aggType):
		return bad("--type %q is not an aggregate type%s; one of: %s", o.aggType, didYouMean(o.aggType, domain.AggregateTypes), strings.Join(domain.AggregateTypes, ", "))
	case o.eventType != "" && !slices.Contains(domain.EventTypes(), o.eventType):
		return bad("--event-type %q is not an event type%s; one of: %s", o.eventType, didYouMean(o.eventType, domain.EventTypes()), strings.Join(domain.EventTypes(), ", "))
	case o.aggID != "" && !validToken(o.aggID):
		return bad("--id %q is not an aggregate id", o.aggID)
	case o.actor != "" && o.actor != anonymousActor && !strings.Contains(o.actor, ":"):
		// Every actor names its kind, but a request without credentials:
		// the bare id of a client or user would filter out every event.
		return bad("--actor %q is no subject as events name them: client:%s, user:%s, apikey:<key id>, reactor:<step>, system:<name>, or %s "+
			"(an organisation's events are --tenant's)", o.actor, o.actor, o.actor, anonymousActor)
	case strings.Contains(o.tenant, ":"):
		return bad("--tenant %q is no organisation id (letters, digits, '-' and '_'): the subject that caused an event is --actor's", o.tenant)
	case o.toSeq == 0 && flagGiven(fs, "to-seq"):
		// Not "no bound", as an unset 0 is: a variable holding 0 would
		// print every event, and follow them.
		return bad("--to-seq 0 is no sequence: the first is 1")
	case o.toSeq != 0 && o.fromSeq > o.toSeq:
		return bad("--from-seq %d is after --to-seq %d", o.fromSeq, o.toSeq)
	case o.follow && (o.toSeq != 0 || *until != ""):
		return bad("--follow cannot be combined with --to-seq or --until")
	}
	if o.since, err = parseTime(*since, false); err != nil {
		return bad("--since: %v", err)
	}
	if o.until, err = parseTime(*until, true); err != nil {
		return bad("--until: %v", err)
	}
	if !o.since.IsZero() && !o.until.IsZero() && o.until.Before(o.since) {
		return bad("--until %s is before --since %s", *until, *since)
	}
	o.tenantCauses = map[string]bool{}
	return o, false, natsCredentialsWithoutURL("events", o)
}

// anonymousActor is the actor of an event recorded for a request without
// credentials (a token refused), the one actor without a kind.
const anonymousActor = "anonymous"

// natsCredentialsWithoutURL is the usage error of cmd when credentials for
// the NATS server of --nats-url are given without it: they went unused,
// and the data directory was opened where a server was meant (cargod
// refuses CARGO_NATS_CREDS without CARGO_NATS_URL alike).
func natsCredentialsWithoutURL(cmd string, o eventsOptions) error {
	for _, f := range []struct{ value, flag, env string }{
		{o.natsCreds, "nats-creds", "CARGO_NATS_CREDS"},
		{o.natsNkey, "nats-nkey", "CARGO_NATS_NKEY"},
	} {
		if f.value != "" && o.natsURL == "" {
			return usagef(cmd, "--%s (or %s) is for the NATS server of --nats-url, which is not given (nor CARGO_NATS_URL): "+
				"add --nats-url, or leave --%s out to open the data directory", f.flag, f.env, f.flag)
		}
	}
	return nil
}

// storeFlags are the flags that say where the event stream is.
func storeFlags(fs *flag.FlagSet, o *eventsOptions, getenv func(string) string) {
	o.natsURL = getenv("CARGO_NATS_URL")
	fs.Var(cargodSetting{&o.natsURL, config.CheckNATSURL, "a NATS URL"}, "nats-url", "`URL` of the NATS server: an external one, or cargod's CARGO_NATS_LISTEN address (env CARGO_NATS_URL)")
	fs.StringVar(&o.natsCreds, "nats-creds", getenv("CARGO_NATS_CREDS"), "NATS credentials `file` for --nats-url (env CARGO_NATS_CREDS)")
	fs.StringVar(&o.natsNkey, "nats-nkey", getenv("CARGO_NATS_NKEY"), "nkey seed `file` for --nats-url; default: the data directory's "+eventstore.ListenSeedFile+
		", the seed cargod's CARGO_NATS_LISTEN asks for, if there is one and no --nats-creds (env CARGO_NATS_NKEY)")
	fs.StringVar(&o.dataDir, "data-dir", or(getenv("CARGO_DATA_DIR"), "./data"), "cargod's data `directory`: opened when there is no --nats-url, only while cargod is not running on it; "+
		"with --nats-url, where the listener's seed is (env CARGO_DATA_DIR)")
	o.stream = or(getenv("CARGO_NATS_STREAM"), "CARGO")
	fs.Var(cargodSetting{&o.stream, config.CheckStreamName, "a stream name"}, "stream", "JetStream stream `name` (env CARGO_NATS_STREAM)")
	o.natsWait = 10 * time.Second
	fs.Var(positiveDuration{&o.natsWait}, "nats-wait", "how long to `wait` for the stream on the server of --nats-url once it answers: "+
		"a cluster electing its leader takes seconds (a server that does not answer fails at once)")
}

// cargodSetting is a flag checked as cargod checks the setting it names
// (--stream as CARGO_NATS_STREAM, --nats-url as CARGO_NATS_URL): else the
// store refused a bad stream name only once opened, exit 1, under the
// message of a data directory that cargod holds, and the NATS client took
// https:// or a port out of range and failed as a server without the
// stream.
type cargodSetting struct {
	value *string
	check func(string) error
	what  string // "a stream name", …
}

func (c cargodSetting) String() string {
	if c.value == nil { // the flag package's zero value
		return ""
	}
	return *c.value
}

func (c cargodSetting) Set(s string) error {
	if err := c.check(s); err != nil {
		return fmt.Errorf("not %s cargod takes: %w", c.what, err)
	}
	*c.value = s
	return nil
}

// positiveDuration is a flag's wait, which must be longer than none: a
// wait of none would fail a server that is up.
type positiveDuration struct{ d *time.Duration }

func (p positiveDuration) String() string {
	if p.d == nil { // the flag package's zero value
		return ""
	}
	return p.d.String()
}

func (p positiveDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return errors.New("not a duration such as 10s or 500ms")
	case d <= 0:
		return errors.New("give a wait longer than none, such as 10s")
	}
	*p.d = d
	return nil
}

// openStore attaches to the stream as it is: a read must neither create
// a stream nor change its settings. What the store warns of goes to
// warnings: an event it cannot read is handed on without its type and
// time, and the operator reading it must learn why.
func openStore(ctx context.Context, o eventsOptions, warnings io.Writer) (*eventstore.Store, error) {
	// --nats-url and --stream are checked as they are parsed; the
	// environment's defaults are not, until here.
	if o.natsURL != "" {
		if err := config.CheckNATSURL(o.natsURL); err != nil {
			return nil, fmt.Errorf("CARGO_NATS_URL is not a NATS URL cargod takes: %w", err)
		}
	}
	if err := config.CheckStreamName(o.stream); err != nil {
		return nil, fmt.Errorf("CARGO_NATS_STREAM is not a stream name cargod takes: %w", err)
	}
	// While the store opens, only errors: its warnings that it is trying
	// again are for cargod waiting for its cluster to form, lines of noise
	// above the one that says the server does not answer (with why).
	var level slog.LevelVar
	level.Set(slog.LevelError)
	opts := eventstore.Options{URL: o.natsURL, CredsFile: o.natsCreds, NkeyFile: o.natsNkey, DataDir: o.dataDir, Stream: o.stream, Existing: true,
		Logger: slog.New(slog.NewTextHandler(warnings, &slog.HandlerOptions{Level: &level}))}
	// Once open, its warnings; and, following the stream, the line that
	// says the connection is back (INFO, as every line saying a failure
	// is over), which the README promises beside the one it was lost.
	after := slog.LevelWarn
	if o.follow {
		after = slog.LevelInfo
	}
	defer level.Set(after)
	if o.natsURL != "" {
		if seed := filepath.Join(o.dataDir, eventstore.ListenSeedFile); opts.NkeyFile == "" && opts.CredsFile == "" && exists(seed) {
			opts.NkeyFile = seed
		}
		// The store waits for a server that does not answer, as cargod
		// waits for a cluster that is forming, without end and without a
		// word. An operator's command tries once: an address where no
		// server answers is a mistake to report now. A server that
		// answers is waited for, as long as --nats-wait says, for its
		// stream (a cluster electing its leader).
		opts.ConnectOnce = true
		octx, cancel := context.WithTimeout(ctx, o.natsWait)
		defer cancel()
		store, err := eventstore.Open(octx, opts)
		var connErr *eventstore.ConnectError
		switch {
		case errors.As(err, &connErr) && connErr.Refused:
			return nil, fmt.Errorf("the NATS server at %s refused cargoctl (%w) %s", o.natsURL, reason(connErr.Err), credentialsGiven(opts, o.dataDir))
		case errors.As(err, &connErr) && httpAnswersAt(ctx, o.natsURL, connErr.Err):
			return nil, fmt.Errorf("an HTTP server answers at %s, not a NATS server: --nats-url is the address of a NATS server "+
				"(cargod's CARGO_NATS_LISTEN, or your own); cargod's HTTP API address (its CARGO_ADDR) is for --url "+
				"(cargoctl admin, state, shipment, rebuild and verify)", o.natsURL)
		case errors.As(err, &connErr):
			return nil, fmt.Errorf("the NATS server at %s does not answer: %w", o.natsURL, reason(connErr.Err))
		case errors.Is(err, eventstore.ErrNoSuchStream):
			return nil, fmt.Errorf("the NATS server at %s has no stream %s: check --stream (CARGO_NATS_STREAM)", o.natsURL, o.stream)
		case err != nil && ctx.Err() == nil && octx.Err() != nil:
			return nil, fmt.Errorf("the NATS server at %s did not give stream %s within --nats-wait %s: %w", o.natsURL, o.stream, o.natsWait, err)
		}
		return store, err
	}
	if _, err := os.Stat(filepath.Join(o.dataDir, "jetstream")); err != nil {
		return nil, fmt.Errorf("no event store in data directory %s (%v); set --data-dir, or --nats-url", o.dataDir, err)
	}
	store, err := eventstore.Open(ctx, opts)
	if errors.Is(err, eventstore.ErrNoSuchStream) {
		// The server loads a stream from its metadata: without it (lost,
		// or damaged), the stream's events lie in its directory unread,
		// and the name is not the mistake.
		if dirs, _ := filepath.Glob(filepath.Join(o.dataDir, "jetstream", "jetstream", "*", "streams", o.stream)); len(dirs) > 0 {
			return nil, fmt.Errorf("data directory %s has a directory of stream %s (%s), but the NATS server did not load it: its metadata (meta.inf, meta.sum) is missing or damaged; restore the directory from a backup", o.dataDir, o.stream, dirs[0])
		}
		return nil, fmt.Errorf("data directory %s has no stream %s: check --stream (CARGO_NATS_STREAM)", o.dataDir, o.stream)
	}
	// The hint is for a directory that cargod holds alone: under any other
	// failure (a lock file it cannot write) it sent the operator looking
	// for a cargod that is not there.
	if errors.Is(err, eventstore.ErrDataDirInUse) {
		return nil, fmt.Errorf("opening data directory %s: %w; cargoctl can open a data directory only while cargod is not running on it: "+
			"to read from a running cargod, pass --nats-url with the address it listens on for NATS clients (its CARGO_NATS_LISTEN, "+
			"logged at its start; if it has none, start it with one, such as CARGO_NATS_LISTEN=127.0.0.1:4223, as the README does: 4222 is the port of any other NATS server on the host)", o.dataDir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("opening data directory %s: %w", o.dataDir, err)
	}
	return store, nil
}

// httpAnswersAt reports whether an HTTP server listens at natsURL (one
// nats:// URL), whose connection to it timed out with err: such a server
// waits for a request, so the NATS client, which waits for the server's
// greeting, gives up after its connect timeout with "i/o timeout", as if
// nothing answered. cargod's HTTP port given for its CARGO_NATS_LISTEN is
// the usual cause, which one request names.
func httpAnswersAt(ctx context.Context, natsURL string, err error) bool {
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		return false
	}
	u, perr := url.Parse(natsURL)
	if perr != nil || u.Scheme != "nats" || u.Port() == "" || strings.Contains(natsURL, ",") {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, derr := (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
	if derr != nil {
		return false
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	if _, werr := io.WriteString(conn, "HEAD / HTTP/1.0\r\nHost: "+u.Host+"\r\n\r\n"); werr != nil {
		return false
	}
	head := make([]byte, len("HTTP/"))
	_, rerr := io.ReadFull(conn, head)
	return rerr == nil && string(head) == "HTTP/"
}

// credentialsGiven says what cargoctl proved itself with, for a refusal:
// the wrong seed, or none, is the usual cause, and the fix is a flag.
func credentialsGiven(opts eventstore.Options, dataDir string) string {
	const fix = "pass --data-dir of the cargod that listens there (its seed is " + eventstore.ListenSeedFile + " in it), or --nats-nkey or --nats-creds"
	switch {
	case opts.NkeyFile != "":
		return fmt.Sprintf("with the nkey seed %s: not the one it accepts; %s", opts.NkeyFile, fix)
	case opts.CredsFile != "":
		return fmt.Sprintf("with the credentials %s: %s", opts.CredsFile, fix)
	}
	return fmt.Sprintf("without credentials, as there is no nkey seed at %s: %s", filepath.Join(dataDir, eventstore.ListenSeedFile), fix)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// matches applies the filters that are not subject filters.
func (o eventsOptions) matches(r domain.Record) bool {
	// First: it follows chains of causes through events the others leave out.
	ofTenant := o.tenant == "" || o.ofTenant(r)
	return ofTenant && (o.eventType == "" || r.Type == o.eventType) &&
		(o.correlationID == "" || r.CorrelationID == o.correlationID) &&
		(o.actor == "" || r.Actor == o.actor) &&
		(o.since.IsZero() || !momentOf(r).Before(o.since)) &&
		(o.until.IsZero() || !momentOf(r).After(o.until))
}

// ofTenant reports whether r is --tenant's: stored by one of its requests,
// or by a reactor in answer to one of those events, or to such an answer
// (a quote priced, a booking confirmed, its quote accepted), which a
// reactor stores under no organisation. A cause comes before its effects
// in the stream, so one read finds both. The causation id, not the
// correlation id, ties them: a client may send another's X-Request-Id.
func (o eventsOptions) ofTenant(r domain.Record) bool {
	mine := r.Tenant == o.tenant ||
		r.Tenant == "" && strings.HasPrefix(r.Actor, reactorActor) && o.tenantCauses[r.CausationID]
	if mine {
		o.tenantCauses[r.EventID] = true
	}
	return mine
}

// reactorActor begins the actor of every event a reactor stores.
const reactorActor = "reactor:"

// eventLine is one line of output.
type eventLine struct {
	Sequence      uint64          `json:"sequence"`
	AggregateType string          `json:"aggregateType"`
	AggregateID   string          `json:"aggregateId"`
	Type          string          `json:"type"`
	SchemaVersion int             `json:"schemaVersion"`
	EventID       string          `json:"eventId"`
	CommandID     string          `json:"commandId,omitempty"`
	CorrelationID string          `json:"correlationId,omitempty"`
	CausationID   string          `json:"causationId,omitempty"`
	Actor         string          `json:"actor,omitempty"`
	Tenant        string          `json:"tenant,omitempty"`
	OccurredAt    time.Time       `json:"occurredAt,omitzero"`
	StoredAt      time.Time       `json:"storedAt,omitzero"`
	Data          json.RawMessage `json:"data"`
}

// lineOf turns a record into its output line. A payload that is not JSON
// (which cargod never writes) is printed as a string, with a warning. An
// event whose envelope could not be read has no time of its own: its line
// says when the stream stored it instead, rather than the year 1.
func lineOf(r domain.Record, warnings io.Writer) eventLine {
	data := json.RawMessage(r.Data)
	switch {
	case len(data) == 0:
		data = json.RawMessage("null")
	case !json.Valid(data):
		fmt.Fprintf(warnings, "cargoctl: sequence %d: the payload is not JSON; printed as a string\n", r.Sequence)
		data, _ = json.Marshal(string(r.Data))
	}
	line := eventLine{
		Sequence: r.Sequence, AggregateType: r.Aggregate.Type, AggregateID: r.Aggregate.ID,
		Type: r.Type, SchemaVersion: r.SchemaVersion, EventID: r.EventID, CommandID: r.CommandID,
		CorrelationID: r.CorrelationID, CausationID: r.CausationID, Actor: r.Actor, Tenant: r.Tenant,
		OccurredAt: r.OccurredAt, Data: data,
	}
	if r.OccurredAt.IsZero() {
		line.StoredAt = r.StoredAt.UTC()
	}
	return line
}

// parseTime reads an RFC 3339 time or a plain date (UTC). A date read as
// the end of a range stands for the last instant of that day. It reads
// every time flag (events --since and --until, trace --since, state --at),
// so that a form one takes is never refused by another.
func parseTime(s string, endOfDay bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2026-11-25T10:00:00Z) nor a date (2026-11-25)", s)
	}
	if endOfDay {
		d = d.AddDate(0, 0, 1).Add(-time.Nanosecond)
	}
	return d, nil
}

// emptyFlag is the first by name (the order of fs.Visit, not of the
// command line) of the filter flags names given an empty value, or "".
// A filter given empty filters nothing: --correlation-id "$REQUEST_ID"
// of a variable not set would print every event, so the commands refuse
// it rather than take it as left out.
func emptyFlag(fs *flag.FlagSet, names ...string) string {
	var empty string
	fs.Visit(func(f *flag.Flag) {
		if empty == "" && f.Value.String() == "" && slices.Contains(names, f.Name) {
			empty = f.Name
		}
	})
	return empty
}

// flagGiven tells whether the flag name is on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// refuseEmpty is the usage error of cmd for the first of the flags names
// given empty (see emptyFlag), or nil: every command says it alike.
func refuseEmpty(cmd string, fs *flag.FlagSet, names ...string) error {
	if empty := emptyFlag(fs, names...); empty != "" {
		return usagef(cmd, "--%s is empty: give it a value, or leave it out", empty)
	}
	return nil
}

// didYouMean names the entry of known that s matches but for case, else
// the one a typo of it was meant to be, if any.
func didYouMean(s string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(k, s) {
			return fmt.Sprintf(" (did you mean %s?)", k)
		}
	}
	if k := closest.Word(s, known); k != "" {
		return fmt.Sprintf(" (did you mean %s?)", k)
	}
	return ""
}

// storedID is id as the service stores it, for the ways an operator
// writes an AWB number (without its dash) or a flight id (its number in
// lower case, or padded as timetables pad it), which the API and
// cargoctl shipment take too: LH0084-2026-11-26 is LH84-2026-11-26.
// Other ids are as given: they are the service's own.
func storedID(id string) string {
	if awb, err := domain.ParseAWB(id); err == nil {
		return awb
	}
	number, date, ok := strings.Cut(id, "-")
	if _, err := time.Parse(time.DateOnly, date); ok && err == nil && domain.ValidFlightNumber(domain.CanonicalFlightNumber(number)) {
		return domain.CanonicalFlightID(id)
	}
	return id
}

// wrongCheckDigit is what is wrong with id's check digit when id has an
// AWB number's shape (020-81140743, 02081140743) and a wrong one, else
// "": such an id is taken as it is, as an organisation's or a user's may
// have that shape, and its read finding nothing said nothing of why.
func wrongCheckDigit(id string) string {
	if !awbShape.MatchString(id) {
		return ""
	}
	if _, err := domain.ParseAWB(id); err != nil {
		return err.Error()
	}
	return ""
}

var awbShape = regexp.MustCompile(`^[0-9]{3}-?[0-9]{8}$`)

// validToken reports whether s can be one token of a subject filter:
// wildcards and separators would widen the filter.
func validToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, ". \t\r\n*>")
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
