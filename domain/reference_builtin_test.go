package domain

import (
	"encoding/csv"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // zone names must not depend on the host's zoneinfo
)

func zoneKnown(name string) bool {
	_, err := time.LoadLocation(name)
	return err == nil
}

func TestBuiltinRowsValid(t *testing.T) {
	tests := []struct {
		name string
		min  int
		keys []string
		bad  func(i int) []string
	}{
		{"airports", 160, keysOf(BuiltinAirports(), func(a Airport) string { return a.IATACode }),
			func(i int) []string { return ValidateAirport(BuiltinAirports()[i], zoneKnown) }},
		{"airlines", 45, keysOf(BuiltinAirlines(), func(a Airline) string { return a.IATACode }),
			func(i int) []string { return ValidateAirline(BuiltinAirlines()[i]) }},
		{"commodities", 45, keysOf(BuiltinCommodities(), func(c KnownCommodity) string { return c.Code }),
			func(i int) []string { return ValidateCommodity(BuiltinCommodities()[i]) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.keys) < tt.min {
				t.Errorf("%d rows, want at least %d", len(tt.keys), tt.min)
			}
			seen := map[string]bool{}
			for i, k := range tt.keys {
				if seen[k] {
					t.Errorf("key %q repeated", k)
				}
				seen[k] = true
				if bad := tt.bad(i); len(bad) > 0 {
					t.Errorf("row %d (%s): %v", i, k, bad)
				}
			}
		})
	}
}

func keysOf[T any](rows []T, key func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = key(r)
	}
	return out
}

func TestBuiltinAirportsFields(t *testing.T) {
	for _, a := range BuiltinAirports() {
		if a.ICAOCode == "" || strings.TrimSpace(a.City) == "" {
			t.Errorf("%s: ICAO code and city are required in the built-in set: %+v", a.IATACode, a)
		}
	}
}

func TestBuiltinAirlinesRequired(t *testing.T) {
	byCode := map[string]Airline{}
	for _, a := range BuiltinAirlines() {
		byCode[a.IATACode] = a
		if a.ICAOCode == "" || a.Country == "" {
			t.Errorf("%s: ICAO code and country are required in the built-in set", a.IATACode)
		}
	}
	tests := []struct{ iata, icao, alliance, prefix string }{
		{"LH", "GEC", "Star Alliance", "020"},
		{"EK", "UAE", "", "176"},
		{"QR", "QTR", "oneworld", "157"},
		{"CX", "CPA", "oneworld", "160"},
		{"TK", "THY", "Star Alliance", "235"},
		{"KE", "KAL", "SkyTeam", "180"},
		{"CI", "CAL", "SkyTeam", "297"},
		{"SQ", "SIA", "Star Alliance", "618"},
		{"AF", "AFR", "SkyTeam", "057"},
		{"KL", "KLM", "SkyTeam", "074"},
		{"BA", "BAW", "oneworld", "125"},
		{"AA", "AAL", "oneworld", "001"},
		{"UA", "UAL", "Star Alliance", "016"},
		{"DL", "DAL", "SkyTeam", "006"},
		{"FX", "FDX", "", "023"},
		{"5X", "UPS", "", "406"},
		{"CV", "CLX", "", "172"},
		{"LX", "SWR", "Star Alliance", "724"},
		{"EY", "ETD", "", "607"},
		{"SV", "SVA", "SkyTeam", "065"},
		{"NH", "ANA", "Star Alliance", "205"},
		{"JL", "JAL", "oneworld", "131"},
		{"CA", "CCA", "Star Alliance", "999"},
		{"MU", "CES", "SkyTeam", "781"},
		{"CZ", "CSN", "", "784"},
		{"3S", "BOX", "", ""},
		{"K4", "CKS", "", "272"},
		{"5Y", "GTI", "", "369"},
		{"PO", "PAC", "", "403"},
	}
	for _, tt := range tests {
		t.Run(tt.iata, func(t *testing.T) {
			a, ok := byCode[tt.iata]
			if !ok {
				t.Fatalf("airline %s missing", tt.iata)
			}
			if a.ICAOCode != tt.icao || a.Alliance != tt.alliance || a.Prefix != tt.prefix {
				t.Errorf("got %s/%q/%q, want %s/%q/%q", a.ICAOCode, a.Alliance, a.Prefix, tt.icao, tt.alliance, tt.prefix)
			}
		})
	}
}

func TestBuiltinCommoditiesRequired(t *testing.T) {
	byCode := map[string]KnownCommodity{}
	byUN := map[string]KnownCommodity{}
	for _, c := range BuiltinCommodities() {
		byCode[c.Code] = c
		if c.UNNumber != "" {
			byUN[c.UNNumber] = c
		}
		if c.DangerousGoods {
			if c.UNNumber == "" || c.HazardClass == "" || c.HSCode == "" {
				t.Errorf("%s: dangerous goods need a UN number, hazard class and HS code", c.Code)
			}
			if !slices.Contains([]string{"", "I", "II", "III"}, c.PackingGroup) {
				t.Errorf("%s: packing group %q", c.Code, c.PackingGroup)
			}
		} else if c.UNNumber != "" || c.HazardClass != "" || c.PackingGroup != "" {
			t.Errorf("%s: not dangerous goods, yet has UN number, class or packing group", c.Code)
		}
	}
	for _, code := range []string{"GEN", "PER", "PES", "PEM", "PEF", "PIL", "AVI", "VAL", "HUM", "EAT",
		"RLI", "ELI", "RLM", "ELM", "ICE", "RFL", "RCM", "RPB", "RMD", "RFG", "RNG", "ROX"} {
		t.Run(code, func(t *testing.T) {
			if _, ok := byCode[code]; !ok {
				t.Errorf("commodity %s missing", code)
			}
		})
	}
	tests := []struct{ un, code, class string }{
		{"UN3480", "RLI", "9"},
		{"UN3481", "ELI", "9"},
		{"UN3090", "RLM", "9"},
		{"UN3091", "ELM", "9"},
		{"UN1845", "ICE", "9"},
		{"UN1993", "RFL", "3"},
		{"UN1263", "", "3"},
		{"UN1266", "", "3"},
		{"UN1950", "", "2.1"},
		{"UN1760", "RCM", "8"},
		{"UN2810", "RPB", "6.1"},
		{"UN3077", "", "9"},
		{"UN3082", "RMD", "9"},
		{"UN1954", "RFG", "2.1"},
		{"UN1956", "RNG", "2.2"},
		{"UN1479", "ROX", "5.1"},
		{"UN2807", "", "9"},
		{"UN3166", "", "9"},
	}
	for _, tt := range tests {
		t.Run(tt.un, func(t *testing.T) {
			c, ok := byUN[tt.un]
			if !ok {
				t.Fatalf("no commodity with %s", tt.un)
			}
			if tt.code != "" && c.Code != tt.code {
				t.Errorf("%s has code %s, want %s", tt.un, c.Code, tt.code)
			}
			if !c.DangerousGoods || c.HazardClass != tt.class {
				t.Errorf("%s: dangerous %v, class %q; want class %q", tt.un, c.DangerousGoods, c.HazardClass, tt.class)
			}
		})
	}
}

// sharedData is the public data the built-in rows were checked against;
// the test's working directory is the package directory.
const sharedData = "../../shared/data"

// readCSV returns the rows of a CSV file as maps from header to value.
func readCSV(t *testing.T, rel string, comma rune, header []string) []map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(sharedData, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = comma
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	if header == nil {
		if header, err = r.Read(); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
	}
	var out []map[string]string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		row := make(map[string]string, len(header))
		for i, h := range header {
			if i < len(rec) {
				row[h] = rec[i]
			}
		}
		out = append(out, row)
	}
}

func TestBuiltinAgainstSharedData(t *testing.T) {
	if _, err := os.Stat(sharedData); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s not present", sharedData)
	}

	t.Run("airports", func(t *testing.T) {
		byIATA := map[string]map[string]string{}
		for _, r := range readCSV(t, "airports/airportsdata_airports.csv", ',', nil) {
			if r["iata"] != "" {
				byIATA[r["iata"]] = r
			}
		}
		for _, a := range BuiltinAirports() {
			r, ok := byIATA[a.IATACode]
			if !ok {
				t.Errorf("%s: not in airportsdata", a.IATACode)
				continue
			}
			if a.ICAOCode != r["icao"] || a.Country != r["country"] {
				t.Errorf("%s: ICAO %s, country %s; airportsdata has %s, %s", a.IATACode, a.ICAOCode, a.Country, r["icao"], r["country"])
			}
			if a.Timezone == r["tz"] {
				continue
			}
			t.Errorf("%s: zone %s; airportsdata has %s", a.IATACode, a.Timezone, r["tz"])
		}
	})

	t.Run("airlines", func(t *testing.T) {
		// IATA codes whose row in airlines-merged.csv (OPTD) carries a wrong or
		// stale ICAO code: the code was reassigned, or OPTD has it wrong.
		// These are checked against OpenFlights instead.
		icaoExceptions := map[string]string{
			"WY": "OPTD has OAS for Oman Air; OpenFlights has OMA",
			"W8": "OPTD still has W8 as Caribbean Winds; Cargojet is W8/CJT",
			"7L": "OPTD still has 7L as Aero Caribbean; Silk Way West is 7L/AZQ",
		}
		icaos := map[string][]string{}
		prefixes := map[string][]string{}
		for _, r := range readCSV(t, "airlines/airlines-merged.csv", ',', nil) {
			if r["icaoCode"] != "" {
				icaos[r["iataCode"]] = append(icaos[r["iataCode"]], r["icaoCode"])
			}
			if r["prefix"] != "" {
				prefixes[r["iataCode"]] = append(prefixes[r["iataCode"]], r["prefix"])
			}
		}
		for _, r := range readCSV(t, "airlines/awb-prefix-supplement.csv", ',', nil) {
			prefixes[r["iataCode"]] = append(prefixes[r["iataCode"]], r["prefix"])
		}
		openflights := map[string]bool{}
		for _, r := range readCSV(t, "airlines/openflights_airlines.dat", ',',
			[]string{"id", "name", "alias", "iata", "icao", "callsign", "country", "active"}) {
			openflights[r["icao"]] = true
		}
		for _, a := range BuiltinAirlines() {
			if why, ok := icaoExceptions[a.IATACode]; ok {
				if !openflights[a.ICAOCode] {
					t.Errorf("%s: ICAO %s not in OpenFlights either (%s)", a.IATACode, a.ICAOCode, why)
				}
			} else if known := icaos[a.IATACode]; len(known) > 0 && !slices.Contains(known, a.ICAOCode) {
				t.Errorf("%s: ICAO %s; airlines-merged has %v", a.IATACode, a.ICAOCode, known)
			}
			if a.Prefix != "" && !slices.Contains(prefixes[a.IATACode], a.Prefix) {
				t.Errorf("%s: AWB prefix %s; the data has %v", a.IATACode, a.Prefix, prefixes[a.IATACode])
			}
		}
	})

	t.Run("commodities", func(t *testing.T) {
		// UN numbers of the IATA DGR that the US table does not list: in
		// 49 CFR magnetized material is not a hazardous material.
		notInHMT := map[string]bool{"UN2807": true}
		type entry struct{ class, pg string }
		hmt := map[string][]entry{}
		for _, r := range readCSV(t, "dangerous-goods/us-dot-hmt-49cfr172101-2019.csv", ',', nil) {
			if r["un_number"] != "" {
				hmt["UN"+r["un_number"]] = append(hmt["UN"+r["un_number"]], entry{r["hazard_class"], r["packing_group"]})
			}
		}
		hs := map[string]bool{}
		for _, r := range readCSV(t, "hs-codes/harmonized-system.csv", ',', nil) {
			hs[r["hscode"]] = true
		}
		for _, c := range BuiltinCommodities() {
			if c.HSCode != "" && !hs[c.HSCode] {
				t.Errorf("%s: HS code %s not in the HS 2022 nomenclature", c.Code, c.HSCode)
			}
			if !c.DangerousGoods {
				continue
			}
			entries, ok := hmt[c.UNNumber]
			if !ok {
				if !notInHMT[c.UNNumber] {
					t.Errorf("%s: %s not in the US Hazardous Materials Table", c.Code, c.UNNumber)
				}
				continue
			}
			if !slices.Contains(entries, entry{c.HazardClass, c.PackingGroup}) {
				t.Errorf("%s: %s class %q packing group %q; the table has %v", c.Code, c.UNNumber, c.HazardClass, c.PackingGroup, entries)
			}
		}
	})
}
