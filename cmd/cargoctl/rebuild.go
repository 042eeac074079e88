package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/cargostream/cargostream/views"
)

const rebuildSynopsis = `Usage: cargoctl rebuild [connection flags]

Rebuilds the read models of a running cargod (POST /api/admin/rebuild):
it builds fresh read models from the event stream beside the live ones,
which keep answering reads and applying new events meanwhile, then brings
them to exactly the live ones' sequence with the projector held for a
moment, and swaps them in. A progress bar with the rate in events per
second is drawn on stderr (plain lines when stderr is not a terminal).
Exits 0 once the fresh models are swapped in.

The fresh models take as much memory as the live ones until the swap.
One rebuild or verify runs at a time. Behind a load balancer, it rebuilds
the replica that took the request: give --url of each replica.

The connection flags and credentials are those of 'cargoctl admin'.
`

const verifySynopsis = `Usage: cargoctl verify [connection flags] [--json]

Verifies a running cargod (POST /api/admin/verify): that every event of
the stream, up to the read models' sequence, decodes; that its envelope
is whole (type, schema version, event id, command and correlation ids,
actor, time); that the stream has no gaps and each event follows on from
its aggregate's event before, as the store wrote it (the sequence the
write expected); and that the read models equal a fresh replay of the
stream at the same sequence, field by field. Progress is drawn on stderr
as for rebuild.

Prints each finding on stdout, one a line, and exits 1 when there is any;
0 when there is none. A read model that differs is named with its field
and the entries that differ: 'cargoctl rebuild' replaces it with a fresh
replay. With --json, prints the whole verification as JSON instead.

Memory, one job at a time and the replica verified are as for rebuild.
The connection flags and credentials are those of 'cargoctl admin'.
`

// job is a rebuild or verification as the API shows it.
type job = views.MaintenanceJobJSON

// pollEvery is how often cargoctl asks how far a job has come.
const pollEvery = 250 * time.Millisecond

func runRebuild(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	j, _, err := runJob(ctx, "rebuild", rebuildSynopsis, args, getenv, stdout, stderr)
	if err != nil || j == nil {
		return err
	}
	fmt.Fprintf(stdout, "read models rebuilt: %d events replayed at %.0f events/s, swapped in at sequence %d\n", j.EventsDone, j.EventsPerSecond, j.Sequence)
	return nil
}

func runVerify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	j, raw, err := runJob(ctx, "verify", verifySynopsis, args, getenv, stdout, stderr)
	if err != nil || j == nil {
		return err
	}
	if raw != nil {
		if err := printJSON(stdout, raw); err != nil {
			return err
		}
	} else {
		for _, p := range j.StreamProblems {
			fmt.Fprintf(stdout, "event %d (%s): %s: %s\n", p.Sequence, p.Aggregate, p.Check, p.Problem)
		}
		if j.MoreStreamProblems > 0 {
			fmt.Fprintf(stdout, "... and %s more of events\n", counted(j.MoreStreamProblems, "problem", "problems"))
		}
		for _, d := range j.ReadModelDifferences {
			fmt.Fprintf(stdout, "read model %s\n", d.Description)
		}
	}
	problems, models := len(j.StreamProblems)+j.MoreStreamProblems, len(j.ReadModelDifferences)
	if problems+models > 0 {
		return fmt.Errorf("verify found %s of events and %s of read models that differ from a fresh replay, at sequence %d",
			counted(problems, "problem", "problems"), counted(models, "field", "fields"), j.Sequence)
	}
	fmt.Fprintf(stderr, "verified: every event up to sequence %d is whole, and the read models equal a fresh replay\n", j.Sequence)
	return nil
}

// runJob starts a job of kind and follows it to its end, drawing its
// progress on stderr. It returns the finished job, and with --json its
// response as it came; nil for --help. A job that could not finish is
// an error.
func runJob(ctx context.Context, kind, synopsis string, args []string, getenv func(string) string, stdout, stderr io.Writer) (*job, []byte, error) {
	conn := connFlagsOf(getenv)
	fs := newFlagSet(kind, synopsis)
	conn.register(fs)
	var asJSON *bool
	if kind == "verify" {
		asJSON = fs.Bool("json", false, "print the whole verification as JSON")
	}
	if help, err := parseFlags(fs, args, false, stdout); help || err != nil {
		return nil, nil, err
	}
	client, err := conn.client(kind, getenv, stderr)
	if err != nil {
		return nil, nil, err
	}
	if err := client.authorize(ctx); err != nil {
		return nil, nil, err
	}
	path := "/api/admin/" + kind
	raw, err := client.call(ctx, http.MethodPost, path, nil)
	started := err == nil
	bar := newProgressBar(stderr, kind)
	for err == nil {
		var j job
		if err = json.Unmarshal(raw, &j); err != nil {
			err = fmt.Errorf("the response is not a job: %w: %.200s", err, raw)
			break
		}
		bar.show(j)
		if j.State != "running" {
			bar.end()
			if j.Failure != "" {
				return nil, nil, fmt.Errorf("%s failed: %s", kind, j.Failure)
			}
			if asJSON == nil || !*asJSON {
				raw = nil
			}
			return &j, raw, nil
		}
		select {
		case <-ctx.Done():
			err = errInterrupted
		case <-time.After(pollEvery):
			raw, err = client.call(ctx, http.MethodGet, path, nil)
		}
	}
	bar.end()
	if errors.Is(err, errInterrupted) {
		return nil, nil, fmt.Errorf("%w: the %s goes on in cargod, if it began (GET %s shows it)", err, kind, path)
	}
	if started && errors.Is(err, errNoAnswer) {
		// The job runs in cargod's process: stopped, it took the job
		// with it, and a restarted one knows nothing of it.
		return nil, nil, fmt.Errorf("%w\n(the %s ends with the cargod that runs it: if that one stopped, run it again once cargod is ready; "+
			"if it still runs, GET %s shows how the %s ended)", err, kind, path, kind)
	}
	var apiErr *apiError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict {
		// The refusal names the job running, a rebuild or a verify: not
		// necessarily of the kind asked for.
		return nil, nil, fmt.Errorf("%w\n(one job at a time: try again once it ends; GET /api/admin/rebuild or /api/admin/verify, as the job running is, follows it)", err)
	}
	return nil, nil, err
}

// progressBar draws a job's progress: redrawn in place on a terminal,
// else a line when the phase changes and every progressEvery, the pace
// of a read of the stream's lines.
type progressBar struct {
	w        io.Writer
	kind     string
	terminal bool
	phase    string
	drawn    time.Time // when a plain line was last written
}

func newProgressBar(w io.Writer, kind string) *progressBar {
	b := &progressBar{w: w, kind: kind}
	if f, ok := w.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			b.terminal = true
		}
	}
	return b
}

func (b *progressBar) show(j job) {
	percent := 0.0
	if j.State != "running" {
		percent = 100
	}
	if j.EventsTotal > 0 {
		percent = 100 * float64(min(j.EventsDone, j.EventsTotal)) / float64(j.EventsTotal)
	}
	counts := fmt.Sprintf("%d/%d events, %.0f events/s", j.EventsDone, j.EventsTotal, j.EventsPerSecond)
	if b.terminal {
		const width = 30
		filled := int(percent / 100 * width)
		fmt.Fprintf(b.w, "\r\033[K%s [%s%s] %3.0f%% %s, %s", b.kind, strings.Repeat("#", filled), strings.Repeat("-", width-filled), percent, counts, j.Phase)
		return
	}
	if j.Phase == b.phase && time.Since(b.drawn) < progressEvery {
		return
	}
	b.phase, b.drawn = j.Phase, time.Now()
	fmt.Fprintf(b.w, "%s: %s: %s (%.0f%%)\n", b.kind, j.Phase, counts, percent)
}

// end ends the bar's line on a terminal.
func (b *progressBar) end() {
	if b.terminal {
		fmt.Fprintln(b.w)
	}
}

// counted is n things, as one or many: "1 problem", "2 problems".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
