package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what a run measured.
type Report struct {
	Rows []Row `json:"rows"`
	// Notes say which scenarios could not run, and why.
	Notes []string `json:"notes,omitempty"`
}

// Clean is true when every scenario ran and measured, without a single
// error.
func (r Report) Clean() bool {
	for _, row := range r.Rows {
		if row.ErrorCount() > 0 || row.Count == 0 {
			return false
		}
	}
	return len(r.Notes) == 0
}

// bench is one run: its clients of cargod and of the bare handler.
type bench struct {
	cfg    Config
	server *url.URL     // cargod
	client *http.Client // to cargod, for all but the request rows
	fwd    *api         // the forwarder
	bare   *bare
	notes  []string
}

func (b *bench) note(format string, args ...any) {
	b.notes = append(b.notes, fmt.Sprintf(format, args...))
}

// Run runs the scenarios of cfg against its server, one after the other.
// A scenario that cannot run is left out with a note; the error is for
// what stops the whole run (no server, wrong credentials, interrupted).
// Interrupted, the report holds the scenarios finished and the notes.
func Run(ctx context.Context, cfg Config) (Report, error) {
	// [] in JSON, not null, when no scenario could run: a run
	// interrupted while logging in prints this report too.
	rep := Report{Rows: []Row{}}
	if err := cfg.validate(); err != nil {
		return rep, err
	}
	cfg.URL = strings.TrimSuffix(cfg.URL, "/")
	client := newHTTPClient(max(cfg.Clients, cfg.Bookings))
	fwd, c, err := login(ctx, cfg.URL, client, cfg.ForwarderID, cfg.ForwarderSecret)
	if err != nil {
		return rep, fmt.Errorf("is cargod running at %s, with these credentials (demo data)? %w", cfg.URL, err)
	}
	if c.Role != "forwarder" {
		return rep, fmt.Errorf("-forwarder-id %s is a client of a %s, not of a forwarder", cfg.ForwarderID, c.Role)
	}
	bare, err := startBare()
	if err != nil {
		return rep, err
	}
	defer bare.srv.Close()
	server, _ := url.Parse(cfg.URL) // validated
	b := &bench{cfg: cfg, server: server, client: client, fwd: fwd, bare: bare}
	scenarios := map[string]func(context.Context) ([]Row, error){
		CreateQuote: b.createQuote, GetQuote: b.getQuote, Booking: b.booking, Webhooks: b.webhooks,
	}
	for _, name := range allScenarios {
		if !slices.Contains(cfg.Scenarios, name) {
			continue
		}
		rows, err := scenarios[name](ctx)
		if ctx.Err() != nil {
			// Its rows measured less than their time: left out. The
			// notes stay, such as subscriptions left behind.
			b.note("interrupted during %s: the rows of the scenarios before it are complete, its own are left out", name)
			rep.Notes = b.notes
			return rep, ctx.Err()
		}
		if err != nil {
			b.note("%s: not measured: %v", name, err)
		}
		rep.Rows = append(rep.Rows, rows...)
	}
	for _, row := range rep.Rows {
		// A row of errors alone has them to show: more time would add
		// more of them.
		if row.Count == 0 && row.ErrorCount() == 0 {
			b.note("%s %s: nothing succeeded within the measured time; a longer -duration may help", row.Scenario, row.Name)
		}
	}
	for _, row := range rep.Rows {
		if row.Errors["429"] > 0 {
			b.note("%s", rateLimitHint)
			break
		}
	}
	rep.Notes = b.notes
	return rep, nil
}

// ratio sets ours' Ratio against the bare row.
func ratio(ours *Row, bare Row) {
	if bare.Rate > 0 {
		ours.Ratio = ours.Rate / bare.Rate
	}
}

// Main is the command: it parses args, runs, and prints progress on
// stderr and the report on stdout. It returns the exit status: 2 for a bad
// command line, 1 when the run failed, was interrupted (the report then
// holds what it finished) or measured errors.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := ParseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "cargobench:", err)
		return 2
	}
	cfg.Progress = stderr
	rep, err := Run(ctx, cfg)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(stderr, "cargobench:", err)
		return 1
	}
	if cfg.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		rep.WriteTable(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "cargobench: interrupted")
		return 1
	}
	if !rep.Clean() {
		return 1
	}
	return 0
}

// WriteTable prints the report as a table, then the examples of errors
// and the notes.
func (r Report) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\trow\tcount\trate\tp50\tp99\terrors\tours/bare")
	for _, row := range r.Rows {
		ratio := ""
		if row.Ratio > 0 {
			ratio = fmt.Sprintf("%.2f×", row.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f %s\t%s\t%s\t%s\t%s\n", row.Scenario, row.Name, row.Count, row.Rate, row.Unit,
			formatMs(row.P50Ms), formatMs(row.P99Ms), formatErrors(row.Errors), ratio)
	}
	tw.Flush()
	for _, row := range r.Rows {
		if len(row.Examples) > 0 {
			fmt.Fprintf(w, "\nfirst errors of %s %s:\n", row.Scenario, row.Name)
			for _, e := range row.Examples {
				fmt.Fprintf(w, "  %s\n", e)
			}
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range r.Notes {
			fmt.Fprintln(w, "note:", n)
		}
	}
}

func formatMs(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 100:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

// formatErrors is the total, and the count of each kind.
func formatErrors(errs map[string]int) string {
	n := 0
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		n += errs[k]
		kinds = append(kinds, fmt.Sprintf("%s: %d", k, errs[k]))
	}
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", n, strings.Join(kinds, ", "))
}

// today is the UTC date days from now.
func today(days int) string { return time.Now().UTC().AddDate(0, 0, days).Format(time.DateOnly) }
