package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/countread"
	"github.com/cargostream/cargostream/refdata"
)

const importUsage = `Usage: cargoctl import airports|airlines|commodities|hs-codes|dangerous-goods FILE [flags]

Imports a reference data file through the admin API. Formats:
  airports         airportsdata CSV, or OpenFlights airports.dat
  airlines         the merged airlines CSV, or OPTD optd_airlines.csv
  commodities      code,name,hsCode,dangerousGoods,unNumber[,hazardClass,packingGroup]
  hs-codes         the harmonized-system CSV (section,hscode,description,parent,level)
  dangerous-goods  the US DOT hazardous materials table CSV

The format is recognised from the file's first line (--format names it).
Long files go in chunks, with progress on stderr. Rows already stored as
they are change nothing; bad rows are reported with their line numbers
and do not stop the good ones.
`

// importKinds maps the command's kinds to the API's kind and format.
var importKinds = map[string]struct{ kind, format string }{
	"airports":        {"airports", ""},
	"airlines":        {"airlines", ""},
	"commodities":     {"commodities", ""},
	"hs-codes":        {"commodities", "hs-codes"},
	"dangerous-goods": {"commodities", "dangerous-goods"},
}

// A request holds up to importChunkLines lines and importChunkBytes
// bytes, whichever comes first (rows of long names would otherwise pass
// the server's body limit, 1 MiB by default), but for the lines of an
// entry that goes on past them (see refdata.EntryKey).
const (
	importChunkLines = 3000
	importChunkBytes = 512 << 10
)

// importMaxLine is the longest line read: longer than any row of the
// formats by far, and well below the server's default body limit (1 MiB).
const importMaxLine = 256 << 10

type importReport struct {
	Changed   int               `json:"changed"`
	Unchanged int               `json:"unchanged"`
	Skipped   int               `json:"skipped"`
	Rejected  []importRejection `json:"rejected"`
	Format    string            `json:"format"`
}

// importRejection is a row the server refused, by its line in the file.
type importRejection struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func runImport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import", importUsage)
	conn := connFlagsOf(getenv)
	conn.register(fs)
	format := fs.String("format", "", "the file's `format`, when it cannot be recognised: "+refdata.FormatsOf(domain.RefAirports)+" (airports), "+
		refdata.FormatsOf(domain.RefAirlines)+" (airlines), "+refdata.FormatsOf(domain.RefCommodities)+" (commodities)")
	positional, help, err := parseInterspersed(fs, args, stdout)
	if help || err != nil {
		return err
	}
	if len(positional) != 2 {
		return usagef("import", "want a kind and a file")
	}
	k, ok := importKinds[positional[0]]
	if !ok {
		return usagef("import", "unknown kind %q: airports, airlines, commodities, hs-codes or dangerous-goods", positional[0])
	}
	if *format != "" && !slices.Contains(refdata.Formats[k.kind], *format) {
		return usagef("import", "unknown %s format %q: %s", k.kind, *format, refdata.FormatsOf(k.kind))
	}
	if *format == "" {
		*format = k.format
	}
	client, err := conn.client("import", getenv, stderr)
	if err != nil {
		return err
	}
	f, err := os.Open(positional[1])
	if err != nil {
		return err
	}
	defer f.Close()
	// Read through a reader that counts, for the progress of a file of a
	// known size, and looked into first: a pipe too may bring nothing, or
	// a compressed file.
	var size int64
	switch info, err := f.Stat(); {
	case err == nil && info.IsDir():
		// Opened all the same; its read would fail saying that lines 1-0
		// are imported.
		return fmt.Errorf("%s is a directory, not a file", positional[1])
	case err == nil && info.Mode().IsRegular():
		size = info.Size()
	}
	read := &countread.Reader{R: f}
	in := bufio.NewReaderSize(read, 64<<10)
	switch head, _ := in.Peek(2); {
	case len(head) == 0:
		// A download cut short imports nothing; it must not look done.
		return fmt.Errorf("%s is empty: nothing to import", positional[1])
	case len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b:
		return fmt.Errorf("%s is compressed (gzip): decompress it first (gunzip -k %s)", positional[1], positional[1])
	}
	if err := client.authorize(ctx); err != nil {
		return err
	}

	total := importReport{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), importMaxLine)
	var header string
	var entryOf func(string) string
	var chunk strings.Builder
	line, chunkStart, lines, blank := 0, 1, 0, 0
	send := func() error {
		if lines == 0 {
			return nil
		}
		last := chunkStart + lines - 1 // the chunk's last line (the loop may have read the next)
		q := url.Values{"firstLine": {fmt.Sprint(chunkStart)}, "source": {positional[1]}}
		if *format != "" {
			q.Set("format", *format)
		}
		body, err := client.send(ctx, "POST", "/api/admin/reference/"+k.kind+"?"+q.Encode(), "text/csv", []byte(chunk.String()))
		if err != nil {
			// The rows rejected so far are listed, as at the end.
			listRejected(stdout, total.Rejected)
			if errors.Is(err, errInterrupted) {
				return fmt.Errorf("%w: %s", err, importedBefore(err, chunkStart, last))
			}
			return fmt.Errorf("lines %d-%d: %w: %s", chunkStart, last, err, importedBefore(err, chunkStart, last))
		}
		var r importReport
		if err := json.Unmarshal(body, &r); err != nil {
			return fmt.Errorf("lines %d-%d: unreadable report: %w", chunkStart, last, err)
		}
		if *format == "" {
			*format = r.Format // the server recognised it from the first chunk
		}
		total.Changed += r.Changed
		total.Unchanged += r.Unchanged
		total.Skipped += r.Skipped
		total.Rejected = append(total.Rejected, r.Rejected...)
		if size > 0 {
			fmt.Fprintf(stderr, "%s: %d lines (%d%%), %d changed, %d rejected\n", positional[0], last, min(read.N*100/size, 100), total.Changed, len(total.Rejected))
		} else {
			fmt.Fprintf(stderr, "%s: %d lines, %d changed, %d rejected\n", positional[0], last, total.Changed, len(total.Rejected))
		}
		chunk.Reset()
		lines = 0
		return nil
	}
	lastEntry := ""
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			blank++ // no row, as the server reads it
		}
		// Every format but OpenFlights starts with a header, which each
		// chunk repeats. An OpenFlights file is told by its format, as
		// the server tells it: its first row need not be the one of id 1.
		if line == 1 {
			if fileFormat := or(*format, refdata.DetectFormat(k.kind, text)); fileFormat != refdata.FormatOpenFlights {
				header, entryOf = text, refdata.EntryKey(fileFormat, text)
			}
		}
		// A part ends before a line of another entry than the line
		// before; a line of none (a cross-reference) goes with the
		// entry before it, unless the part is half as large again.
		entry := ""
		if entryOf != nil && line > 1 {
			entry = entryOf(text)
		}
		full := lines >= importChunkLines || chunk.Len()+len(text) >= importChunkBytes
		newEntry := entryOf == nil || (entry != "" && entry != lastEntry)
		if full && newEntry || chunk.Len()+len(text) >= importChunkBytes*3/2 {
			if err := send(); err != nil {
				return err
			}
		}
		if entry != "" {
			lastEntry = entry
		}
		if lines == 0 {
			chunkStart = line
			if header != "" && line > 1 {
				chunk.WriteString(header + "\n") // each chunk repeats the header
			}
		}
		chunk.WriteString(text + "\n")
		lines++
	}
	// What was read before a line that cannot be goes in all the same, so
	// that the message can say exactly where the import stopped.
	readErr := sc.Err()
	if err := send(); err != nil {
		return err
	}
	listRejected(stdout, total.Rejected)
	switch {
	case errors.Is(readErr, bufio.ErrTooLong):
		return fmt.Errorf("%s: line %d is longer than %d bytes: lines 1-%d are imported, nothing from line %d on",
			positional[1], line+1, importMaxLine, line, line+1)
	case readErr != nil:
		return fmt.Errorf("reading %s after line %d (lines 1-%d are imported): %w", positional[1], line, line, readErr)
	}
	// The rows are the file's lines but its header, which holds no data,
	// and blank ones; the rejected ones are named by their lines in the
	// file.
	rows := line - blank
	if header != "" {
		rows--
	}
	fmt.Fprintf(stdout, "%s (%s): %d rows; %d changed, %d unchanged, %d skipped, %d rejected\n",
		positional[0], *format, rows, total.Changed, total.Unchanged, total.Skipped, len(total.Rejected))
	if n := len(total.Rejected); n > 0 {
		// The good rows are in; the exit status tells a script that not
		// all of the file is.
		return fmt.Errorf("%d of %d rows rejected (listed above)", n, rows)
	}
	return nil
}

// importedBefore says what of a file is in when the request of its lines
// from to to failed with err: the lines before for certain; these in part
// (interrupted, or cargod gone or failing: the server stores a request's
// rows in parts, and stored rows change nothing when sent again), or none
// of them when cargod refused the request whole (a 4xx, which sent again
// is refused again).
func importedBefore(err error, from, to int) string {
	imported := "nothing is imported for certain"
	if from > 1 {
		imported = fmt.Sprintf("lines 1-%d are imported", from-1)
	}
	var refused *apiError
	if errors.As(err, &refused) && refused.Status < 500 {
		return fmt.Sprintf("%s, and none of lines %d-%d", imported, from, to)
	}
	return fmt.Sprintf("%s, and lines %d-%d may be in part; import the file again to finish (rows stored already change nothing)", imported, from, to)
}

// listRejected prints the rows rejected, one a line, by their lines in the
// file.
func listRejected(stdout io.Writer, rejected []importRejection) {
	for _, r := range rejected {
		fmt.Fprintf(stdout, "line %d: %s\n", r.Line, r.Message)
	}
}
