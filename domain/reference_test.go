package domain

import (
	"fmt"
	"strings"
	"testing"
)

func TestValidateRows(t *testing.T) {
	anyZone := func(string) bool { return true }
	airport := func(change func(a *Airport)) []string {
		a := Airport{IATACode: "FRA", Name: "Frankfurt am Main", City: "Frankfurt", Country: "DE", Timezone: "Europe/Berlin"}
		change(&a)
		return ValidateAirport(a, anyZone)
	}
	commodity := func(change func(c *KnownCommodity)) []string {
		c := KnownCommodity{Code: "UN1263", Name: "Paint", DangerousGoods: true, UNNumber: "UN1263", HazardClass: "3", PackingGroup: "II"}
		change(&c)
		return ValidateCommodity(c)
	}
	tests := []struct {
		name string
		bad  []string
		want string // the first complaint, or "" for a good row
	}{
		{"an airport", airport(func(*Airport) {}), ""},
		{"a name of 80 Chinese characters", airport(func(a *Airport) { a.Name = strings.Repeat("机", 80) }), ""},
		{"a name of 201 characters", airport(func(a *Airport) { a.Name = strings.Repeat("a", 201) }), "name must be 1 to 200 characters"},
		{"a city with a NUL", airport(func(a *Airport) { a.City = "City\x00Nul" }), "city holds the character U+0000 (at character 5)"},
		{"a city of 100 000 characters", airport(func(a *Airport) { a.City = strings.Repeat("c", 100000) }), "city must be at most 200 characters"},
		{"a name with a right-to-left override", airport(func(a *Airport) { a.Name = "Frankfurt\u202e" }), "name holds the character U+202E (at character 10)"},
		{"a name that was not UTF-8", airport(func(a *Airport) { a.Name = "Z\ufffdrich" }), "name holds the character U+FFFD (at character 2), which stands for bytes that are not UTF-8: save the file as UTF-8"},
		{"a name of bytes that are not UTF-8", airport(func(a *Airport) { a.Name = "Z\xfcrich" }), "name holds the character U+FFFD (at character 2), which stands for bytes that are not UTF-8: save the file as UTF-8"},
		{"a dangerous good", commodity(func(*KnownCommodity) {}), ""},
		{"a class of no class", commodity(func(c *KnownCommodity) { c.HazardClass = "99" }), "hazardClass must be a class or division, as 3 or 2.1"},
		{"one of its classes of no class", commodity(func(c *KnownCommodity) { c.HazardClasses = []string{"3", "3.9"} }), "hazardClass must be a class or division, as 3 or 2.1"},
		{"packing group IV", commodity(func(c *KnownCommodity) { c.PackingGroup = "IV" }), "packingGroup must be I, II or III"},
		{"another name with a control character", commodity(func(c *KnownCommodity) { c.OtherNames = []string{"Paint\x07"} }), "other name holds the character U+0007 (at character 6)"},
	}
	for _, tt := range tests {
		got := ""
		if len(tt.bad) > 0 {
			got = tt.bad[0]
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDecideReferenceChange(t *testing.T) {
	fra := Airport{IATACode: "FRA", Name: "Frankfurt am Main", Country: "DE", Timezone: "Europe/Berlin"}
	jfk := Airport{IATACode: "JFK", Name: "John F. Kennedy", Country: "US", Timezone: "America/New_York"}
	renamed := fra
	renamed.Name = "Frankfurt"
	lh := Airline{IATACode: "LH", ICAOCode: "GEC", Name: "Lufthansa Cargo", Prefix: "020"}
	gen := KnownCommodity{Code: "GEN", Name: "General cargo"}
	stored := given(EvolveReference, ReferenceChanged{Airports: []Airport{fra}, Airlines: []Airline{lh}, Commodities: []KnownCommodity{gen}})
	tests := []struct {
		name string
		c    ReferenceChanged
		want string // the source and the rows kept, by key and name, or "" for no change
	}{
		{"a new airport", ReferenceChanged{Airports: []Airport{jfk}}, "import.csv: airports JFK John F. Kennedy"},
		{"the same airport again", ReferenceChanged{Airports: []Airport{fra}}, ""},
		{"an airport renamed", ReferenceChanged{Airports: []Airport{renamed}}, "import.csv: airports FRA Frankfurt"},
		{"one new among the same", ReferenceChanged{Airports: []Airport{fra, jfk}}, "import.csv: airports JFK John F. Kennedy"},
		{"an airport twice, the last wins", ReferenceChanged{Airports: []Airport{fra, jfk, renamed}},
			"import.csv: airports JFK John F. Kennedy, FRA Frankfurt"},
		{"an airport twice, the last as stored", ReferenceChanged{Airports: []Airport{renamed, fra}}, ""},
		{"the same airline and commodity again", ReferenceChanged{Airlines: []Airline{lh}, Commodities: []KnownCommodity{gen}}, ""},
		{"an airline with another ICAO code", ReferenceChanged{Airlines: []Airline{{IATACode: "LH", ICAOCode: "DLH", Name: "Lufthansa"}}},
			"import.csv: airlines LH/DLH Lufthansa"},
		{"a new commodity", ReferenceChanged{Commodities: []KnownCommodity{gen, {Code: "PER", Name: "Perishables"}}}, "import.csv: commodities PER Perishables"},
	}
	for _, tt := range tests {
		tt.c.Source = "import.csv"
		events, err := DecideReferenceChange(stored, tt.c)
		got := outcomeOf(events, err, func(e ReferenceChanged) string {
			kinds := []string{e.Source + ":"}
			for _, k := range []struct {
				name string
				rows []string
			}{
				{"airports", keysOf(e.Airports, func(a Airport) string { return a.Key() + " " + a.Name })},
				{"airlines", keysOf(e.Airlines, func(a Airline) string { return a.Key() + " " + a.Name })},
				{"commodities", keysOf(e.Commodities, func(c KnownCommodity) string { return c.Key() + " " + c.Name })},
			} {
				if len(k.rows) > 0 {
					kinds = append(kinds, k.name+" "+strings.Join(k.rows, ", "))
				}
			}
			return strings.Join(kinds, " ")
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
	// A row never empties what is stored: what it leaves empty is kept.
	withCountry := lh
	withCountry.Country, withCountry.Alliance = "DE", "Star Alliance"
	stored = given(EvolveReference, ReferenceChanged{Airports: []Airport{fra}, Airlines: []Airline{withCountry}})
	for _, tt := range []struct {
		name string
		row  Airline
		want Airline // as stored after, or the zero Airline for no change
	}{
		{"a source without countries leaves them", Airline{IATACode: "LH", ICAOCode: "GEC", Name: "Lufthansa Cargo", Prefix: "020"}, Airline{}},
		{"and adds what it knows", Airline{IATACode: "LH", ICAOCode: "GEC", Name: "Lufthansa Cargo AG"},
			Airline{IATACode: "LH", ICAOCode: "GEC", Name: "Lufthansa Cargo AG", Country: "DE", Alliance: "Star Alliance", Prefix: "020"}},
		{"a known value is replaced by another", Airline{IATACode: "LH", ICAOCode: "GEC", Name: "Lufthansa Cargo", Country: "AT"},
			Airline{IATACode: "LH", ICAOCode: "GEC", Name: "Lufthansa Cargo", Country: "AT", Alliance: "Star Alliance", Prefix: "020"}},
	} {
		events, err := DecideReferenceChange(stored, ReferenceChanged{Airlines: []Airline{tt.row}})
		var got Airline
		if len(events) == 1 {
			got = events[0].(ReferenceChanged).Airlines[0]
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	if events, _ := DecideReferenceChange(stored, ReferenceChanged{Airports: []Airport{{IATACode: "FRA", Name: "Frankfurt am Main", Timezone: "Europe/Berlin"}}}); len(events) != 0 {
		t.Errorf("an airport without a country changed the stored one: %+v", events)
	}
}

// A yes or no that a row states is what the row says, false included: a
// commodity marked dangerous goods by mistake is corrected by the next
// import, and loses with it what only dangerous goods have. One a row does
// not state (an empty column, or a cargo aircraft's ban, which only the
// dangerous-goods table tells) is kept.
func TestAStatedNoReplacesAStoredYes(t *testing.T) {
	ice := KnownCommodity{Code: "ICE", Name: "Dry ice", HSCode: "281121", DangerousGoods: true, UNNumber: "UN1845", HazardClass: "9"}
	stored := given(EvolveReference, ReferenceChanged{Commodities: []KnownCommodity{
		{Code: "TESTDG", Name: "Test goods", HSCode: "8471", DangerousGoods: true}, ice,
		{Code: "UN3090", Name: "Lithium metal batteries", DangerousGoods: true, UNNumber: "UN3090", CargoAircraftForbidden: true},
	}})
	for _, tt := range []struct {
		name   string
		row    KnownCommodity
		stated []string
		want   string // dangerousGoods, cargoAircraftForbidden and UN number after
	}{
		{"a row that says no", KnownCommodity{Code: "TESTDG", Name: "Test goods", HSCode: "8471"}, []string{"DangerousGoods"}, "false false "},
		{"a row that does not say", KnownCommodity{Code: "TESTDG", Name: "Test goods", HSCode: "8471"}, nil, "true false "},
		{"a row that says no of goods with a UN number", KnownCommodity{Code: "ICE", Name: "Dry ice, solid", HSCode: "281121"}, []string{"DangerousGoods"}, "false false "},
		{"a new name alone", KnownCommodity{Code: "ICE", Name: "Dry ice, solid", HSCode: "281121"}, nil, "true false UN1845"},
		{"the dangerous-goods table says it may fly", KnownCommodity{Code: "UN3090", Name: "Lithium metal batteries", DangerousGoods: true, UNNumber: "UN3090"},
			[]string{"DangerousGoods", "CargoAircraftForbidden"}, "true false UN3090"},
		{"a row that knows nothing of flying", KnownCommodity{Code: "UN3090", Name: "Lithium metal batteries", DangerousGoods: true, UNNumber: "UN3090"},
			[]string{"DangerousGoods"}, "true true UN3090"},
	} {
		c := ReferenceChanged{Commodities: []KnownCommodity{tt.row}}
		if tt.stated != nil {
			c.Stated = map[string][]string{tt.row.Code: tt.stated}
		}
		events, err := DecideReferenceChange(stored, c)
		got := stored.Commodities[tt.row.Code]
		if len(events) == 1 {
			got = events[0].(ReferenceChanged).Commodities[0]
		}
		if s := fmt.Sprint(got.DangerousGoods, " ", got.CargoAircraftForbidden, " ", got.UNNumber); err != nil || s != tt.want {
			t.Errorf("%s: %s, %v; want %s", tt.name, s, err, tt.want)
		}
		if problems := ValidateCommodity(got); len(problems) > 0 {
			t.Errorf("%s: stored as %+v, which is not valid: %v", tt.name, got, problems)
		}
	}
}
