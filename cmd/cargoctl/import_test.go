package main

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestImport(t *testing.T) {
	url := startServer(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("airports.csv", `"icao","iata","name","city","subd","country","elevation","lat","lon","tz","lid"
"EDDF","FRA","Frankfurt am Main Airport","Frankfurt am Main","Hesse","DE",364,50.0333,8.5706,"Europe/Berlin",""
"KJFK","JFK","John F Kennedy International Airport","New York","New York","US",13,40.6398,-73.7789,"America/New_York",""
"00AA","","Aero B Ranch Airport","Leoti","Kansas","US",3435,38.7,-101.4,"America/Chicago","00AA"
"EDDM","MUC","Munich Airport","Munich","Bavaria","DE",1487,48.35,11.78,"Europe/Nowhere",""
"ED","LEJ","Leipzig/Halle Airport","Leipzig","Saxony","DE",465,51.43,12.24,"Europe/Berlin",""
`)
	tests := []struct {
		name    string
		args    []string
		summary string
		lines   []string
	}{
		{"first import", []string{"import", "airports", good}, "airports (airportsdata): 5 rows; 2 changed, 0 unchanged, 1 skipped, 2 rejected",
			[]string{"line 5: ", "line 6: "}},
		{"again: nothing new", []string{"import", "airports", good}, "airports (airportsdata): 5 rows; 0 changed, 2 unchanged, 1 skipped, 2 rejected", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut strings.Builder
			// The good rows go in; the rejected ones fail the command.
			if err := run(t.Context(), tt.args, adminEnv(url), &out, &errOut); err == nil || err.Error() != "2 of 5 rows rejected (listed above)" {
				t.Fatalf("%v\n%s", err, errOut.String())
			}
			if !strings.Contains(out.String(), tt.summary) {
				t.Errorf("output:\n%s\nwant %q", out.String(), tt.summary)
			}
			for _, l := range tt.lines {
				if !strings.Contains(out.String(), l) {
					t.Errorf("output lacks %q:\n%s", l, out.String())
				}
			}
			if !strings.Contains(errOut.String(), "airports: 6 lines (100%)") {
				t.Errorf("no progress on stderr: %q", errOut.String())
			}
		})
	}
	var out, errOut strings.Builder
	if err := run(t.Context(), []string{"import", "planets", good}, adminEnv(url), &out, &errOut); exitCode(err) != 2 {
		t.Errorf("unknown kind = %v", err)
	}
	err := run(t.Context(), []string{"import", "commodities", good, "--format", "nope"}, adminEnv(url), &out, &errOut)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), `unknown commodities format "nope": commodities, hs-codes or dangerous-goods`) {
		t.Errorf("an unknown format = %v", err)
	}
	// A directory, a missing, empty or compressed file is named, before
	// anything is sent.
	empty, gzipped := write("empty.csv", ""), write("airports.csv.gz", "\x1f\x8b\x08\x00rest")
	for _, tt := range []struct{ path, want string }{
		{dir, dir + " is a directory, not a file"},
		{filepath.Join(dir, "none.csv"), "no such file or directory"},
		{empty, empty + " is empty: nothing to import"},
		{gzipped, gzipped + " is compressed (gzip): decompress it first"},
	} {
		err := run(t.Context(), []string{"import", "airports", tt.path}, adminEnv(url), &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "imported") {
			t.Errorf("import of %s = %v, want %q", tt.path, err, tt.want)
		}
	}
	// A line too long to read stops the import there; what came before is in.
	long := write("long.csv", `"icao","iata","name","city","subd","country","elevation","lat","lon","tz","lid"
"EDDF","FRA","Frankfurt am Main Airport","Frankfurt am Main","Hesse","DE",364,50.0333,8.5706,"Europe/Berlin",""
"EDDM","MUC","`+strings.Repeat("M", 2<<20)+`"
"KJFK","JFK","x"
`)
	err = run(t.Context(), []string{"import", "airports", long}, adminEnv(url), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "line 3 is longer than 262144 bytes: lines 1-2 are imported, nothing from line 3 on") {
		t.Errorf("a file with a 2 MiB line = %v", err)
	}
}

// TestImportGetsANewTokenWhenItsTokenRunsOutBetweenChunks: an access
// token lives CARGO_TOKEN_TTL; a long import (or rebuild, or verify)
// outlives it. Here the token is revoked while the first chunk is
// answered, which the server refuses as it refuses an expired one: the
// next chunk must go in with a new token, not end the import with a 401.
func TestImportGetsANewTokenWhenItsTokenRunsOutBetweenChunks(t *testing.T) {
	api := startServer(t)
	srv, chunks := chunkProxy(t, api, 1, func(w http.ResponseWriter, r *http.Request, proxy http.Handler) {
		// The first chunk's answer reaches cargoctl only once its
		// token is refused.
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		if status, body := send(t, api, "/api/admin/token-revocations", adminToken(t, api), `{"subject":"client:admin"}`); status != http.StatusNoContent {
			t.Errorf("revoking the tokens: %d %v", status, body)
		}
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})

	rows := importChunkLines + 10
	path := airstripsFile(t, rows)
	out, errOut, err := runCmd(t, adminEnv(srv.URL), "import", "airports", path)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	// Two chunks, the second sent again with the new token.
	if want := fmt.Sprintf("%d rows; 0 changed, 0 unchanged, %d skipped, 0 rejected", rows, rows); !strings.Contains(out, want) || chunks.Load() != 3 {
		t.Errorf("in %d requests, printed %q; want 3 and %q", chunks.Load(), out, want)
	}
}

// TestImportOfAnOpenFlightsFileNamesTheLinesOfItsRejectedRows: OpenFlights
// files have no header, whatever the id of their first row (a file cut
// from airports.dat starts where it was cut). Taken for a header, the
// first row went again at the head of every later chunk, where the server
// counts it as a row: the rows after it were named one line too far.
func TestImportOfAnOpenFlightsFileNamesTheLinesOfItsRejectedRows(t *testing.T) {
	api := startServer(t)
	var file strings.Builder
	rows := importChunkLines + 5
	for line := 1; line <= rows; line++ {
		if line == importChunkLines+3 {
			file.WriteString("9999,\"Half a row\",\"Nowhere\"\n")
			continue
		}
		// Airports without an IATA code, which the import skips.
		fmt.Fprintf(&file, `%d,"Strip %d","Leoti","United States",\N,"X%05d",38.7,-101.4,3435,-6,"A","America/Chicago","airport","OurAirports"`+"\n", line+336, line, line)
	}
	path := filepath.Join(t.TempDir(), "airports-us.dat")
	if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd(t, adminEnv(api), "import", "airports", path)
	if err == nil || err.Error() != fmt.Sprintf("1 of %d rows rejected (listed above)", rows) {
		t.Errorf("error = %v", err)
	}
	want := fmt.Sprintf("line %d: has 3 fields, want 14\nairports (openflights): %d rows; 0 changed, 0 unchanged, %d skipped, 1 rejected\n", importChunkLines+3, rows, rows-1)
	if out != want {
		t.Errorf("printed\n%s\nwant\n%s", out, want)
	}
}

// A format not told from the first line, or named wrong, is refused with
// the names --format takes for that kind of file, which the operator had
// no way to learn.
func TestAFormatNotToldOrNamedWrongIsRefusedWithTheFormatsOfItsKind(t *testing.T) {
	api := startServer(t)
	path := filepath.Join(t.TempDir(), "my-commodities.csv")
	if err := os.WriteFile(path, []byte("code,name,hsCode,dangerousGoods,unNumber\nMYC,My commodity,8507,false,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"a commodities file imported as airports", []string{"import", "airports", path},
			"name it with the parameter format (cargoctl import --format): airportsdata or openflights"},
		{"an airlines format that does not exist", []string{"import", "airlines", path, "--format", "iata"},
			`unknown airlines format "iata": airlines-merged or optd`},
		{"a commodities format that does not exist", []string{"import", "commodities", path, "--format", "csv"},
			`unknown commodities format "csv": commodities, hs-codes or dangerous-goods`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCmd(t, adminEnv(api), tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// A file goes in parts, but the rows of one entry of the dangerous-goods
// table (a UN number's packing groups) go in one: split, the entry was
// stored from its later rows alone, and changed again by every import of
// the same file. Parts also stay within the server's body limit, however
// long the rows.
func TestAnImportKeepsAnEntrysRowsTogetherAndItsPartsWithinTheBodyLimit(t *testing.T) {
	url := startServer(t)
	dir := t.TempDir()
	var dg strings.Builder
	dg.WriteString("row_id,id_number,un_number,proper_shipping_name,cross_reference_entries,hazard_class,packing_group,label_codes,special_provisions,symbols,passenger_aircraft_rail_max_qty,cargo_aircraft_only_max_qty,vessel_stowage_location,parse_note\n")
	for i := range importChunkLines - 2 { // lines 2 to 2999
		fmt.Fprintf(&dg, "%d,UN%04d,%04d,Substance %d,,3,II,3,,,5 L,60 L,E,\n", i, 4000+i, 4000+i, i)
	}
	for _, pg := range []string{"I", "II", "III"} { // lines 3000 to 3003: a part ends after 3000
		fmt.Fprintf(&dg, "9,UN3287,3287,\"Toxic liquid, inorganic, n.o.s.\",,6.1,%s,6.1,,G,1 L,30 L,A,\n", pg)
		if pg == "I" { // and a cross-reference between its rows, of no UN number
			dg.WriteString("10,,,\"Toxic liquids, see UN3287\",,,,,,,,,,\n")
		}
	}
	dgFile := filepath.Join(dir, "dg.csv")
	if err := os.WriteFile(dgFile, []byte(dg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// 2999 UN numbers, each stored once (split, UN3287 was stored twice,
	// and again by each import of the file).
	for _, want := range []string{"2999 changed, 0 unchanged", "0 changed, 2999 unchanged"} {
		out, errOut, err := runCmd(t, adminEnv(url), "import", "dangerous-goods", dgFile)
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("import: %v, %s\n%s; want %s", err, out, errOut, want)
		}
	}

	var long strings.Builder
	long.WriteString("code,name,hsCode,dangerousGoods,unNumber\n")
	for i := range 3000 { // 1.4 MB: more than a request's 1 MiB
		fmt.Fprintf(&long, "LONG%05d,%s,8471,false,\n", i, strings.Repeat("Widget part assembly ", 22)[:450])
	}
	longFile := filepath.Join(dir, "long.csv")
	if err := os.WriteFile(longFile, []byte(long.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := runCmd(t, adminEnv(url), "import", "commodities", longFile); err != nil || !strings.Contains(out, "3000 rows; 3000 changed") {
		t.Errorf("an import of long rows: %v, %s\n%s", err, out, errOut)
	}

	// Progress names the last line of each part sent: 3000, then 3001.
	var short strings.Builder
	short.WriteString("code,name,hsCode,dangerousGoods,unNumber\n")
	for i := range 3000 {
		fmt.Fprintf(&short, "SHORT%05d,Short %d,8471,false,\n", i, i)
	}
	shortFile := filepath.Join(dir, "short.csv")
	if err := os.WriteFile(shortFile, []byte(short.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := runCmd(t, adminEnv(url), "import", "commodities", shortFile)
	if err != nil || !strings.Contains(errOut, "commodities: 3000 lines (") || !strings.Contains(errOut, "commodities: 3001 lines (100%)") {
		t.Errorf("an import of 3001 lines: %v, progress:\n%s", err, errOut)
	}
}

// An import whose cargod goes away mid-way (killed, restarted) says what
// is in and what may be in part, and lists the rows rejected so far, as
// an interrupted one does: it said only that cargod did not answer, and
// the rows the first parts rejected were never shown.
func TestAnImportWhoseServerGoesAwaySaysWhatIsIn(t *testing.T) {
	srv, _ := chunkProxy(t, startServer(t), 2, func(w http.ResponseWriter, _ *http.Request, _ http.Handler) {
		// As a cargod killed while it reads the request.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})

	rows := importChunkLines + 10
	path := airstripsFile(t, rows, `"EDDM","MUC","Munich Airport","Munich","Bavaria","DE",1487,48.35,11.78,"Europe/Nowhere",""`)
	out, _, err := runCmd(t, adminEnv(srv.URL), "import", "airports", path)
	want := fmt.Sprintf("lines 1-%d are imported, and lines %d-%d may be in part; import the file again to finish", importChunkLines, importChunkLines+1, rows+1)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("import = %v, want %q", err, want)
	}
	if !strings.HasPrefix(out, "line 2: ") {
		t.Errorf("printed %q, want the row of line 2 rejected", out)
	}
}

// chunkProxy is a server in front of cargod at api that hands the n-th
// request of an import (from 1) to intercept, with a proxy to cargod, and
// every other request to cargod; and the count of the import's requests.
func chunkProxy(t *testing.T, api string, n int32, intercept func(w http.ResponseWriter, r *http.Request, proxy http.Handler)) (*httptest.Server, *atomic.Int32) {
	target, _ := url.Parse(api)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var chunks atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/admin/reference/") && chunks.Add(1) == n {
			intercept(w, r, proxy)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &chunks
}

// A part the server refuses whole (a 4xx, before any row is stored) is
// said to be refused, none of it in: importing again would be refused
// again, and "may be in part" sent the operator to do just that.
func TestAnImportPartRefusedWholeIsSaidToBeNoneIn(t *testing.T) {
	srv, _ := chunkProxy(t, startServer(t), 2, func(w http.ResponseWriter, _ *http.Request, _ http.Handler) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		w.Write([]byte(`{"error":"payload_too_large","errorDescription":"the body is larger than 1048576 bytes"}`))
	})
	rows := importChunkLines + 10
	path := airstripsFile(t, rows)
	_, _, err := runCmd(t, adminEnv(srv.URL), "import", "airports", path)
	want := fmt.Sprintf("lines 1-%d are imported, and none of lines %d-%d", importChunkLines, importChunkLines+1, rows+1)
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("import = %v, want it to end %q", err, want)
	}
}

// airstripsFile is an airportsdata file of rows rows: those given first,
// then airports without an IATA code, which the import skips.
func airstripsFile(t *testing.T, rows int, first ...string) string {
	var file strings.Builder
	file.WriteString(`"icao","iata","name","city","subd","country","elevation","lat","lon","tz","lid"` + "\n")
	for _, row := range first {
		file.WriteString(row + "\n")
	}
	for i := len(first); i < rows; i++ {
		fmt.Fprintf(&file, `"X%05d","","Strip %d","Leoti","Kansas","US",3435,38.7,-101.4,"America/Chicago",""`+"\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "airports.csv")
	if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
