package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestReferenceFilters(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	tok := s.demoToken(t, "demo-forwarder")
	codes := func(path, list, key string) (string, int) {
		r := s.do(t, request{method: "GET", path: path, token: tok})
		if r.status != 200 {
			t.Fatalf("GET %s = %d %s", path, r.status, r.body)
		}
		var body map[string]any
		r.json(t, &body)
		var out []string
		for _, item := range body[list].([]any) {
			out = append(out, item.(map[string]any)[key].(string))
		}
		return strings.Join(out, ","), int(body["pagination"].(map[string]any)["total"].(float64))
	}
	tests := []struct {
		path, list, key string
		want            string // the codes returned, or a prefix of them ending in ",…"
		total           int    // 0: not checked
	}{
		{"/api/airports?iataCode=fra", "airports", "iataCode", "FRA", 1},
		{"/api/airports?icaoCode=EDDF", "airports", "iataCode", "FRA", 1},
		{"/api/airports?country=DE&limit=100", "airports", "iataCode", "BER,CGN,DUS,FRA,HAM,HHN,LEJ,MUC,…", 0},
		{"/api/airports?country=DE&city=frank", "airports", "iataCode", "FRA", 1},
		{"/api/airports?name=hong%20kong%20int", "airports", "iataCode", "HKG", 1},
		{"/api/airports?country=DE&name=heathrow", "airports", "iataCode", "", 0},
		{"/api/airports?iataCode=XXX", "airports", "iataCode", "", 0},
		{"/api/airlines?iataCode=lh", "airlines", "prefix", "020", 1},
		{"/api/airlines?icaoCode=UAE", "airlines", "iataCode", "EK", 1},
		{"/api/airlines?name=cathay", "airlines", "iataCode", "CX", 1},
		{"/api/airlines?country=DE&alliance=star%20alliance", "airlines", "iataCode", "LH", 0},
		{"/api/airlines?alliance=SkyTeam&country=FR", "airlines", "iataCode", "AF", 1},
		{"/api/airlines?alliance=oneworld&country=DE", "airlines", "iataCode", "", 0},
		{"/api/commodities?code=gen", "commodities", "code", "GEN", 1},
		{"/api/commodities?dangerousGoods=true&name=lithium%20ion", "commodities", "code", "ELI,RLI", 2},
		{"/api/commodities?hsCode=8507", "commodities", "code", "ELI,…", 0},
		{"/api/commodities?dangerousGoods=false&code=ICE", "commodities", "code", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, total := codes(tt.path, tt.list, tt.key)
			if prefix, ok := strings.CutSuffix(tt.want, ",…"); ok {
				if !strings.HasPrefix(got, prefix) {
					t.Errorf("= %s, want it to start %s", got, prefix)
				}
			} else if got != tt.want {
				t.Errorf("= %q, want %q", got, tt.want)
			}
			if tt.total != 0 && total != tt.total {
				t.Errorf("total = %d, want %d", total, tt.total)
			}
		})
	}
	if r := s.do(t, request{method: "GET", path: "/api/commodities?dangerousGoods=maybe", token: tok}); r.status != 400 {
		t.Errorf("dangerousGoods=maybe = %d", r.status)
	}
}

func TestValidationUsesReferenceData(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	body := rfq()
	body["routing"] = map[string]any{"origin": "FRA", "destination": "QQQ"}
	body["commodity"] = map[string]any{"code": "NOSUCH"}
	r := s.do(t, request{method: "POST", path: "/api/quotes", token: fwd, body: body})
	checkFields(t, r, "commodity.code:UNKNOWN_COMMODITY routing.destination:UNKNOWN_AIRPORT")
	date := time.Now().UTC().AddDate(0, 0, 3).Format(time.DateOnly)
	r = s.do(t, request{method: "POST", path: "/api/flights", token: s.demoToken(t, "demo-airline-lh"), body: map[string]any{
		"flightNumber": "LH1", "origin": "FRA", "destination": "QQQ", "departureDate": date, "departureTime": "10:00",
		"arrivalDate": date, "arrivalTime": "12:00", "aircraftType": "B77F"}})
	checkFields(t, r, "destination:UNKNOWN_AIRPORT")
}

func TestReferenceImport(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	file := strings.Join([]string{
		`"icao","iata","name","city","subd","country","elevation","lat","lon","tz","lid"`,
		`"EDDF","FRA","Frankfurt am Main Airport (renamed)","Frankfurt am Main","Hesse","DE",364,50.03,8.57,"Europe/Berlin",""`,
		`"EDLV","NRN","Weeze Airport","Weeze","North Rhine-Westphalia","DE",106,51.60,6.14,"Europe/Nowhere",""`,
		`"ED","XED","Broken ICAO","Nowhere","","DE",1,1,1,"Europe/Berlin",""`,
		`"EDDK","CGN,"Cologne Bonn Airport","Cologne","","DE",302,50.86,7.14,"Europe/Berlin",""`,
		`"EDXW","GWT","Westerland Sylt Airport","Westerland","Schleswig-Holstein","DE",51,54.91,8.34,"Europe/Berlin",""`,
	}, "\n") + "\n"
	type report struct {
		Format                            string
		Rows, Changed, Unchanged, Skipped int
		Rejected                          []struct {
			Line    int
			Message string
		}
	}
	send := func() report {
		r := s.do(t, request{method: "POST", path: "/api/admin/reference/airports", token: admin, body: file, contentType: "text/csv"})
		if r.status != 200 {
			t.Fatalf("import = %d %s", r.status, r.body)
		}
		var rep report
		r.json(t, &rep)
		return rep
	}
	first := send()
	var lines []string
	for _, rj := range first.Rejected {
		lines = append(lines, fmt.Sprint(rj.Line))
	}
	if first.Format != "airportsdata" || first.Rows != 2 || first.Changed != 2 || strings.Join(lines, ",") != "3,4,5" {
		t.Errorf("first import = %+v", first)
	}
	if again := send(); again.Changed != 0 || again.Unchanged != 2 {
		t.Errorf("second import = %+v", again)
	}
	var got struct{ Airports []struct{ Name string } }
	s.do(t, request{method: "GET", path: "/api/airports?iataCode=FRA", token: admin}).json(t, &got)
	if len(got.Airports) != 1 || got.Airports[0].Name != "Frankfurt am Main Airport (renamed)" {
		t.Errorf("FRA after import = %+v", got)
	}
	if r := s.do(t, request{method: "POST", path: "/api/admin/reference/airports", token: s.demoToken(t, "demo-forwarder"), body: file, contentType: "text/csv"}); r.status != 403 {
		t.Errorf("import by a forwarder = %d", r.status)
	}
	if r := s.do(t, request{method: "POST", path: "/api/admin/reference/planets", token: admin, body: file, contentType: "text/csv"}); r.status != 400 {
		t.Errorf("import of planets = %d", r.status)
	}
	if r := s.do(t, request{method: "POST", path: "/api/admin/reference/airports", token: admin, body: "what,is,this\n1,2,3\n", contentType: "text/csv"}); r.status != 400 {
		t.Errorf("import of an unknown format = %d", r.status)
	}
	// A file in another charset would be stored garbled: say so instead.
	for _, header := range []map[string]string{{"Content-Type": "text/csv; charset=iso-8859-1"}, {"Content-Encoding": "gzip"}} {
		contentType := header["Content-Type"]
		if contentType == "" {
			contentType = "text/csv"
		}
		if r := s.do(t, request{method: "POST", path: "/api/admin/reference/airports", token: admin, body: file, contentType: contentType, header: header}); r.status != 415 {
			t.Errorf("import with %v = %d", header, r.status)
		}
	}
}

// TestImportFullAirportsFile imports the full airportsdata file through
// cargoctl's path (chunks of the file to the admin endpoint) and reports
// time and memory.
func TestImportFullAirportsFile(t *testing.T) {
	// Serial: it reports the heap growth of the process, to which parallel tests would add theirs.
	const path = "../../../shared/data/airports/airportsdata_airports.csv"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("%s not present: %v", path, err)
	}
	if testing.Short() {
		t.Skip("long")
	}
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_MAX_BODY_BYTES": "8388608"})
	admin := s.demoToken(t, "demo-admin")
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	r := s.do(t, request{method: "POST", path: "/api/admin/reference/airports?source=airportsdata", token: admin, body: raw, contentType: "text/csv"})
	elapsed := time.Since(start)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	var rep struct{ Rows, Changed, Skipped int }
	r.json(t, &rep)
	t.Logf("imported %d airports (%d changed, %d skipped) in %s; heap grew %d MiB, %d MiB allocated",
		rep.Rows, rep.Changed, rep.Skipped, elapsed.Round(time.Millisecond), (int64(after.HeapAlloc)-int64(before.HeapAlloc))>>20, (after.TotalAlloc-before.TotalAlloc)>>20)
	if r.status != 200 || rep.Rows < 7000 {
		t.Fatalf("import = %d %.300s", r.status, r.body)
	}
	var de struct {
		Airports   []struct{ IATACode, Country string }
		Pagination struct{ Total int }
	}
	s.do(t, request{method: "GET", path: "/api/airports?country=DE&limit=100", token: admin}).json(t, &de)
	if de.Pagination.Total < 50 || de.Airports[0].Country != "DE" {
		t.Errorf("German airports after the import: %d", de.Pagination.Total)
	}
}
