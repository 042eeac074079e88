package domain

import (
	"reflect"
	"regexp"
	"slices"
	"time"
)

// Reference data: the airports, airlines and commodities every other
// check leans on. Each kind is one aggregate; an import appends only rows
// that are new or changed, in chunks, so importing the same file twice
// appends nothing.

// Airport is an airport that matters to cargo.
type Airport struct {
	IATACode string `json:"iataCode"`
	ICAOCode string `json:"icaoCode"`
	Name     string `json:"name"`
	City     string `json:"city"`
	Country  string `json:"country"`  // ISO 3166-1 alpha-2
	Timezone string `json:"timezone"` // IANA zone name
}

// Key identifies an airport: its IATA code.
func (a Airport) Key() string { return a.IATACode }

// Key identifies a commodity: its code.
func (c KnownCommodity) Key() string { return c.Code }

// Key identifies an airline: IATA codes are shared now and then (LH is
// both Lufthansa, DLH, prefix 220, and Lufthansa Cargo, GEC, prefix 020),
// so the ICAO code goes with it.
func (a Airline) Key() string { return a.IATACode + "/" + a.ICAOCode }

// Airline is a carrier, with the prefix of its air waybills.
type Airline struct {
	IATACode string `json:"iataCode"`
	ICAOCode string `json:"icaoCode"`
	Name     string `json:"name"`
	Country  string `json:"country"`  // ISO 3166-1 alpha-2
	Alliance string `json:"alliance"` // Star Alliance, oneworld, SkyTeam, or ""
	Prefix   string `json:"prefix"`   // three-digit AWB prefix, or ""
}

// KnownCommodity is a kind of goods in the reference data, with its HS code and, for dangerous goods,
// its UN number.
type KnownCommodity struct {
	Code           string `json:"code"`
	Name           string `json:"name"`
	HSCode         string `json:"hsCode"`
	DangerousGoods bool   `json:"dangerousGoods"`
	UNNumber       string `json:"unNumber"`
	HazardClass    string `json:"hazardClass,omitempty"`  // dangerous goods: class or division, e.g. 3 or 2.1
	PackingGroup   string `json:"packingGroup,omitempty"` // dangerous goods: I, II or III

	// A UN number may have several entries (UN1950, aerosols: 2.1, 2.2 or
	// 2.3; UN1170: packing group II or III). HazardClass and PackingGroup
	// are the first; these list all, when there is more than one.
	HazardClasses []string `json:"hazardClasses,omitempty"`
	PackingGroups []string `json:"packingGroups,omitempty"`
	OtherNames    []string `json:"otherNames,omitempty"` // the proper shipping names of the other entries
	// CargoAircraftForbidden: no entry of the UN number may go by air.
	CargoAircraftForbidden bool `json:"cargoAircraftForbidden,omitempty"`
	// PassengerAircraftForbidden: no entry of the UN number may go on a
	// passenger aircraft: cargo aircraft only where one may go on a cargo
	// aircraft (UN1089, acetaldehyde; UN3480, lithium ion batteries on
	// their own), and kept off passenger aircraft too where none may
	// (UN0004, ammonium picrate, dry: CargoAircraftForbidden as well).
	PassengerAircraftForbidden bool `json:"passengerAircraftForbidden,omitempty"`
}

// Lookup is what validation asks of the reference data.
type Lookup interface {
	Airport(code string) (Airport, bool)
	AirlineByPrefix(prefix string) (Airline, bool)
	Commodity(code string) (KnownCommodity, bool)
	DangerousGood(unNumber string) (KnownCommodity, bool)
}

// Codes of references to unknown reference data.
const (
	CodeUnknownAirport   FieldCode = "UNKNOWN_AIRPORT"
	CodeUnknownCommodity FieldCode = "UNKNOWN_COMMODITY"
)

// checkKnownAirport adds a problem when a well-formed airport code is not
// in the reference data, and returns the airport it knows (the zero
// Airport if none).
func checkKnownAirport(p *Problems, ref Lookup, field, code string) Airport {
	if ref == nil || !airportCodePattern.MatchString(code) {
		return Airport{}
	}
	a, ok := ref.Airport(code)
	if !ok {
		p.Add(field, CodeUnknownAirport, "%s is not a known airport", code)
	}
	return a
}

// Reference kinds: the aggregate ids of reference data.
const (
	RefAirports    = "airports"
	RefAirlines    = "airlines"
	RefCommodities = "commodities"
)

// ReferenceChanged records rows of one kind added or changed, by key (the
// IATA code of airports, IATA and ICAO codes of airlines, the code of
// commodities).
type ReferenceChanged struct {
	Kind        string           `json:"kind"`
	Airports    []Airport        `json:"airports,omitempty"`
	Airlines    []Airline        `json:"airlines,omitempty"`
	Commodities []KnownCommodity `json:"commodities,omitempty"`
	Source      string           `json:"source"` // file or "built-in"
	// Stated are, by row key, the yes-or-no fields (by Go name) a row
	// states, false included, where another leaves them false for not
	// knowing (see DecideReferenceChange).
	Stated    map[string][]string `json:"stated,omitempty"`
	ChangedAt time.Time           `json:"changedAt"`
}

func (ReferenceChanged) EventType() string { return "ReferenceChanged" }

// The yes-or-no fields of a commodity a row may state (see
// ReferenceChanged.Stated), by their Go names.
const (
	StatedDangerousGoods             = "DangerousGoods"
	StatedCargoAircraftForbidden     = "CargoAircraftForbidden"
	StatedPassengerAircraftForbidden = "PassengerAircraftForbidden"
)

// Reference is one kind's rows by key.
type Reference struct {
	Airports    map[string]Airport
	Airlines    map[string]Airline
	Commodities map[string]KnownCommodity
}

// EvolveReference applies an event to a kind's rows. Maps are copied on
// change: a state may be shared with readers.
func EvolveReference(r Reference, e Event) Reference {
	c, ok := e.(ReferenceChanged)
	if !ok {
		return r
	}
	r.Airports = upsert(r.Airports, c.Airports, Airport.Key)
	r.Airlines = upsert(r.Airlines, c.Airlines, Airline.Key)
	r.Commodities = upsert(r.Commodities, c.Commodities, KnownCommodity.Key)
	return r
}

func upsert[T any](m map[string]T, rows []T, key func(T) string) map[string]T {
	if len(rows) == 0 {
		return m
	}
	out := make(map[string]T, len(m)+len(rows))
	for k, v := range m {
		out[k] = v
	}
	for _, row := range rows {
		out[key(row)] = row
	}
	return out
}

// DecideReferenceChange keeps only the rows that are new or differ from
// what is stored; nothing changed, no event. A row never empties what is
// stored: a field it leaves empty keeps the stored value, since
// the sources each know part of a row (OPTD has no countries, the merged
// airlines file no ICAO code for some), and importing one after another
// must add up, not wipe out.
func DecideReferenceChange(r Reference, c ReferenceChanged) ([]Event, error) {
	c.Airports = changed(r.Airports, c.Airports, Airport.Key, func(old, row Airport) Airport { return keepKnown(old, row) })
	c.Airlines = changed(r.Airlines, c.Airlines, Airline.Key, func(old, row Airline) Airline { return keepKnown(old, row) })
	c.Commodities = changed(r.Commodities, c.Commodities, KnownCommodity.Key, func(old, row KnownCommodity) KnownCommodity {
		stated := c.Stated[row.Key()]
		row = keepKnown(old, row, stated...)
		if slices.Contains(stated, StatedDangerousGoods) && !row.DangerousGoods {
			// Said not to be dangerous goods: what only dangerous
			// goods have is not kept either.
			row.UNNumber, row.HazardClass, row.PackingGroup = "", "", ""
			row.HazardClasses, row.PackingGroups, row.OtherNames = nil, nil, nil
			row.CargoAircraftForbidden, row.PassengerAircraftForbidden = false, false
		}
		return row
	})
	if len(c.Airports)+len(c.Airlines)+len(c.Commodities) == 0 {
		return nil, nil
	}
	return []Event{c}, nil
}

func changed[T any](m map[string]T, rows []T, key func(T) string, merge func(old, row T) T) []T {
	var out []T
	seen := map[string]bool{}
	for _, row := range slices.Backward(rows) { // the last of repeated keys wins
		k := key(row)
		if seen[k] {
			continue
		}
		seen[k] = true
		old, ok := m[k]
		if ok {
			row = merge(old, row)
		}
		if !ok || !reflect.DeepEqual(old, row) {
			out = append(out, row)
		}
	}
	slices.Reverse(out)
	return out
}

// keepKnown is row with each field it leaves empty (its zero value) taken
// from old, but a yes-or-no field it states: false is then what the row
// says (a commodity is not dangerous goods, or may go on a cargo aircraft
// after all), and an import that said otherwise is corrected by the next.
func keepKnown[T any](old, row T, stated ...string) T {
	o, r := reflect.ValueOf(old), reflect.ValueOf(&row).Elem()
	for i := range r.NumField() {
		f := r.Field(i)
		if f.Kind() == reflect.Bool && slices.Contains(stated, r.Type().Field(i).Name) {
			continue
		}
		if f.IsZero() {
			f.Set(o.Field(i))
		}
	}
	return row
}

var (
	icaoAirportPattern = regexp.MustCompile(`^[A-Z0-9]{4}$`)
	icaoAirlinePattern = regexp.MustCompile(`^[A-Z]{3}$`)
	countryPattern     = regexp.MustCompile(`^[A-Z]{2}$`)
	hsCodePattern      = regexp.MustCompile(`^[0-9]{2}([0-9]{2}([0-9]{2}([0-9]{2,4})?)?)?$`)
	unNumberPattern    = regexp.MustCompile(`^UN[0-9]{4}$`)
	commodityPattern   = regexp.MustCompile(`^[A-Z0-9][A-Z0-9_-]{0,19}$`)
)

// hsCodePrefixPattern is the start of an HS code, up to its 10 digits.
var hsCodePrefixPattern = regexp.MustCompile(`^[0-9]{1,10}$`)

// ValidICAOAirportCode, ValidICAOAirlineCode, ValidCountryCode,
// ValidCommodityCode and ValidHSCodePrefix report whether a code has the
// shape reference data gives it (capital letters): one of another shape
// names nothing.
func ValidICAOAirportCode(code string) bool { return icaoAirportPattern.MatchString(code) }
func ValidICAOAirlineCode(code string) bool { return icaoAirlinePattern.MatchString(code) }
func ValidCountryCode(code string) bool     { return countryPattern.MatchString(code) }
func ValidCommodityCode(code string) bool   { return commodityPattern.MatchString(code) }
func ValidHSCodePrefix(code string) bool    { return hsCodePrefixPattern.MatchString(code) }

// Alliances a carrier may belong to.
var Alliances = []string{"Star Alliance", "oneworld", "SkyTeam"}

// ValidateAirport checks one row; zoneKnown says whether an IANA zone name
// exists.
func ValidateAirport(a Airport, zoneKnown func(string) bool) []string {
	var bad []string
	if !airportCodePattern.MatchString(a.IATACode) {
		bad = append(bad, "iataCode must be three capital letters")
	}
	if a.ICAOCode != "" && !icaoAirportPattern.MatchString(a.ICAOCode) {
		bad = append(bad, "icaoCode must be four letters or digits")
	}
	rowText(&bad, "name", a.Name, 200, true)
	rowText(&bad, "city", a.City, 200, false)
	if !countryPattern.MatchString(a.Country) {
		bad = append(bad, "country must be a two-letter ISO code")
	}
	if a.Timezone == "" || !zoneKnown(a.Timezone) {
		bad = append(bad, "timezone must be an IANA zone name")
	}
	return bad
}

// ValidateAirline checks one row.
func ValidateAirline(a Airline) []string {
	var bad []string
	if !airlineCodePattern.MatchString(a.IATACode) {
		bad = append(bad, "iataCode must be two letters or digits")
	}
	if a.ICAOCode != "" && !icaoAirlinePattern.MatchString(a.ICAOCode) {
		bad = append(bad, "icaoCode must be three capital letters")
	}
	rowText(&bad, "name", a.Name, 200, true)
	if a.Country != "" && !countryPattern.MatchString(a.Country) {
		bad = append(bad, "country must be a two-letter ISO code")
	}
	if a.Alliance != "" && !slices.Contains(Alliances, a.Alliance) {
		bad = append(bad, "alliance must be Star Alliance, oneworld or SkyTeam")
	}
	if a.Prefix != "" && !awbPrefixPattern.MatchString(a.Prefix) {
		bad = append(bad, "prefix must be three digits")
	}
	return bad
}

// ValidateCommodity checks one row.
func ValidateCommodity(c KnownCommodity) []string {
	var bad []string
	if !commodityPattern.MatchString(c.Code) {
		bad = append(bad, "code must be 1 to 20 capital letters, digits, '-' or '_'")
	}
	rowText(&bad, "name", c.Name, 500, true)
	for _, name := range c.OtherNames {
		rowText(&bad, "other name", name, 500, true)
	}
	for _, class := range orOne(c.HazardClasses, c.HazardClass) {
		if class != "" && !IsHazardClass(class) {
			bad = append(bad, "hazardClass must be a class or division, as 3 or 2.1")
		}
	}
	for _, pg := range orOne(c.PackingGroups, c.PackingGroup) {
		if pg != "" && !slices.Contains(packingGroups, pg) {
			bad = append(bad, "packingGroup must be I, II or III")
		}
	}
	if c.HSCode != "" && !hsCodePattern.MatchString(c.HSCode) {
		bad = append(bad, "hsCode must be 2, 4, 6, 8 or 10 digits")
	}
	if c.UNNumber != "" && !unNumberPattern.MatchString(c.UNNumber) {
		bad = append(bad, "unNumber must be UN and four digits")
	}
	if c.DangerousGoods != (c.UNNumber != "") && c.UNNumber != "" {
		bad = append(bad, "a commodity with a UN number is dangerous goods")
	}
	return bad
}
