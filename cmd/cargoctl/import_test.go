package main

import (
	"os"
	"path/filepath"
	"strings"
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
		{"first import", []string{"import", "airports", good}, "airports (airportsdata): 6 lines; 2 changed, 0 unchanged, 1 skipped, 2 rejected",
			[]string{"line 5: ", "line 6: "}},
		{"again: nothing new", []string{"import", "airports", good}, "airports (airportsdata): 6 lines; 0 changed, 2 unchanged, 1 skipped, 2 rejected", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut strings.Builder
			// The good rows go in; the rejected ones fail the command.
			if err := run(t.Context(), tt.args, adminEnv(url), &out, &errOut); err == nil || err.Error() != "2 of 6 lines rejected (listed above)" {
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
	// A line too long to read stops the import there; what came before is in.
	long := write("long.csv", `"icao","iata","name","city","subd","country","elevation","lat","lon","tz","lid"
"EDDF","FRA","Frankfurt am Main Airport","Frankfurt am Main","Hesse","DE",364,50.0333,8.5706,"Europe/Berlin",""
"EDDM","MUC","`+strings.Repeat("M", 2<<20)+`"
"KJFK","JFK","x"
`)
	err := run(t.Context(), []string{"import", "airports", long}, adminEnv(url), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "line 3 is longer than 262144 bytes: lines 1-2 are imported, nothing from line 3 on") {
		t.Errorf("a file with a 2 MiB line = %v", err)
	}
}
