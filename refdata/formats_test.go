package refdata

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zone check must not depend on the machine's zoneinfo

	"github.com/cargostream/cargostream/domain"
)

// sharedDataDir is the shared reference-data folder, seen from the package.
const sharedDataDir = "../../shared/data"

func knownZone(z string) bool {
	if z == "" || z == "Local" {
		return false
	}
	_, err := time.LoadLocation(z)
	return err == nil
}

// wantReject is a rejected line and a part of its message.
type wantReject struct {
	line int
	msg  string
}

func checkRejected(t *testing.T, got []RowError, want []wantReject) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("rejected %d rows, want %d: %+v", len(got), len(want), got)
		return
	}
	for i, w := range want {
		if got[i].Line != w.line || !strings.Contains(got[i].Message, w.msg) {
			t.Errorf("rejected[%d] = line %d %q, want line %d containing %q", i, got[i].Line, got[i].Message, w.line, w.msg)
		}
	}
}

// checkParsed checks what a fixture parsed into against what the test
// wants of it.
func checkParsed[T any](t *testing.T, p Parsed[T], err error, rows []T, rejected []wantReject, skipped int) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Rows, rows) {
		t.Errorf("rows\n got %+v\nwant %+v", p.Rows, rows)
	}
	checkRejected(t, p.Rejected, rejected)
	if p.Skipped != skipped {
		t.Errorf("skipped %d, want %d", p.Skipped, skipped)
	}
}

func openFixture(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseAirportsFormats(t *testing.T) {
	tests := []struct {
		file, format string
		rows         []domain.Airport
		rejected     []wantReject
		skipped      int
	}{
		{
			file: "airportsdata.csv", format: FormatAirportsData,
			rows: []domain.Airport{
				{IATACode: "FRA", ICAOCode: "EDDF", Name: "Frankfurt am Main Airport", City: "Frankfurt am Main", Country: "DE", Timezone: "Europe/Berlin"},
				{IATACode: "JFK", ICAOCode: "KJFK", Name: "John F Kennedy International Airport", City: "New York", Country: "US", Timezone: "America/New_York"},
				{IATACode: "DXB", ICAOCode: "OMDB", Name: "Dubai International Airport", City: "Dubai", Country: "AE", Timezone: "Asia/Dubai"},
				{IATACode: "MUM", ICAOCode: "", Name: "Mumias Airport", City: "Mumias", Country: "KE", Timezone: "Africa/Nairobi"},
			},
			skipped: 1,
		},
		{
			file: "airportsdata_bad.csv", format: FormatAirportsData,
			rows: []domain.Airport{
				{IATACode: "FRA", ICAOCode: "EDDF", Name: "Frankfurt am Main Airport", City: "Frankfurt am Main", Country: "DE", Timezone: "Europe/Berlin"},
				{IATACode: "DXB", ICAOCode: "OMDB", Name: "Dubai International Airport", City: "Dubai", Country: "AE", Timezone: "Asia/Dubai"},
				{IATACode: "HKG", ICAOCode: "VHHH", Name: "Hong Kong International Airport", City: "Hong Kong", Country: "HK", Timezone: "Asia/Hong_Kong"},
			},
			rejected: []wantReject{
				{3, "timezone must be an IANA zone name"},
				{4, "icaoCode must be four letters or digits"},
				{5, "malformed CSV"},
				{8, "has 7 fields, want 11"},
				{10, "iataCode must be three capital letters; name must be 1 to 200 characters; country must be a two-letter ISO code"},
			},
			skipped: 1,
		},
		{
			file: "openflights.dat", format: FormatOpenFlights,
			rows: []domain.Airport{
				{IATACode: "GKA", ICAOCode: "AYGA", Name: "Goroka Airport", City: "Goroka", Country: "PG", Timezone: "Pacific/Port_Moresby"},
				{IATACode: "FRA", ICAOCode: "EDDF", Name: "Frankfurt am Main Airport", City: "Frankfurt", Country: "DE", Timezone: "Europe/Berlin"},
				{IATACode: "JFK", ICAOCode: "KJFK", Name: "John F Kennedy International Airport", City: "New York", Country: "US", Timezone: "America/New_York"},
				{IATACode: "ABJ", ICAOCode: "DIAP", Name: "Port Bouet Airport", City: "Abidjan", Country: "CI", Timezone: "Africa/Abidjan"},
				{IATACode: "FIH", ICAOCode: "FZAA", Name: "Ndjili International Airport", City: "Kinshasa", Country: "CD", Timezone: "Africa/Kinshasa"},
				{IATACode: "CUR", ICAOCode: "TNCC", Name: "Hato International Airport", City: "Willemstad", Country: "CW", Timezone: "America/Curacao"},
			},
			skipped: 2,
		},
		{
			file: "openflights_bad.dat", format: FormatOpenFlights,
			rows: []domain.Airport{
				{IATACode: "FRA", ICAOCode: "EDDF", Name: "Frankfurt am Main Airport", City: "Frankfurt", Country: "DE", Timezone: "Europe/Berlin"},
				{IATACode: "DXB", ICAOCode: "OMDB", Name: "Dubai International Airport", City: "Dubai", Country: "AE", Timezone: "Asia/Dubai"},
				{IATACode: "STR", ICAOCode: "EDDS", Name: "Stuttgart Airport", City: "Stuttgart", Country: "DE", Timezone: "Europe/Berlin"},
			},
			rejected: []wantReject{
				{2, `unknown country name "Atlantis"`},
				{3, "timezone must be an IANA zone name"},
				{4, "malformed CSV"},
				{6, `country "Netherlands Antilles" no longer exists`},
				{7, "has 5 fields, want 14"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, err := ParseAirports(openFixture(t, tt.file), tt.format, 1, knownZone)
			checkParsed(t, p, err, tt.rows, tt.rejected, tt.skipped)
		})
	}
}

func TestParseAirlinesFormats(t *testing.T) {
	tests := []struct {
		file, format string
		rows         []domain.Airline
		rejected     []wantReject
		skipped      int
	}{
		{
			file: "airlines-merged.csv", format: FormatMergedAirlines,
			rows: []domain.Airline{
				{IATACode: "LH", ICAOCode: "DLH", Name: "Lufthansa", Country: "DE", Alliance: "Star Alliance", Prefix: "220"},
				{IATACode: "LH", ICAOCode: "GEC", Name: "Lufthansa Cargo", Country: "DE", Prefix: "020"},
				{IATACode: "EK", ICAOCode: "UAE", Name: "Emirates", Country: "AE", Prefix: "176"},
				{IATACode: "CL", ICAOCode: "CLH", Name: "Lufthansa CityLine", Country: "DE", Alliance: "Star Alliance", Prefix: "683"},
				{IATACode: "QR", ICAOCode: "QTR", Name: "Qatar Airways", Country: "QA", Alliance: "oneworld", Prefix: "157"},
				{IATACode: "KL", ICAOCode: "KLM", Name: "KLM Royal Dutch Airlines", Country: "NL", Prefix: "074"},
				{IATACode: "5Y", ICAOCode: "GTI", Name: "Atlas Air"},
			},
			skipped: 2,
		},
		{
			file: "airlines-merged_bad.csv", format: FormatMergedAirlines,
			rows: []domain.Airline{
				{IATACode: "AF", ICAOCode: "AFR", Name: "Air France", Country: "FR", Alliance: "SkyTeam", Prefix: "057"},
				{IATACode: "CX", ICAOCode: "CPA", Name: "Cathay Pacific", Country: "HK", Alliance: "oneworld", Prefix: "160"},
			},
			rejected: []wantReject{
				{2, "prefix must be three digits"},
				{4, `country "Luxembourg" has no countryCode`},
				{5, "malformed CSV"},
				{7, "icaoCode must be three capital letters; alliance must be Star Alliance, oneworld or SkyTeam"},
				{8, "has 8 fields, want 10"},
			},
		},
		{
			file: "optd.csv", format: FormatOPTD,
			rows: []domain.Airline{
				{IATACode: "LH", ICAOCode: "GEC", Name: "Lufthansa Cargo", Prefix: "020"},
				{IATACode: "F9", ICAOCode: "FUT", Name: "Future Air", Prefix: "422"},
				{IATACode: "Y6", ICAOCode: "AYD", Name: "AB Aviation"},
				{IATACode: "AF", ICAOCode: "AFR", Name: "Air France", Alliance: "SkyTeam", Prefix: "057"},
				{IATACode: "I2", ICAOCode: "IBS", Name: "Iberia Express", Alliance: "oneworld", Prefix: "060"},
				{IATACode: "HL", ICAOCode: "HES", Name: "Holiday Europe"},
				{IATACode: "RR", ICAOCode: "RYS", Name: "Buzz"},
				{IATACode: "EK", ICAOCode: "UAE", Name: "Emirates", Prefix: "176"},
			},
			skipped: 3,
		},
		{
			file: "optd_bad.csv", format: FormatOPTD,
			rows: []domain.Airline{
				{IATACode: "AF", ICAOCode: "AFR", Name: "Air France", Alliance: "SkyTeam", Prefix: "057"},
				{IATACode: "EK", ICAOCode: "UAE", Name: "Emirates", Prefix: "176"},
			},
			rejected: []wantReject{
				{3, "prefix must be three digits"},
				{4, `validity_to "someday" is not a date`},
				{5, "icaoCode must be three capital letters"},
				{6, "has 8 fields, want 20"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, err := ParseAirlines(openFixture(t, tt.file), tt.format, 1)
			checkParsed(t, p, err, tt.rows, tt.rejected, tt.skipped)
		})
	}
}

func TestParseCommoditiesFormats(t *testing.T) {
	tests := []struct {
		file, format string
		rows         []domain.KnownCommodity
		rejected     []wantReject
		skipped      int
	}{
		{
			file: "commodities.csv", format: FormatCommodities,
			rows: []domain.KnownCommodity{
				{Code: "GEN", Name: "General cargo"},
				{Code: "PER", Name: "Perishables, fish", HSCode: "0303"},
				{Code: "LIBAT", Name: "Lithium ion batteries", HSCode: "850760", DangerousGoods: true, UNNumber: "UN3480", HazardClass: "9"},
				{Code: "FLAM", Name: "Flammable liquid", DangerousGoods: true, UNNumber: "UN1993", HazardClass: "3", PackingGroup: "II"},
			},
		},
		{
			file: "commodities_bad.csv", format: FormatCommodities,
			rows: []domain.KnownCommodity{
				{Code: "GEN", Name: "General cargo"},
				{Code: "ELEC", Name: "Electronics", HSCode: "8471"},
			},
			rejected: []wantReject{
				{3, `dangerousGoods must be true or false, not "maybe"`},
				{4, "malformed CSV"},
				{5, "unNumber must be UN and four digits"},
				{6, "hsCode must be 2, 4, 6, 8 or 10 digits"},
				{7, "has 3 fields, want 5"},
				{9, "a commodity with a UN number is dangerous goods"},
			},
		},
		{
			file: "hs.csv", format: FormatHSCodes,
			rows: []domain.KnownCommodity{
				{Code: "HS01", Name: "Animals; live", HSCode: "01"},
				{Code: "HS0101", Name: "Horses, asses, mules and hinnies; live", HSCode: "0101"},
				{Code: "HS010121", Name: "Horses; live, pure-bred breeding animals", HSCode: "010121"},
				{Code: "HS850760", Name: "Electrical storage batteries; lithium-ion", HSCode: "850760"},
			},
			skipped: 1,
		},
		{
			file: "hs_bad.csv", format: FormatHSCodes,
			rows: []domain.KnownCommodity{
				{Code: "HS01", Name: "Animals; live", HSCode: "01"},
				{Code: "HS300490", Name: "Medicaments; n.e.c. in heading 3004", HSCode: "300490"},
			},
			rejected: []wantReject{
				{3, "hsCode must be 2, 4, 6, 8 or 10 digits"},
				{4, "name must be 1 to 500 characters"},
				{5, "malformed CSV"},
			},
		},
		{
			file: "dg.csv", format: FormatDangerousGoods,
			rows: []domain.KnownCommodity{
				{Code: "UN1088", Name: "Acetal", DangerousGoods: true, UNNumber: "UN1088", HazardClass: "3", PackingGroup: "II"},
				{Code: "UN1170", Name: "Ethanol or Ethyl alcohol", DangerousGoods: true, UNNumber: "UN1170", HazardClass: "3", PackingGroup: "II",
					PackingGroups: []string{"II", "III"}},
				{Code: "UN3480", Name: "Lithium ion batteries including lithium ion polymer batteries", DangerousGoods: true, UNNumber: "UN3480", HazardClass: "9",
					PassengerAircraftForbidden: true},
				// Forbidden on both aircraft: kept off passenger aircraft,
				// though no cargo aircraft may take it either (the e-DGD
				// notes that); its second row, whose name the parser lost,
				// has every cell empty and says nothing.
				{Code: "UN2197", Name: "Hydrogen iodide, anhydrous", DangerousGoods: true, UNNumber: "UN2197", HazardClass: "2.3",
					CargoAircraftForbidden: true, PassengerAircraftForbidden: true},
				// One of its entries is forbidden on passenger aircraft,
				// the others not: the e-DGD names no entry, so the
				// acceptance check decides.
				{Code: "UN1950", Name: "Aerosols, flammable", DangerousGoods: true, UNNumber: "UN1950", HazardClass: "2.1",
					HazardClasses: []string{"2.1", "2.2"}, OtherNames: []string{"Aerosols, non-flammable", "Aerosols, flammable, n.o.s. (engine starting fluid)"}},
				// The table's row is shifted by a column: its passenger
				// aircraft cell is empty, which says nothing.
				{Code: "UN3334", Name: "Aviation regulated liquid, n.o.s", DangerousGoods: true, UNNumber: "UN3334", HazardClass: "9"},
			},
			skipped: 7, // NA1993, no id, UN1170 again, ID8000, UN2197 again, UN1950 twice again
		},
		{
			file: "dg_bad.csv", format: FormatDangerousGoods,
			rows: []domain.KnownCommodity{
				{Code: "UN0381", Name: "Cartridges, power device", DangerousGoods: true, UNNumber: "UN0381", HazardClass: "1.2C",
					CargoAircraftForbidden: true, PassengerAircraftForbidden: true},
				{Code: "UN1090", Name: "Acetone", DangerousGoods: true, UNNumber: "UN1090", HazardClass: "3", PackingGroup: "II"},
			},
			rejected: []wantReject{
				{2, "name must be 1 to 500 characters"},
				{4, "unNumber must be UN and four digits"},
				{5, "malformed CSV"},
				{7, "has 7 fields, want 14"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, err := ParseCommodities(openFixture(t, tt.file), tt.format, 1)
			checkParsed(t, p, err, tt.rows, tt.rejected, tt.skipped)
		})
	}
}

func TestParseFormatErrors(t *testing.T) {
	if _, err := ParseCommodities(openFixture(t, "commodities_badheader.csv"), FormatCommodities, 1); err == nil {
		t.Error("a wrong commodities header must be an error")
	}
	if _, err := ParseAirports(openFixture(t, "openflights.dat"), FormatAirportsData, 1, knownZone); err == nil {
		t.Error("an airportsdata file without its header must be an error")
	}
	if _, err := ParseAirlines(strings.NewReader(""), FormatOPTD, 1); err == nil {
		t.Error("an empty OPTD file must be an error (no header)")
	}
	if _, err := ParseAirlines(strings.NewReader("pk^name\n"), FormatOPTD, 1); err == nil || !strings.Contains(err.Error(), "2char_code") {
		t.Errorf("missing OPTD columns: err = %v", err)
	}
	if _, err := ParseAirports(strings.NewReader("x"), "ourairports", 1, knownZone); err == nil {
		t.Error("unknown airports format must be an error")
	}
	if _, err := ParseAirlines(strings.NewReader("x"), FormatAirportsData, 1); err == nil {
		t.Error("an airports format is not an airlines format")
	}
	if _, err := ParseCommodities(strings.NewReader("x"), "csv", 1); err == nil {
		t.Error("unknown commodities format must be an error")
	}
	// The header may stop after unNumber or hazardClass, and must
	// otherwise be exact.
	for _, h := range []string{"code,name,hsCode,dangerousGoods,unNumber", "code,name,hsCode,dangerousGoods,unNumber,hazardClass", "code,name,hsCode,dangerousGoods,unNumber,hazardClass,packingGroup"} {
		if _, err := ParseCommodities(strings.NewReader(h+"\n"), FormatCommodities, 1); err != nil {
			t.Errorf("header %q: %v", h, err)
		}
	}
	for _, h := range []string{"code,name,hsCode,dangerousGoods", "code,name,hsCode,dangerousGoods,unNumber,packingGroup", "Code,Name,HSCode,DangerousGoods,UNNumber"} {
		if _, err := ParseCommodities(strings.NewReader(h+"\n"), FormatCommodities, 1); err == nil {
			t.Errorf("header %q must be refused", h)
		}
	}
}

// A byte-order mark and CRLF line ends are read like plain lines.
func TestParseBOMAndCRLF(t *testing.T) {
	in := "\ufeffcode,name,hsCode,dangerousGoods,unNumber\r\nGEN,General cargo,,false,\r\n\r\nDG,Dry ice,,true,UN1845\r\n"
	p, err := ParseCommodities(strings.NewReader(in), FormatCommodities, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []domain.KnownCommodity{{Code: "GEN", Name: "General cargo"}, {Code: "DG", Name: "Dry ice", DangerousGoods: true, UNNumber: "UN1845"}}
	if !reflect.DeepEqual(p.Rows, want) || len(p.Rejected) != 0 {
		t.Errorf("got %+v", p)
	}
}

// fixtureLines reads a fixture's lines.
func fixtureLines(t *testing.T, name string) []string {
	t.Helper()
	var lines []string
	sc := bufio.NewScanner(openFixture(t, name))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// parseText parses text in the given format and returns the rows (a
// slice of the format's row type), the rejected rows and the skipped count.
func parseText(t *testing.T, format, text string, firstLine int) (rows any, rejected []RowError, skipped int) {
	t.Helper()
	r := strings.NewReader(text)
	var err error
	switch format {
	case FormatAirportsData, FormatOpenFlights:
		var p Parsed[domain.Airport]
		p, err = ParseAirports(r, format, firstLine, knownZone)
		rows, rejected, skipped = p.Rows, p.Rejected, p.Skipped
	case FormatMergedAirlines, FormatOPTD:
		var p Parsed[domain.Airline]
		p, err = ParseAirlines(r, format, firstLine)
		rows, rejected, skipped = p.Rows, p.Rejected, p.Skipped
	default:
		var p Parsed[domain.KnownCommodity]
		p, err = ParseCommodities(r, format, firstLine)
		rows, rejected, skipped = p.Rows, p.Rejected, p.Skipped
	}
	if err != nil {
		t.Fatalf("firstLine %d: %v", firstLine, err)
	}
	return rows, rejected, skipped
}

// Reading a file in chunks, each (but a headerless format's) starting with
// the header repeated, yields what reading it whole yields, with the line
// numbers of the whole file.
func TestParseChunkedFormats(t *testing.T) {
	fixtures := []struct {
		file, format string
		header       bool
	}{
		{"airportsdata_bad.csv", FormatAirportsData, true},
		{"openflights_bad.dat", FormatOpenFlights, false},
		{"airlines-merged_bad.csv", FormatMergedAirlines, true},
		{"optd_bad.csv", FormatOPTD, true},
		{"commodities_bad.csv", FormatCommodities, true},
		{"hs_bad.csv", FormatHSCodes, true},
		{"dg_bad.csv", FormatDangerousGoods, true},
	}
	for _, fx := range fixtures {
		lines := fixtureLines(t, fx.file)
		wholeRows, wholeRejected, wholeSkipped := parseText(t, fx.format, strings.Join(lines, "\n")+"\n", 1)
		for size := 1; size <= 3; size++ {
			var rows []any
			var rejected []RowError
			skipped := 0
			start := 0
			if fx.header {
				start = 1
			}
			// The first chunk starts with the real first line (the
			// header, or data); later ones repeat the header.
			for i := start; i < len(lines); i += size {
				end := min(i+size, len(lines))
				var text string
				firstLine := i + 1
				switch {
				case i == start:
					text = strings.Join(lines[:end], "\n")
					firstLine = 1
				case fx.header:
					text = lines[0] + "\n" + strings.Join(lines[i:end], "\n")
				default:
					text = strings.Join(lines[i:end], "\n")
				}
				r, rej, sk := parseText(t, fx.format, text, firstLine)
				rv := reflect.ValueOf(r)
				for j := 0; j < rv.Len(); j++ {
					rows = append(rows, rv.Index(j).Interface())
				}
				rejected = append(rejected, rej...)
				skipped += sk
			}
			var whole []any
			wv := reflect.ValueOf(wholeRows)
			for j := 0; j < wv.Len(); j++ {
				whole = append(whole, wv.Index(j).Interface())
			}
			if !reflect.DeepEqual(rows, whole) || !reflect.DeepEqual(rejected, wholeRejected) || skipped != wholeSkipped {
				t.Errorf("%s in chunks of %d:\n rows %+v\n want %+v\n rejected %+v\n want %+v\n skipped %d, want %d",
					fx.file, size, rows, whole, rejected, wholeRejected, skipped, wholeSkipped)
			}
		}
	}
}

// A chunk of the middle of a file: its repeated header does not count.
func TestParseChunkLineNumbers(t *testing.T) {
	lines := fixtureLines(t, "airportsdata_bad.csv")
	chunk := lines[0] + "\n" + strings.Join(lines[4:], "\n") // lines 5 to 11
	p, err := ParseAirports(strings.NewReader(chunk), FormatAirportsData, 5, knownZone)
	if err != nil {
		t.Fatal(err)
	}
	checkRejected(t, p.Rejected, []wantReject{{5, "malformed CSV"}, {8, "has 7 fields"}, {10, "iataCode"}})
	if len(p.Rows) != 2 || p.Rows[0].IATACode != "DXB" || p.Rows[1].IATACode != "HKG" || p.Skipped != 1 {
		t.Errorf("got %+v", p)
	}

	// Headerless: the first line read is line firstLine.
	lines = fixtureLines(t, "openflights_bad.dat")
	p, err = ParseAirports(strings.NewReader(strings.Join(lines[3:], "\n")), FormatOpenFlights, 4, knownZone)
	if err != nil {
		t.Fatal(err)
	}
	checkRejected(t, p.Rejected, []wantReject{{4, "malformed CSV"}, {6, "Netherlands Antilles"}, {7, "has 5 fields"}})
}

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		kind, file, want string
	}{
		{"airports", "airportsdata.csv", FormatAirportsData},
		{"airports", "openflights.dat", FormatOpenFlights},
		{"airlines", "airlines-merged.csv", FormatMergedAirlines},
		{"airlines", "optd.csv", FormatOPTD},
		{"commodities", "commodities.csv", FormatCommodities},
		{"commodities", "commodities_bad.csv", FormatCommodities},
		{"commodities", "hs.csv", FormatHSCodes},
		{"commodities", "dg.csv", FormatDangerousGoods},
		{"hs-codes", "hs.csv", FormatHSCodes},
		{"dangerous-goods", "dg.csv", FormatDangerousGoods},
		{"airlines", "airportsdata.csv", ""},
		{"airports", "optd.csv", ""},
		{"hs-codes", "dg.csv", ""},
		{"dangerous-goods", "hs.csv", ""},
		{"commodities", "commodities_badheader.csv", ""},
		{"flights", "airportsdata.csv", ""},
	}
	for _, tt := range tests {
		first := fixtureLines(t, tt.file)[0]
		if got := DetectFormat(tt.kind, first); got != tt.want {
			t.Errorf("DetectFormat(%q, first line of %s) = %q, want %q", tt.kind, tt.file, got, tt.want)
		}
	}
	if got := DetectFormat("airports", ""); got != "" {
		t.Errorf("empty line: %q", got)
	}
	if got := DetectFormat("airports", "\ufeff\"icao\",\"iata\",\"name\"\r"); got != FormatAirportsData {
		t.Errorf("with BOM and CR: %q", got)
	}

	real := []struct {
		kind, file, want string
	}{
		{"airports", "airports/airportsdata_airports.csv", FormatAirportsData},
		{"airports", "airports/openflights_airports.dat", FormatOpenFlights},
		{"airlines", "airlines/airlines-merged.csv", FormatMergedAirlines},
		{"airlines", "airlines/optd_airlines.csv", FormatOPTD},
		{"hs-codes", "hs-codes/harmonized-system.csv", FormatHSCodes},
		{"commodities", "hs-codes/harmonized-system.csv", FormatHSCodes},
		{"dangerous-goods", "dangerous-goods/us-dot-hmt-49cfr172101-2019.csv", FormatDangerousGoods},
		{"commodities", "dangerous-goods/us-dot-hmt-49cfr172101-2019.csv", FormatDangerousGoods},
		{"airlines", "airlines/optd_airline_alliance_membership.csv", ""},
		{"airports", "airports/ourairports_countries.csv", ""},
	}
	if _, err := os.Stat(sharedDataDir); err != nil {
		t.Logf("no %s: real files not checked", sharedDataDir)
		return
	}
	for _, tt := range real {
		f, err := os.Open(filepath.Join(sharedDataDir, tt.file))
		if err != nil {
			t.Error(err)
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan()
		f.Close()
		if got := DetectFormat(tt.kind, sc.Text()); got != tt.want {
			t.Errorf("DetectFormat(%q, first line of %s) = %q, want %q", tt.kind, tt.file, got, tt.want)
		}
	}
}

func openReal(t *testing.T, file string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(sharedDataDir, file))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func logRejected(t *testing.T, name string, rej []RowError) {
	t.Helper()
	t.Logf("%s: %d rejected", name, len(rej))
	for _, r := range rej[:min(len(rej), 5)] {
		t.Logf("  line %d: %s", r.Line, r.Message)
	}
}

// A key given twice in one file keeps its first row and reports the
// second, so that the rows read add up.
func TestParseRepeatedKeys(t *testing.T) {
	lines := fixtureLines(t, "airportsdata.csv")
	file := strings.Join([]string{lines[0], lines[2], lines[3], lines[2], lines[3]}, "\n") // FRA and JFK, twice
	p, err := ParseAirports(strings.NewReader(file), FormatAirportsData, 1, knownZone)
	if err != nil {
		t.Fatal(err)
	}
	checkRejected(t, p.Rejected, []wantReject{{4, "FRA is on line 2 already"}, {5, "JFK is on line 3 already"}})
	if len(p.Rows) != 2 {
		t.Errorf("rows = %+v", p.Rows)
	}
}

// TestParseRealFiles parses the full reference files when they are there.
func TestParseRealFiles(t *testing.T) {
	if _, err := os.Stat(sharedDataDir); err != nil {
		t.Skipf("no %s", sharedDataDir)
	}

	t.Run("airportsdata", func(t *testing.T) {
		p, err := ParseAirports(openReal(t, "airports/airportsdata_airports.csv"), FormatAirportsData, 1, knownZone)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("airportsdata: %d rows, %d skipped", len(p.Rows), p.Skipped)
		logRejected(t, "airportsdata", p.Rejected)
		if len(p.Rows) < 7000 || len(p.Rejected) > 20 {
			t.Errorf("%d rows, %d rejected", len(p.Rows), len(p.Rejected))
		}
		byCode := map[string]domain.Airport{}
		for _, a := range p.Rows {
			byCode[a.IATACode] = a
		}
		for code, want := range map[string][2]string{"FRA": {"DE", "Europe/Berlin"}, "JFK": {"US", "America/New_York"}, "DXB": {"AE", "Asia/Dubai"}} {
			if a := byCode[code]; a.Country != want[0] || a.Timezone != want[1] {
				t.Errorf("%s = %+v, want %v", code, a, want)
			}
		}
	})

	t.Run("openflights", func(t *testing.T) {
		p, err := ParseAirports(openReal(t, "airports/openflights_airports.dat"), FormatOpenFlights, 1, knownZone)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("openflights: %d rows, %d skipped", len(p.Rows), p.Skipped)
		logRejected(t, "openflights", p.Rejected)
		if len(p.Rows) < 5000 {
			t.Errorf("%d rows", len(p.Rows))
		}
		for _, r := range p.Rejected {
			if strings.Contains(r.Message, "country") {
				t.Errorf("line %d: %s", r.Line, r.Message)
			}
		}
		byCode := map[string]domain.Airport{}
		for _, a := range p.Rows {
			byCode[a.IATACode] = a
		}
		for code, want := range map[string][2]string{"FRA": {"DE", "Europe/Berlin"}, "JFK": {"US", "America/New_York"}, "DXB": {"AE", "Asia/Dubai"}, "ABJ": {"CI", "Africa/Abidjan"}, "FIH": {"CD", "Africa/Kinshasa"}} {
			if a := byCode[code]; a.Country != want[0] || a.Timezone != want[1] {
				t.Errorf("%s = %+v, want %v", code, a, want)
			}
		}
	})

	t.Run("openflights countries", func(t *testing.T) {
		// Every country name of countries.dat with a code maps to it
		// (but the dissolved Netherlands Antilles, resolved per airport).
		cr := csv.NewReader(openReal(t, "airports/openflights_countries.dat"))
		recs, err := cr.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			name, code := rec[0], rec[1]
			if code == `\N` || name == "Netherlands Antilles" {
				continue
			}
			if got, problem := openFlightsCountry(name, ""); got != code {
				t.Errorf("%q = %q %s, want %q", name, got, problem, code)
			}
		}
	})

	t.Run("airlines-merged", func(t *testing.T) {
		p, err := ParseAirlines(openReal(t, "airlines/airlines-merged.csv"), FormatMergedAirlines, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("airlines-merged: %d rows, %d skipped", len(p.Rows), p.Skipped)
		logRejected(t, "airlines-merged", p.Rejected)
		if len(p.Rows) < 500 {
			t.Errorf("%d rows", len(p.Rows))
		}
		checkAirlines(t, p.Rows, true)
	})

	t.Run("optd", func(t *testing.T) {
		p, err := ParseAirlines(openReal(t, "airlines/optd_airlines.csv"), FormatOPTD, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("optd: %d rows, %d skipped", len(p.Rows), p.Skipped)
		logRejected(t, "optd", p.Rejected)
		if len(p.Rows) < 500 {
			t.Errorf("%d rows", len(p.Rows))
		}
		checkAirlines(t, p.Rows, false)
	})

	t.Run("hs-codes", func(t *testing.T) {
		p, err := ParseCommodities(openReal(t, "hs-codes/harmonized-system.csv"), FormatHSCodes, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("hs-codes: %d rows, %d skipped", len(p.Rows), p.Skipped)
		logRejected(t, "hs-codes", p.Rejected)
		if len(p.Rows) < 5000 {
			t.Errorf("%d rows", len(p.Rows))
		}
		found := false
		for _, c := range p.Rows {
			if c.Code == "HS850760" && c.HSCode == "850760" {
				found = true
			}
		}
		if !found {
			t.Error("no HS850760")
		}
	})

	t.Run("dangerous-goods", func(t *testing.T) {
		p, err := ParseCommodities(openReal(t, "dangerous-goods/us-dot-hmt-49cfr172101-2019.csv"), FormatDangerousGoods, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("dangerous-goods: %d rows, %d skipped", len(p.Rows), p.Skipped)
		logRejected(t, "dangerous-goods", p.Rejected)
		if len(p.Rows) < 2000 {
			t.Errorf("%d rows", len(p.Rows))
		}
		byCode := map[string]domain.KnownCommodity{}
		for _, c := range p.Rows {
			if _, dup := byCode[c.Code]; dup {
				t.Errorf("%s twice", c.Code)
			}
			byCode[c.Code] = c
		}
		if c := byCode["UN3480"]; c.HazardClass != "9" || !c.DangerousGoods || c.UNNumber != "UN3480" {
			t.Errorf("UN3480 = %+v", c)
		}
		if c := byCode["UN1090"]; c.HazardClass != "3" || c.PackingGroup != "II" {
			t.Errorf("UN1090 = %+v", c)
		}
	})
}

// checkAirlines checks a few well-known carriers among the parsed rows.
func checkAirlines(t *testing.T, rows []domain.Airline, withCountry bool) {
	t.Helper()
	byCode := map[string][]domain.Airline{}
	for _, a := range rows {
		byCode[a.IATACode] = append(byCode[a.IATACode], a)
	}
	has := func(code string, ok func(domain.Airline) bool) bool {
		for _, a := range byCode[code] {
			if ok(a) {
				return true
			}
		}
		return false
	}
	if !has("LH", func(a domain.Airline) bool { return a.Prefix == "020" && a.ICAOCode == "GEC" }) {
		t.Errorf("no LH with prefix 020: %+v", byCode["LH"])
	}
	if !has("LH", func(a domain.Airline) bool { return a.Alliance == "Star Alliance" && a.ICAOCode == "DLH" }) {
		t.Errorf("no LH in Star Alliance: %+v", byCode["LH"])
	}
	for code, want := range map[string][2]string{"AF": {"SkyTeam", "057"}, "QR": {"oneworld", "157"}, "SQ": {"Star Alliance", "618"}, "EK": {"", "176"}, "CV": {"", "172"}} {
		if !has(code, func(a domain.Airline) bool { return a.Alliance == want[0] && a.Prefix == want[1] }) {
			t.Errorf("%s = %+v, want %v", code, byCode[code], want)
		}
	}
	if withCountry && !has("EK", func(a domain.Airline) bool { return a.Country == "AE" }) {
		t.Errorf("EK = %+v, want country AE", byCode["EK"])
	}
	if !withCountry && !has("EK", func(a domain.Airline) bool { return a.Country == "" }) {
		t.Errorf("EK = %+v, want no country", byCode["EK"])
	}
}

// Importing the real airline files one after the other, in either order,
// keeps every country the merged file gives: OPTD has none, and an import
// never empties a known value.
func TestImportingTheRealAirlineFilesAddsUp(t *testing.T) {
	if _, err := os.Stat(sharedDataDir); err != nil {
		t.Skipf("no %s", sharedDataDir)
	}
	merged, err := ParseAirlines(openReal(t, "airlines/airlines-merged.csv"), FormatMergedAirlines, 1)
	if err != nil {
		t.Fatal(err)
	}
	optd, err := ParseAirlines(openReal(t, "airlines/optd_airlines.csv"), FormatOPTD, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range [][]Parsed[domain.Airline]{{merged, optd}, {optd, merged}} {
		var ref domain.Reference
		for _, p := range order {
			events, err := domain.DecideReferenceChange(ref, domain.ReferenceChanged{Kind: domain.RefAirlines, Airlines: p.Rows})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range events {
				ref = domain.EvolveReference(ref, e)
			}
		}
		lost := 0
		for _, a := range merged.Rows {
			if a.Country != "" && ref.Airlines[a.Key()].Country == "" {
				lost++
			}
		}
		if lost > 0 {
			t.Errorf("importing %d then %d rows: %d airlines lost their country", len(order[0].Rows), len(order[1].Rows), lost)
		}
	}
}

// A commodities row states whether it is dangerous goods when its column
// is not empty; the dangerous-goods table states it, and the cargo
// aircraft's ban, for every UN number. What a row states are yes-or-no
// fields of a commodity, named as the decision that keeps or replaces
// them finds them.
func TestWhatARowStatesIsItsYesOrNoFields(t *testing.T) {
	commodities, err := ParseCommodities(strings.NewReader("code,name,hsCode,dangerousGoods,unNumber\nA,Yes,8471,true,\nB,No,8471,false,\nC,Unsaid,8471,,\n"), FormatCommodities, 1)
	if err != nil {
		t.Fatal(err)
	}
	dg, err := ParseCommodities(strings.NewReader("row_id,id_number,un_number,proper_shipping_name,hazard_class,packing_group,cargo_aircraft_only_max_qty\n"+
		"1,UN1845,1845,Dry ice,9,,200 kg\n"), FormatDangerousGoods, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(commodities.Stated, " ", dg.Stated); got != "map[A:[DangerousGoods] B:[DangerousGoods]] map[UN1845:[DangerousGoods CargoAircraftForbidden]]" {
		t.Errorf("stated: %s", got)
	}
	// With the column of passenger aircraft, a row states that too.
	dgPassenger, err := ParseCommodities(strings.NewReader("row_id,id_number,un_number,proper_shipping_name,hazard_class,packing_group,passenger_aircraft_rail_max_qty,cargo_aircraft_only_max_qty\n"+
		"1,UN1845,1845,Dry ice,9,,200 kg,200 kg\n"), FormatDangerousGoods, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(dgPassenger.Stated); got != "map[UN1845:[DangerousGoods CargoAircraftForbidden PassengerAircraftForbidden]]" {
		t.Errorf("stated with the passenger aircraft column: %s", got)
	}
	commodity := reflect.TypeFor[domain.KnownCommodity]()
	for _, stated := range []map[string][]string{commodities.Stated, dg.Stated, dgPassenger.Stated} {
		for _, names := range stated {
			for _, name := range names {
				if f, ok := commodity.FieldByName(name); !ok || f.Type.Kind() != reflect.Bool {
					t.Errorf("a row states %s, which is no yes-or-no field of a commodity", name)
				}
			}
		}
	}
}
