// Package refdata parses the reference-data files an admin imports into
// domain.Airport, domain.Airline and domain.KnownCommodity rows, keeping the
// good rows and reporting every bad one with its line number. It reads:
//
//   - airports: the airportsdata CSV and OpenFlights airports.dat;
//   - airlines: the merged airlines CSV and OPTD optd_airlines.csv;
//   - commodities: our own commodities CSV, the harmonized-system (HS code)
//     CSV and the US DOT hazardous materials table.
//
// DetectFormat tells which from a file's first line.
//
// It is parsing only: it reads nothing but the io.Reader it is given (and
// the time-zone database, when the caller leaves the zone check to it) and
// knows nothing of NATS, HTTP or the event store, so that a whole file, a
// chunk of one or a test's string parse alike. Storing the rows is the
// commands package's job.
//
// Each line is read on its own and parsed with encoding/csv, so that broken
// quoting on one line rejects that line only and never swallows the lines
// after it. A consequence: quoted fields that span several lines are not
// supported (none of the formats has them).
package refdata

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// RowError is a rejected row of an import file.
type RowError struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// Parsed is what a file yielded: the good rows, the rejected ones with their lines, and how many were skipped on purpose (for example airports without an IATA code, airlines no longer operating, NA numbers).
type Parsed[T any] struct {
	Rows     []T
	Rejected []RowError
	Skipped  int
	// Stated are, by row key, the yes-or-no fields (by Go name) a row
	// states, false included (see domain.ReferenceChanged.Stated).
	Stated map[string][]string
}

// Reference formats.
const (
	FormatAirportsData   = "airportsdata"    // airports: airportsdata CSV (header icao,iata,name,city,subd,country,...,tz,lid)
	FormatOpenFlights    = "openflights"     // airports: OpenFlights airports.dat (no header)
	FormatMergedAirlines = "airlines-merged" // airlines: the merged airlines CSV
	FormatOPTD           = "optd"            // airlines: OPTD optd_airlines.csv (caret-separated)
	FormatCommodities    = "commodities"     // commodities: our own CSV: code,name,hsCode,dangerousGoods,unNumber,hazardClass,packingGroup
	FormatHSCodes        = "hs-codes"        // commodities from the harmonized-system CSV
	FormatDangerousGoods = "dangerous-goods" // commodities from the US DOT hazardous materials table CSV
)

// Formats are the formats a file of each kind may be in, by the names
// an import's format takes.
var Formats = map[string][]string{
	domain.RefAirports:    {FormatAirportsData, FormatOpenFlights},
	domain.RefAirlines:    {FormatMergedAirlines, FormatOPTD},
	domain.RefCommodities: {FormatCommodities, FormatHSCodes, FormatDangerousGoods},
}

// FormatsOf names the formats of kind for a message: "airportsdata or
// openflights".
func FormatsOf(kind string) string {
	f := Formats[kind]
	if len(f) < 2 {
		return strings.Join(f, "")
	}
	return strings.Join(f[:len(f)-1], ", ") + " or " + f[len(f)-1]
}

// maxLineBytes bounds one line of an import file.
const maxLineBytes = 1 << 20

// commodityHeader is the header of our own commodities CSV; the last two
// columns may be left out.
var commodityHeader = []string{"code", "name", "hsCode", "dangerousGoods", "unNumber", "hazardClass", "packingGroup"}

const commodityMinColumns = 5

// DetectFormat names the format of a file of kind ("airports", "airlines", "commodities", "hs-codes", "dangerous-goods") from its first line, or "" if it cannot tell.
//
// For kind "commodities" the harmonized-system and dangerous-goods headers
// are recognised too, since ParseCommodities reads all three formats.
func DetectFormat(kind, firstLine string) string {
	line := strings.TrimSpace(strings.TrimPrefix(firstLine, "\ufeff"))
	if line == "" {
		return ""
	}
	fields, err := splitLine(line, ',')
	if err != nil {
		fields = nil
	}
	cols := columnIndex(fields)
	has := func(names ...string) bool {
		for _, n := range names {
			if _, ok := cols[strings.ToLower(n)]; !ok {
				return false
			}
		}
		return true
	}
	switch kind {
	case domain.RefAirports:
		if len(fields) > 1 && strings.EqualFold(fields[0], "icao") && strings.EqualFold(fields[1], "iata") {
			return FormatAirportsData
		}
		if len(fields) >= 12 && len(fields) <= 14 {
			if _, err := strconv.Atoi(fields[0]); err == nil {
				return FormatOpenFlights
			}
		}
	case domain.RefAirlines:
		if strings.Contains(line, "^") {
			if optd, err := splitLine(line, '^'); err == nil {
				c := columnIndex(optd)
				_, pk := c["pk"]
				_, iata := c["2char_code"]
				if pk && iata {
					return FormatOPTD
				}
			}
		}
		if has("iataCode", "name") {
			return FormatMergedAirlines
		}
	case domain.RefCommodities, FormatHSCodes, FormatDangerousGoods:
		if kind == domain.RefCommodities && isCommodityHeader(fields) {
			return FormatCommodities
		}
		if kind != FormatDangerousGoods && has("hscode", "description", "level") {
			return FormatHSCodes
		}
		if kind != FormatHSCodes && has("id_number", "proper_shipping_name", "hazard_class") {
			return FormatDangerousGoods
		}
	}
	return ""
}

// ParseAirports reads an airports file of the given format (FormatAirportsData
// or FormatOpenFlights). zoneKnown says whether an IANA zone name exists (nil:
// whatever time.LoadLocation knows).
//
// firstLine is the number of the reader's first line in the whole file (1 for
// a whole file). When a client sends a long file in chunks, each chunk starts
// with the header line repeated: when firstLine > 1 the first line read is
// that repeated header and does not count, so the line after it is line
// firstLine. A format without a header (OpenFlights) has nothing repeated:
// its first line read is line firstLine. Line numbers in Rejected are lines
// of the whole file.
//
// The error is only for an unknown format or an unreadable or wrong header
// (or a line longer than 1 MiB); every bad row goes to Rejected with its line
// number and the reason, and the good rows are kept.
//
// airportsdata: rows without an IATA code are skipped; an ICAO code starting
// with "_" (the file's pseudo-ICAO for airports without one) is dropped.
// OpenFlights: "\N" is empty; rows without an IATA code or whose type is not
// "airport" are skipped; the country name is mapped to ISO 3166-1 alpha-2
// and a row with an unknown name is rejected.
func ParseAirports(r io.Reader, format string, firstLine int, zoneKnown func(string) bool) (Parsed[domain.Airport], error) {
	if zoneKnown == nil {
		zoneKnown = func(z string) bool { _, err := time.LoadLocation(z); return err == nil && z != "Local" }
	}
	switch format {
	case FormatAirportsData:
		var c struct{ icao, iata, name, city, country, tz, width int }
		header := func(h []string) error {
			c.width = len(h)
			return requireColumns(columnIndex(h), map[string]*int{
				"icao": &c.icao, "iata": &c.iata, "name": &c.name, "city": &c.city, "country": &c.country, "tz": &c.tz,
			})
		}
		return parseLines(r, ',', firstLine, header, domain.Airport.Key, func(rec []string) (domain.Airport, bool, []string) {
			if len(rec) != c.width {
				return domain.Airport{}, false, []string{fieldCountProblem(len(rec), c.width)}
			}
			a := domain.Airport{
				IATACode: strings.ToUpper(rec[c.iata]),
				ICAOCode: strings.ToUpper(rec[c.icao]),
				Name:     rec[c.name],
				City:     rec[c.city],
				Country:  strings.ToUpper(rec[c.country]),
				Timezone: rec[c.tz],
			}
			if a.IATACode == "" {
				return a, true, nil
			}
			if strings.HasPrefix(a.ICAOCode, "_") {
				a.ICAOCode = ""
			}
			return a, false, domain.ValidateAirport(a, zoneKnown)
		})
	case FormatOpenFlights:
		return parseLines(r, ',', firstLine, nil, domain.Airport.Key, func(rec []string) (domain.Airport, bool, []string) {
			if len(rec) < 12 || len(rec) > 14 {
				return domain.Airport{}, false, []string{fieldCountProblem(len(rec), 14)}
			}
			for i, f := range rec {
				if f == `\N` {
					rec[i] = ""
				}
			}
			a := domain.Airport{
				IATACode: strings.ToUpper(rec[4]),
				ICAOCode: strings.ToUpper(rec[5]),
				Name:     rec[1],
				City:     rec[2],
				Timezone: rec[11],
			}
			if len(rec) > 12 && rec[12] != "" && !strings.EqualFold(rec[12], "airport") {
				return a, true, nil
			}
			if a.IATACode == "" {
				return a, true, nil
			}
			code, problem := openFlightsCountry(rec[3], a.ICAOCode)
			a.Country = code
			bad := domain.ValidateAirport(a, zoneKnown)
			if problem != "" {
				bad = slices.DeleteFunc(bad, func(p string) bool { return strings.HasPrefix(p, "country ") })
				bad = append([]string{problem}, bad...)
			}
			return a, false, bad
		})
	}
	return Parsed[domain.Airport]{}, fmt.Errorf("unknown airports format %q: %s", format, FormatsOf(domain.RefAirports))
}

// ParseAirlines reads an airlines file of the given format
// (FormatMergedAirlines or FormatOPTD). firstLine and the error are as for
// ParseAirports: when firstLine > 1 the first line read is the repeated
// header and does not count.
//
// Rows whose IATA code is not two letters or digits (alliance rows such as
// "*A", airlines without an IATA code) are skipped. The alliance is set only
// for a member: alliance status "Member", or "Affiliate"/"Associate" (a
// carrier flying within the alliance under a member's umbrella, such as
// Lufthansa CityLine or Iberia Express, counts as in the alliance); any other
// status leaves it empty. Alliance names are normalised to "Star Alliance",
// "oneworld" and "SkyTeam"; another name is rejected.
//
// airlines-merged: the country is taken from the countryCode column; a row
// with a country name but no countryCode is rejected. The prefix is taken as
// is. Note the file repeats some IATA codes (LH is Lufthansa 220 and then
// Lufthansa Cargo 020): all rows are returned, in file order.
//
// OPTD: rows with an env_id (historical) or a validity_to in the past are
// skipped; num_code becomes the prefix zero-padded to three digits ("0" or
// empty: no prefix); name2 stands in for an empty name; the file has no
// country, so Country is empty.
func ParseAirlines(r io.Reader, format string, firstLine int) (Parsed[domain.Airline], error) {
	switch format {
	case FormatMergedAirlines:
		c := struct{ iata, icao, name, country, countryCode, alliance, status, prefix int }{-1, -1, -1, -1, -1, -1, -1, -1}
		var width int
		header := func(h []string) error {
			width = len(h)
			cols := columnIndex(h)
			if err := requireColumns(cols, map[string]*int{"iatacode": &c.iata, "name": &c.name}); err != nil {
				return err
			}
			optionalColumns(cols, map[string]*int{
				"icaocode": &c.icao, "country": &c.country, "countrycode": &c.countryCode,
				"alliance": &c.alliance, "alliancestatus": &c.status, "prefix": &c.prefix,
			})
			return nil
		}
		return parseLines(r, ',', firstLine, header, domain.Airline.Key, func(rec []string) (domain.Airline, bool, []string) {
			if len(rec) != width {
				return domain.Airline{}, false, []string{fieldCountProblem(len(rec), width)}
			}
			a := domain.Airline{
				IATACode: strings.ToUpper(rec[c.iata]),
				ICAOCode: strings.ToUpper(field(rec, c.icao)),
				Name:     rec[c.name],
				Country:  strings.ToUpper(field(rec, c.countryCode)),
				Prefix:   field(rec, c.prefix),
			}
			if !isAirlineCode(a.IATACode) {
				return a, true, nil
			}
			var bad []string
			if name := field(rec, c.country); name != "" && a.Country == "" {
				bad = append(bad, fmt.Sprintf("country %q has no countryCode", name))
			}
			a.Alliance = allianceOf(field(rec, c.alliance), field(rec, c.status), c.status >= 0)
			return a, false, append(bad, domain.ValidateAirline(a)...)
		})
	case FormatOPTD:
		c := struct{ env, validTo, icao, iata, num, name, name2, alliance, status int }{-1, -1, -1, -1, -1, -1, -1, -1, -1}
		var width int
		header := func(h []string) error {
			width = len(h)
			cols := columnIndex(h)
			if err := requireColumns(cols, map[string]*int{
				"env_id": &c.env, "validity_to": &c.validTo, "3char_code": &c.icao, "2char_code": &c.iata,
				"num_code": &c.num, "name": &c.name, "alliance_code": &c.alliance, "alliance_status": &c.status,
			}); err != nil {
				return err
			}
			optionalColumns(cols, map[string]*int{"name2": &c.name2})
			return nil
		}
		today := time.Now().UTC().Format(time.DateOnly)
		return parseLines(r, '^', firstLine, header, domain.Airline.Key, func(rec []string) (domain.Airline, bool, []string) {
			if len(rec) != width {
				return domain.Airline{}, false, []string{fieldCountProblem(len(rec), width)}
			}
			if rec[c.env] != "" {
				return domain.Airline{}, true, nil
			}
			if to := rec[c.validTo]; to != "" {
				if _, err := time.Parse(time.DateOnly, to); err != nil {
					return domain.Airline{}, false, []string{fmt.Sprintf("validity_to %q is not a date", to)}
				}
				if to < today {
					return domain.Airline{}, true, nil
				}
			}
			a := domain.Airline{
				IATACode: strings.ToUpper(rec[c.iata]),
				ICAOCode: strings.ToUpper(rec[c.icao]),
				Name:     rec[c.name],
				Prefix:   optdPrefix(rec[c.num]),
				Alliance: allianceOf(rec[c.alliance], rec[c.status], true),
			}
			if !isAirlineCode(a.IATACode) {
				return a, true, nil
			}
			if a.Name == "" {
				a.Name = field(rec, c.name2)
			}
			return a, false, domain.ValidateAirline(a)
		})
	}
	return Parsed[domain.Airline]{}, fmt.Errorf("unknown airlines format %q: %s", format, FormatsOf(domain.RefAirlines))
}

// ParseCommodities reads a commodities file of the given format
// (FormatCommodities, FormatHSCodes or FormatDangerousGoods). firstLine and
// the error are as for ParseAirports: when firstLine > 1 the first line read
// is the repeated header and does not count.
//
// commodities: the header must be exactly
// code,name,hsCode,dangerousGoods,unNumber,hazardClass,packingGroup (the last
// two may be left out); dangerousGoods is true or false (empty: false).
//
// hs-codes: every row whose hscode is all digits becomes a commodity
// "HS"+hscode named by its description; others (the TOTAL row) are skipped.
//
// dangerous-goods: every row whose id_number starts with "UN" becomes a
// dangerous-goods commodity whose code and UN number are the id_number; NA
// and ID numbers and rows without an id are skipped. When a UN number occurs
// on several rows the first good one is kept and the later ones are skipped
// (a rejected row does not count as the first).
func ParseCommodities(r io.Reader, format string, firstLine int) (Parsed[domain.KnownCommodity], error) {
	switch format {
	case FormatCommodities:
		var width int
		header := func(h []string) error {
			if !isCommodityHeader(h) {
				return fmt.Errorf("header must be %s", strings.Join(commodityHeader, ","))
			}
			width = len(h)
			return nil
		}
		// A row states whether its commodity is dangerous goods when
		// its column is not empty (empty: false for a new one, and for
		// a stored one what is stored).
		stated := map[string][]string{}
		parsed, err := parseLines(r, ',', firstLine, header, domain.KnownCommodity.Key, func(rec []string) (domain.KnownCommodity, bool, []string) {
			if len(rec) != width {
				return domain.KnownCommodity{}, false, []string{fieldCountProblem(len(rec), width)}
			}
			c := domain.KnownCommodity{
				Code:     strings.ToUpper(rec[0]),
				Name:     rec[1],
				HSCode:   rec[2],
				UNNumber: strings.ToUpper(rec[4]),
			}
			if width > 5 {
				c.HazardClass = rec[5]
			}
			if width > 6 {
				c.PackingGroup = strings.ToUpper(rec[6])
			}
			var bad []string
			switch strings.ToLower(rec[3]) {
			case "true":
				c.DangerousGoods = true
			case "false", "":
			default:
				bad = append(bad, fmt.Sprintf("dangerousGoods must be true or false, not %q", rec[3]))
			}
			if rec[3] != "" {
				stated[c.Key()] = []string{domain.StatedDangerousGoods}
			}
			return c, false, append(bad, domain.ValidateCommodity(c)...)
		})
		parsed.Stated = stated
		return parsed, err
	case FormatHSCodes:
		var code, desc, width int
		header := func(h []string) error {
			width = len(h)
			return requireColumns(columnIndex(h), map[string]*int{"hscode": &code, "description": &desc})
		}
		return parseLines(r, ',', firstLine, header, domain.KnownCommodity.Key, func(rec []string) (domain.KnownCommodity, bool, []string) {
			if len(rec) != width {
				return domain.KnownCommodity{}, false, []string{fieldCountProblem(len(rec), width)}
			}
			hs := rec[code]
			if !allDigits(hs) {
				return domain.KnownCommodity{}, true, nil
			}
			c := domain.KnownCommodity{Code: "HS" + hs, Name: rec[desc], HSCode: hs}
			return c, false, domain.ValidateCommodity(c)
		})
	case FormatDangerousGoods:
		var id, name, class, pg, cargo, width int
		// passenger is the column of the quantity a passenger aircraft
		// may carry, -1 in a file without it (one made to the columns
		// required before it was read): such a file states nothing of
		// passenger aircraft.
		passenger := -1
		header := func(h []string) error {
			width = len(h)
			columns := columnIndex(h)
			if i, ok := columns["passenger_aircraft_rail_max_qty"]; ok {
				passenger = i
			}
			return requireColumns(columns, map[string]*int{
				"id_number": &id, "proper_shipping_name": &name, "hazard_class": &class, "packing_group": &pg, "cargo_aircraft_only_max_qty": &cargo,
			})
		}
		passengerQuantity := func(rec []string) string {
			if passenger < 0 {
				return ""
			}
			return rec[passenger]
		}
		// A UN number has a row per entry; the first names it, and all
		// together give its classes, packing groups and whether any may
		// fly, on a cargo aircraft and on a passenger aircraft.
		entries := map[string]*dangerousGoodEntries{}
		parsed, err := parseLines(r, ',', firstLine, header, nil, func(rec []string) (domain.KnownCommodity, bool, []string) {
			if len(rec) != width {
				return domain.KnownCommodity{}, false, []string{fieldCountProblem(len(rec), width)}
			}
			un := entryNumber(rec[id])
			if !strings.HasPrefix(un, "UN") {
				return domain.KnownCommodity{}, true, nil
			}
			first, seen := entries[un]
			if seen {
				first.add(rec[name], rec[class], rec[pg], passengerQuantity(rec), rec[cargo])
				return domain.KnownCommodity{}, true, nil
			}
			c := domain.KnownCommodity{
				Code:           un,
				Name:           rec[name],
				DangerousGoods: true,
				UNNumber:       un,
				HazardClass:    rec[class],
				PackingGroup:   rec[pg],
			}
			bad := domain.ValidateCommodity(c)
			if len(bad) == 0 {
				entries[un] = &dangerousGoodEntries{}
				entries[un].add(rec[name], rec[class], rec[pg], passengerQuantity(rec), rec[cargo])
			}
			return c, false, bad
		})
		for i, c := range parsed.Rows {
			e := entries[c.Code]
			if len(e.classes) > 1 {
				parsed.Rows[i].HazardClasses = e.classes
			}
			if len(e.groups) > 1 {
				parsed.Rows[i].PackingGroups = e.groups
			}
			if len(e.names) > 1 {
				parsed.Rows[i].OtherNames = e.names[1:]
			}
			parsed.Rows[i].CargoAircraftForbidden = !e.mayFly
			// Goods the table forbids on passenger aircraft stay off them
			// whether or not it lets a cargo aircraft take them: where it
			// forbids both (UN0004, ammonium picrate; UN1005, anhydrous
			// ammonia), the ICAO Technical Instructions may still allow a
			// freighter (the e-DGD notes it for the acceptance check), but
			// nothing makes a passenger aircraft the safer place.
			parsed.Rows[i].PassengerAircraftForbidden = passenger >= 0 && e.passengerForbidden && !e.mayFlyPassenger
		}
		// The table says of every UN number whether it is dangerous
		// goods (it is) and whether it may fly on a cargo aircraft, and
		// with the column, on a passenger aircraft.
		stated := []string{domain.StatedDangerousGoods, domain.StatedCargoAircraftForbidden}
		if passenger >= 0 {
			stated = append(stated, domain.StatedPassengerAircraftForbidden)
		}
		parsed.Stated = map[string][]string{}
		for _, c := range parsed.Rows {
			parsed.Stated[c.Key()] = stated
		}
		return parsed, err
	}
	return Parsed[domain.KnownCommodity]{}, fmt.Errorf("unknown commodities format %q: %s", format, FormatsOf(domain.RefCommodities))
}

// EntryKey is, for a file of format whose first line is header, a
// function naming the entry each of its lines belongs to, where an entry
// may take several lines that must be read together (a UN number's rows
// of the dangerous-goods table: together they give its classes and
// packing groups), "" for a line of none; nil for a format whose every
// line is an entry of its own. An importer that sends a file in parts
// keeps an entry's lines that follow one another in one part: read in
// two, the entry would be stored twice, the second time from its later
// lines alone.
func EntryKey(format, header string) func(line string) string {
	if format != FormatDangerousGoods {
		return nil
	}
	fields, err := splitLine(strings.TrimPrefix(header, "\ufeff"), ',')
	if err != nil {
		return nil
	}
	id, ok := columnIndex(fields)["id_number"]
	if !ok {
		return nil
	}
	return func(line string) string {
		rec, err := splitLine(line, ',')
		if err != nil || id >= len(rec) {
			return ""
		}
		return entryNumber(rec[id])
	}
}

// entryNumber is the id_number of a row of the dangerous-goods table as
// its entry is keyed: "UN 1845" and "un1845" are UN1845.
func entryNumber(id string) string { return strings.ToUpper(strings.ReplaceAll(id, " ", "")) }

// dangerousGoodEntries gathers the entries of one UN number.
type dangerousGoodEntries struct {
	classes, groups, names []string
	mayFly                 bool // some entry may go on a cargo aircraft
	// mayFlyPassenger: some entry gives a quantity a passenger aircraft
	// may carry; passengerForbidden: some entry says Forbidden there. An
	// empty cell says neither: rows of the DOT table shifted by a column
	// (UN3334, UN3335) have the passenger cell empty and their quantities
	// in the next ones, and aviation-regulated liquids would be kept off
	// passenger aircraft by a parsing accident; and the rows the parser
	// left without a name (UN2197, UN1064) have every cell empty beside
	// a named row that says Forbidden.
	mayFlyPassenger, passengerForbidden bool
}

// add adds an entry; a quantity of an aircraft's column is what one may
// carry, "Forbidden" when none ("" for none stated, or no such column).
func (d *dangerousGoodEntries) add(name, class, group string, passengerAircraftQuantity, cargoAircraftQuantity string) {
	if name != "" && !slices.Contains(d.names, name) {
		d.names = append(d.names, name)
	}
	if domain.IsHazardClass(class) && !slices.Contains(d.classes, class) {
		d.classes = append(d.classes, class)
	}
	if group != "" && !slices.Contains(d.groups, group) {
		d.groups = append(d.groups, group)
	}
	d.mayFly = d.mayFly || (cargoAircraftQuantity != "" && cargoAircraftQuantity != "Forbidden")
	d.mayFlyPassenger = d.mayFlyPassenger || (passengerAircraftQuantity != "" && passengerAircraftQuantity != "Forbidden")
	d.passengerForbidden = d.passengerForbidden || passengerAircraftQuantity == "Forbidden"
}

// parseLines drives the parsing of one file: it reads it line by line,
// hands the header (when header is not nil) to header and every other
// non-blank line's fields, trimmed, to row, which returns the row, whether
// it is skipped on purpose, or its problems.
func parseLines[T any](r io.Reader, comma rune, firstLine int, header func([]string) error, key func(T) string, row func([]string) (T, bool, []string)) (Parsed[T], error) {
	var p Parsed[T]
	lineOf := map[string]int{} // key → the line that gave it
	if firstLine < 1 {
		firstLine = 1
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLineBytes)
	line := firstLine - 1 // the number of the line last read
	first := true
	for sc.Scan() {
		text := sc.Text()
		if first {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		if header != nil && first {
			first = false
			if firstLine == 1 {
				line++
			}
			fields, err := splitLine(text, comma)
			if err == nil {
				err = header(fields)
			}
			if err != nil {
				return p, fmt.Errorf("header line: %w", err)
			}
			continue
		}
		first = false
		line++
		if strings.TrimSpace(text) == "" {
			continue
		}
		fields, err := splitLine(text, comma)
		if err != nil {
			p.Rejected = append(p.Rejected, RowError{Line: line, Message: err.Error()})
			continue
		}
		v, skip, bad := row(fields)
		k := "" // the row's key, when rows are keyed
		if key != nil && !skip && len(bad) == 0 {
			k = key(v)
		}
		switch {
		case skip:
			p.Skipped++
		case len(bad) > 0:
			p.Rejected = append(p.Rejected, RowError{Line: line, Message: strings.Join(bad, "; ")})
		case lineOf[k] > 0:
			// Else the last of the two would stand, and the count of rows
			// read not add up.
			p.Rejected = append(p.Rejected, RowError{Line: line, Message: fmt.Sprintf("%s is on line %d already: the first stands", k, lineOf[k])})
		default:
			if k != "" {
				lineOf[k] = line
			}
			p.Rows = append(p.Rows, v)
		}
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("after line %d: %w", line, err)
	}
	if header != nil && first {
		return p, errors.New("missing header line")
	}
	return p, nil
}

// splitLine parses one line as CSV with the given separator and trims the
// fields.
func splitLine(text string, comma rune) ([]string, error) {
	cr := csv.NewReader(strings.NewReader(text))
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if err == io.EOF {
			return nil, errors.New("empty line")
		}
		return nil, fmt.Errorf("malformed CSV: %w", err)
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	return rec, nil
}

// columnIndex maps lower-cased header names to their positions.
func columnIndex(h []string) map[string]int {
	cols := make(map[string]int, len(h))
	for i, name := range h {
		name = strings.ToLower(strings.TrimSpace(name))
		if _, dup := cols[name]; !dup {
			cols[name] = i
		}
	}
	return cols
}

// requireColumns sets each wanted column's position, or names the missing
// ones.
func requireColumns(cols map[string]int, want map[string]*int) error {
	var missing []string
	for name, pos := range want {
		i, ok := cols[name]
		if !ok {
			missing = append(missing, name)
			continue
		}
		*pos = i
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("missing column(s) %s", strings.Join(missing, ", "))
	}
	return nil
}

// optionalColumns sets the position of each column present; the others
// keep theirs (-1: absent).
func optionalColumns(cols map[string]int, want map[string]*int) {
	for name, pos := range want {
		if i, ok := cols[name]; ok {
			*pos = i
		}
	}
}

// field is rec[i], or "" for an absent column.
func field(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return rec[i]
}

func fieldCountProblem(got, want int) string {
	return fmt.Sprintf("has %d fields, want %d", got, want)
}

func isCommodityHeader(h []string) bool {
	if len(h) < commodityMinColumns || len(h) > len(commodityHeader) {
		return false
	}
	for i, name := range h {
		if name != commodityHeader[i] {
			return false
		}
	}
	return true
}

func isAirlineCode(s string) bool {
	if len(s) != 2 {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// optdPrefix pads OPTD's num_code to the three-digit AWB prefix; "0" or
// empty is no prefix. Anything else is kept as is for the validator to
// reject.
func optdPrefix(num string) string {
	if num == "" || (allDigits(num) && strings.Trim(num, "0") == "") {
		return ""
	}
	if allDigits(num) && len(num) < 3 {
		return strings.Repeat("0", 3-len(num)) + num
	}
	return num
}

// allianceOf names the alliance of a carrier with the given alliance value
// and status; without a status column (hasStatus false) any alliance value
// counts.
func allianceOf(alliance, status string, hasStatus bool) string {
	if alliance == "" {
		return ""
	}
	if hasStatus {
		switch strings.ToLower(status) {
		case "member", "affiliate", "associate":
		default:
			return ""
		}
	}
	key := strings.ToLower(strings.NewReplacer(" ", "", "-", "", "_", "").Replace(alliance))
	switch key {
	case "staralliance", "star":
		return "Star Alliance"
	case "oneworld":
		return "oneworld"
	case "skyteam":
		return "SkyTeam"
	}
	return alliance // not one of ours: the validator rejects it
}

// openFlightsCountry maps an OpenFlights country name to its ISO 3166-1
// alpha-2 code, or says why it cannot. The Netherlands Antilles, dissolved in
// 2010, are resolved by the airport's ICAO code.
func openFlightsCountry(name, icao string) (string, string) {
	if name == "" {
		return "", "country is missing"
	}
	key := strings.ToLower(name)
	if key == "netherlands antilles" {
		switch icao {
		case "TNCC":
			return "CW", ""
		case "TNCM":
			return "SX", ""
		case "TNCB", "TNCE", "TNCS":
			return "BQ", ""
		}
		return "", fmt.Sprintf("country %q no longer exists and ICAO code %q does not tell which", name, icao)
	}
	if code, ok := openFlightsCountries[key]; ok {
		return code, ""
	}
	return "", fmt.Sprintf("unknown country name %q", name)
}

// openFlightsCountries maps the country names of OpenFlights
// (airports.dat and countries.dat), lower-cased, to ISO 3166-1 alpha-2.
// Territories without a code of their own map to the code that covers them
// (the US minor outlying islands to UM, the French Scattered Islands to TF,
// Clipperton to FR, the Australian Coral Sea territories to AU); the
// disputed Paracel and Spratly Islands are left out.
var openFlightsCountries = map[string]string{
	"afghanistan":                          "AF",
	"albania":                              "AL",
	"algeria":                              "DZ",
	"american samoa":                       "AS",
	"andorra":                              "AD",
	"angola":                               "AO",
	"anguilla":                             "AI",
	"antarctica":                           "AQ",
	"antigua and barbuda":                  "AG",
	"argentina":                            "AR",
	"armenia":                              "AM",
	"aruba":                                "AW",
	"ashmore and cartier islands":          "AU",
	"australia":                            "AU",
	"austria":                              "AT",
	"azerbaijan":                           "AZ",
	"bahamas":                              "BS",
	"bahrain":                              "BH",
	"baker island":                         "UM",
	"bangladesh":                           "BD",
	"barbados":                             "BB",
	"belarus":                              "BY",
	"belgium":                              "BE",
	"belize":                               "BZ",
	"benin":                                "BJ",
	"bermuda":                              "BM",
	"bhutan":                               "BT",
	"bolivia":                              "BO",
	"bonaire, saint eustatius and saba":    "BQ",
	"bosnia and herzegovina":               "BA",
	"botswana":                             "BW",
	"bouvet island":                        "BV",
	"brazil":                               "BR",
	"british indian ocean territory":       "IO",
	"british virgin islands":               "VG",
	"brunei":                               "BN",
	"brunei darussalam":                    "BN",
	"bulgaria":                             "BG",
	"burkina faso":                         "BF",
	"burma":                                "MM",
	"burundi":                              "BI",
	"cabo verde":                           "CV",
	"cambodia":                             "KH",
	"cameroon":                             "CM",
	"canada":                               "CA",
	"cape verde":                           "CV",
	"cayman islands":                       "KY",
	"central african republic":             "CF",
	"chad":                                 "TD",
	"chile":                                "CL",
	"china":                                "CN",
	"christmas island":                     "CX",
	"clipperton island":                    "FR",
	"cocos (keeling) islands":              "CC",
	"colombia":                             "CO",
	"comoros":                              "KM",
	"congo (brazzaville)":                  "CG",
	"congo (kinshasa)":                     "CD",
	"congo republic":                       "CG",
	"cook islands":                         "CK",
	"coral sea islands":                    "AU",
	"costa rica":                           "CR",
	"cote d'ivoire":                        "CI",
	"croatia":                              "HR",
	"cuba":                                 "CU",
	"curacao":                              "CW",
	"cyprus":                               "CY",
	"czech republic":                       "CZ",
	"czechia":                              "CZ",
	"denmark":                              "DK",
	"djibouti":                             "DJ",
	"dominica":                             "DM",
	"dominican republic":                   "DO",
	"dr congo":                             "CD",
	"east timor":                           "TL",
	"ecuador":                              "EC",
	"egypt":                                "EG",
	"el salvador":                          "SV",
	"equatorial guinea":                    "GQ",
	"eritrea":                              "ER",
	"estonia":                              "EE",
	"eswatini":                             "SZ",
	"ethiopia":                             "ET",
	"europa island":                        "TF",
	"faeroe islands":                       "FO",
	"falkland islands":                     "FK",
	"faroe islands":                        "FO",
	"fiji":                                 "FJ",
	"finland":                              "FI",
	"france":                               "FR",
	"french guiana":                        "GF",
	"french polynesia":                     "PF",
	"french southern territories":          "TF",
	"gabon":                                "GA",
	"gambia":                               "GM",
	"georgia":                              "GE",
	"germany":                              "DE",
	"ghana":                                "GH",
	"gibraltar":                            "GI",
	"glorioso islands":                     "TF",
	"greece":                               "GR",
	"greenland":                            "GL",
	"grenada":                              "GD",
	"guadeloupe":                           "GP",
	"guam":                                 "GU",
	"guatemala":                            "GT",
	"guernsey":                             "GG",
	"guinea":                               "GN",
	"guinea-bissau":                        "GW",
	"guyana":                               "GY",
	"haiti":                                "HT",
	"heard and mcdonald islands":           "HM",
	"honduras":                             "HN",
	"hong kong":                            "HK",
	"howland island":                       "UM",
	"hungary":                              "HU",
	"iceland":                              "IS",
	"india":                                "IN",
	"indonesia":                            "ID",
	"iran":                                 "IR",
	"iraq":                                 "IQ",
	"ireland":                              "IE",
	"isle of man":                          "IM",
	"israel":                               "IL",
	"italy":                                "IT",
	"ivory coast":                          "CI",
	"jamaica":                              "JM",
	"jan mayen":                            "SJ",
	"japan":                                "JP",
	"jarvis island":                        "UM",
	"jersey":                               "JE",
	"johnston atoll":                       "UM",
	"jordan":                               "JO",
	"juan de nova island":                  "TF",
	"kazakhstan":                           "KZ",
	"kenya":                                "KE",
	"kingman reef":                         "UM",
	"kiribati":                             "KI",
	"kuwait":                               "KW",
	"kyrgyz republic":                      "KG",
	"kyrgyzstan":                           "KG",
	"laos":                                 "LA",
	"latvia":                               "LV",
	"lebanon":                              "LB",
	"lesotho":                              "LS",
	"liberia":                              "LR",
	"libya":                                "LY",
	"liechtenstein":                        "LI",
	"lithuania":                            "LT",
	"luxembourg":                           "LU",
	"macao":                                "MO",
	"macau":                                "MO",
	"macedonia":                            "MK",
	"madagascar":                           "MG",
	"malawi":                               "MW",
	"malaysia":                             "MY",
	"maldives":                             "MV",
	"mali":                                 "ML",
	"malta":                                "MT",
	"marshall islands":                     "MH",
	"martinique":                           "MQ",
	"mauritania":                           "MR",
	"mauritius":                            "MU",
	"mayotte":                              "YT",
	"mexico":                               "MX",
	"micronesia":                           "FM",
	"micronesia, fed. sts.":                "FM",
	"midway islands":                       "UM",
	"moldova":                              "MD",
	"monaco":                               "MC",
	"mongolia":                             "MN",
	"montenegro":                           "ME",
	"montserrat":                           "MS",
	"morocco":                              "MA",
	"mozambique":                           "MZ",
	"myanmar":                              "MM",
	"namibia":                              "NA",
	"nauru":                                "NR",
	"navassa island":                       "UM",
	"nepal":                                "NP",
	"netherlands":                          "NL",
	"new caledonia":                        "NC",
	"new zealand":                          "NZ",
	"nicaragua":                            "NI",
	"niger":                                "NE",
	"nigeria":                              "NG",
	"niue":                                 "NU",
	"norfolk island":                       "NF",
	"north korea":                          "KP",
	"north macedonia":                      "MK",
	"northern mariana islands":             "MP",
	"norway":                               "NO",
	"oman":                                 "OM",
	"pakistan":                             "PK",
	"palau":                                "PW",
	"palestine":                            "PS",
	"palmyra atoll":                        "UM",
	"panama":                               "PA",
	"papua new guinea":                     "PG",
	"paraguay":                             "PY",
	"peru":                                 "PE",
	"philippines":                          "PH",
	"pitcairn":                             "PN",
	"poland":                               "PL",
	"portugal":                             "PT",
	"puerto rico":                          "PR",
	"qatar":                                "QA",
	"reunion":                              "RE",
	"romania":                              "RO",
	"russia":                               "RU",
	"rwanda":                               "RW",
	"saint barthelemy":                     "BL",
	"saint helena":                         "SH",
	"saint kitts and nevis":                "KN",
	"saint lucia":                          "LC",
	"saint martin":                         "MF",
	"saint pierre and miquelon":            "PM",
	"saint vincent and the grenadines":     "VC",
	"samoa":                                "WS",
	"san marino":                           "SM",
	"sao tome and principe":                "ST",
	"saudi arabia":                         "SA",
	"senegal":                              "SN",
	"serbia":                               "RS",
	"seychelles":                           "SC",
	"sierra leone":                         "SL",
	"singapore":                            "SG",
	"sint maarten":                         "SX",
	"slovakia":                             "SK",
	"slovenia":                             "SI",
	"solomon islands":                      "SB",
	"somalia":                              "SO",
	"south africa":                         "ZA",
	"south georgia and south sandwich is.": "GS",
	"south korea":                          "KR",
	"south sudan":                          "SS",
	"spain":                                "ES",
	"sri lanka":                            "LK",
	"st. helena":                           "SH",
	"st. kitts and nevis":                  "KN",
	"st. lucia":                            "LC",
	"st. pierre and miquelon":              "PM",
	"st. vincent and the grenadines":       "VC",
	"sudan":                                "SD",
	"suriname":                             "SR",
	"svalbard":                             "SJ",
	"svalbard and jan mayen islands":       "SJ",
	"swaziland":                            "SZ",
	"sweden":                               "SE",
	"switzerland":                          "CH",
	"syria":                                "SY",
	"taiwan":                               "TW",
	"tajikistan":                           "TJ",
	"tanzania":                             "TZ",
	"thailand":                             "TH",
	"timor-leste":                          "TL",
	"togo":                                 "TG",
	"tokelau":                              "TK",
	"tonga":                                "TO",
	"trinidad and tobago":                  "TT",
	"tromelin island":                      "TF",
	"tunisia":                              "TN",
	"turkey":                               "TR",
	"turkmenistan":                         "TM",
	"turks and caicos islands":             "TC",
	"tuvalu":                               "TV",
	"uganda":                               "UG",
	"ukraine":                              "UA",
	"united arab emirates":                 "AE",
	"united kingdom":                       "GB",
	"united states":                        "US",
	"united states virgin islands":         "VI",
	"uruguay":                              "UY",
	"uzbekistan":                           "UZ",
	"vanuatu":                              "VU",
	"vatican city":                         "VA",
	"venezuela":                            "VE",
	"vietnam":                              "VN",
	"virgin islands":                       "VI",
	"wake island":                          "UM",
	"wallis and futuna":                    "WF",
	"wallis and futuna islands":            "WF",
	"west bank":                            "PS",
	"western sahara":                       "EH",
	"yemen":                                "YE",
	"zambia":                               "ZM",
	"zimbabwe":                             "ZW",
}
