package domain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Field codes of the e-CSD.
const (
	CodeInvalidSecurityStatus  FieldCode = "INVALID_SECURITY_STATUS"
	CodeInvalidScreeningResult FieldCode = "INVALID_SCREENING_RESULT"
	CodeInvalidExemption       FieldCode = "INVALID_EXEMPTION"
)

// Security statuses of an e-CSD that limit where cargo may fly: secured
// for cargo aircraft only, and not secured (no aircraft).
const (
	securedForCargoAircraftOnly = "SCO"
	notSecured                  = "NSC"
)

// e-CSD code lists (DESIGN §3).
var (
	securityStatuses = []string{"SPX", securedForCargoAircraftOnly, "SHR", notSecured}
	screeningMethods = []string{"PHS", "VCK", "XRY", "EDS", "EDD", "ETD", "CMD", "AOM"}
	screeningResults = []string{"PASS", "FAIL"}
	exemptionCodes   = []string{"BIOM", "DIPL", "LFSM", "MAIL", "NUCL", "SMUS", "TRNS"}
)

// vagueDescriptions are labels, not descriptions of goods: PLACI regimes
// refuse them. FAK is written out both ways, "freight all kinds" the
// more usual, and a consolidation is also declared "consolidated".
var vagueDescriptions = []string{"consolidation", "consolidated", "consol", "general cargo", "gen", "freight of all kinds", "freight all kinds", "fak", "said to contain", "stc", "parts", "goods"}

// letters counts the letters of s, of any script: "茶叶" (tea) is a
// description, "x" or "1234" is not.
func letters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}

// placiDaysAround is how far from today a PLACI's departure date may be.
const placiDaysAround = 30

// PLACISubmitted records pre-loading advance cargo information.
type PLACISubmitted struct {
	PLACIID          string    `json:"placiId"`
	AWBNumber        string    `json:"awbNumber"`
	OrganizationID   string    `json:"organizationId"`
	Origin           string    `json:"origin"`
	Destination      string    `json:"destination"`
	DepartureDate    string    `json:"departureDate"`
	CargoDescription string    `json:"cargoDescription"`
	ShipperName      string    `json:"shipperName"`
	ShipperAddress   string    `json:"shipperAddress,omitempty"`
	ConsigneeName    string    `json:"consigneeName"`
	ConsigneeAddress string    `json:"consigneeAddress,omitempty"`
	Pieces           *int      `json:"pieces,omitempty"`
	WeightKg         *float64  `json:"weight,omitempty"`
	SubmittedAt      time.Time `json:"submittedAt"`
}

func (PLACISubmitted) EventType() string { return "PLACISubmitted" }

// DecidePLACI checks the elements PLACI regimes require: shipper and
// consignee names, a description of the goods, origin, destination and
// departure date; origin and destination are those of the journey booked
// for the AWB number, if it has one.
func DecidePLACI(c PLACISubmitted, booked Journey, ref Lookup) ([]Event, error) {
	var p Problems
	c.Origin, c.Destination = strings.ToUpper(strings.TrimSpace(c.Origin)), strings.ToUpper(strings.TrimSpace(c.Destination))
	from, to := checkRoute(&p, ref, "", c.Origin, c.Destination)
	booked.checkBooked(&p, from, to)
	// PLACI is filed before loading: the flight leaves within days, or
	// left lately when the filing is late.
	if d, err := time.Parse(time.DateOnly, c.DepartureDate); c.DepartureDate == "" {
		p.Add("departureDate", CodeRequired, "is required")
	} else if err != nil {
		p.Add("departureDate", CodeInvalidDate, "must be a date as YYYY-MM-DD")
	} else if day := c.SubmittedAt.Truncate(24 * time.Hour); d.Before(day.AddDate(0, 0, -placiDaysAround)) || d.After(day.AddDate(0, 0, placiDaysAround)) {
		p.Add("departureDate", CodeInvalidDate, "must be within %d days of today", placiDaysAround)
	}
	for _, f := range []struct{ field, value string }{{"cargoDescription", c.CargoDescription}, {"shipperName", c.ShipperName}, {"consigneeName", c.ConsigneeName}} {
		if strings.TrimSpace(f.value) == "" {
			p.Add(f.field, CodeRequired, "is required")
		}
	}
	// A vague description ("consolidation", "general cargo") is what
	// PLACI regimes refuse; ask for words, not a label.
	// Punctuation around or between the words makes no label a
	// description: "FAK.", "general-cargo", "\"parts\"".
	d := strings.ToLower(strings.Join(strings.Fields(c.CargoDescription), " "))
	words := strings.Join(strings.FieldsFunc(d, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }), " ")
	switch {
	case d == "":
	case slices.Contains(vagueDescriptions, words):
		p.Add("cargoDescription", CodeInvalidValue, "must describe the goods precisely, not %q", d)
	case letters(d) < 2:
		p.Add("cargoDescription", CodeInvalidValue, "must describe the goods in words")
	}
	checkLength(&p, "cargoDescription", c.CargoDescription, maxNotes)
	for _, f := range []struct{ field, value string }{{"shipperName", c.ShipperName}, {"consigneeName", c.ConsigneeName}} {
		checkLength(&p, f.field, f.value, maxText)
	}
	checkLength(&p, "shipperAddress", c.ShipperAddress, 500)
	checkLength(&p, "consigneeAddress", c.ConsigneeAddress, 500)
	if c.Pieces != nil && (*c.Pieces < 1 || *c.Pieces > maxPieces) {
		p.Add("pieces", CodeInvalidRange, "must be 1 to %d", maxPieces)
	}
	if c.WeightKg != nil && !(*c.WeightKg > 0 && *c.WeightKg <= maxWeightKg) {
		p.Add("weight", CodeInvalidRange, "must be more than 0 and at most %d kg", maxWeightKg)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return []Event{c}, nil
}

// RegulatedEntity identifies who screened or secured the cargo.
type RegulatedEntity struct {
	Category   string `json:"category"`   // RA, KC, AO, …
	Identifier string `json:"identifier"` // the approval number
}

// CSDSubmitted records an electronic consignment security declaration.
type CSDSubmitted struct {
	CSDID            string           `json:"csdId"`
	AWBNumber        string           `json:"awbNumber"`
	OrganizationID   string           `json:"organizationId"`
	SecurityStatus   string           `json:"securityStatus"`
	ScreeningMethods []string         `json:"screeningMethods"`
	ScreeningDate    time.Time        `json:"screeningDate"`
	ScreeningResult  string           `json:"screeningResult"`
	Exemption        string           `json:"exemption,omitempty"`
	RegulatedEntity  *RegulatedEntity `json:"regulatedEntity,omitempty"`
	SubmittedAt      time.Time        `json:"submittedAt"`
	ReviewNotes      []string         `json:"reviewNotes,omitempty"` // what the airline must act on (see DecideCSD)
}

func (CSDSubmitted) EventType() string { return "CSDSubmitted" }

// SubmitCSD is an e-CSD as posted: the spec's single screeningMethod, or
// the richer screeningMethods list.
type SubmitCSD struct {
	CSDSubmitted
	ScreeningMethod string
	ScreeningDate   string
	Carriers        []Flight // the flights the shipment is set to fly on (ManifestFacts.Carriers)
}

// DecideCSD checks an e-CSD against the code lists: a secure status (SPX,
// SCO, SHR) needs a passed screening by a listed method, or an exemption;
// a failed screening can only be NSC.
func DecideCSD(c SubmitCSD) ([]Event, error) {
	var p Problems
	e := c.CSDSubmitted
	e.SecurityStatus = strings.ToUpper(strings.TrimSpace(e.SecurityStatus))
	e.ScreeningResult = strings.ToUpper(strings.TrimSpace(e.ScreeningResult))
	e.Exemption = strings.ToUpper(strings.TrimSpace(e.Exemption))
	// The spec's single screeningMethod comes first; each problem names the
	// field as the request has it.
	type method struct{ field, code string }
	var methods []method
	if c.ScreeningMethod != "" {
		methods = append(methods, method{"screeningMethod", c.ScreeningMethod})
	}
	for i, m := range e.ScreeningMethods {
		methods = append(methods, method{"screeningMethods[" + strconv.Itoa(i) + "]", m})
	}
	e.ScreeningMethods = nil
	if len(methods) > maxListItems {
		p.Add("screeningMethods", CodeTooMany, "must have at most %d items", maxListItems)
		methods = nil
	}
	for _, m := range methods {
		code := strings.ToUpper(strings.TrimSpace(m.code))
		if !slices.Contains(screeningMethods, code) {
			p.Add(m.field, "INVALID_SCREENING_METHOD", "must be one of %s", strings.Join(screeningMethods, ", "))
		} else if !slices.Contains(e.ScreeningMethods, code) {
			e.ScreeningMethods = append(e.ScreeningMethods, code)
		}
	}
	if e.SecurityStatus == "" {
		e.SecurityStatus = "SPX" // the spec's e-CSD names no status: secured for passenger and cargo aircraft
		if e.ScreeningResult == "FAIL" {
			e.SecurityStatus = notSecured
		}
	}
	if !slices.Contains(securityStatuses, e.SecurityStatus) {
		p.Add("securityStatus", CodeInvalidSecurityStatus, "must be SPX, SCO, SHR or NSC")
	}
	resultOK := e.ScreeningResult == "" || slices.Contains(screeningResults, e.ScreeningResult)
	if !resultOK {
		p.Add("screeningResult", CodeInvalidScreeningResult, "must be pass or fail")
	}
	if e.Exemption != "" && !slices.Contains(exemptionCodes, e.Exemption) {
		p.Add("exemption", CodeInvalidExemption, "must be one of %s", strings.Join(exemptionCodes, ", "))
	}
	secure := e.SecurityStatus != notSecured
	switch {
	case e.ScreeningResult == "FAIL" && secure:
		p.Add("securityStatus", CodeInvalidSecurityStatus, "cargo that failed screening is NSC")
	case secure && resultOK && e.Exemption == "" && (len(methods) == 0 || e.ScreeningResult != "PASS"):
		p.Add("screeningResult", CodeInvalidScreeningResult, "a secure status (%s) needs a passed screening by a listed method, or an exemption", e.SecurityStatus)
	}
	if c.ScreeningDate == "" {
		// A screening has a date; cargo declared not secure (NSC) that
		// no one screened yet, like exempt cargo, has none to give.
		if screened := len(methods) > 0 || e.ScreeningResult != ""; e.Exemption == "" && (secure || screened) {
			p.Add("screeningDate", CodeRequired, "is required")
		}
	} else {
		e.ScreeningDate = pastDateTime(&p, "screeningDate", c.ScreeningDate, e.SubmittedAt)
	}
	if r := e.RegulatedEntity; r != nil {
		for _, f := range []struct {
			field, value string
			max          int
		}{{"regulatedEntity.category", r.Category, 10}, {"regulatedEntity.identifier", r.Identifier, 50}} {
			if strings.TrimSpace(f.value) == "" {
				p.Add(f.field, CodeRequired, "is required: a regulated entity is known by its category and approval number")
			}
			checkLength(&p, f.field, f.value, f.max)
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	// Filed after its shipment was booked or manifested: the declaration
	// is filed, as the e-DGD's is, and the airline is told what a manifest
	// would now refuse (see ManifestCandidate): cargo not secured goes on
	// no flight, cargo secured for cargo aircraft only on no passenger
	// aircraft. Before, nothing said so of cargo already loaded.
	for _, f := range c.Carriers {
		switch {
		case e.SecurityStatus == notSecured:
			e.ReviewNotes = append(e.ReviewNotes, fmt.Sprintf("the shipment is not secured (NSC), and is set to fly on %s: "+
				"take it off until an e-CSD says it is secured", f.ID))
		case e.SecurityStatus == securedForCargoAircraftOnly && f.PassengerAircraft():
			e.ReviewNotes = append(e.ReviewNotes, fmt.Sprintf("the shipment is secured for cargo aircraft only (SCO), and is set to fly on %s, "+
				"a passenger aircraft (%s): move it to a freighter", f.ID, f.AircraftType))
		}
	}
	return []Event{e}, nil
}

// Compliance is a shipment's declarations: PLACI filings and e-CSDs, the
// latest of each kind standing, and its e-DGDs, one per dangerous good.
type Compliance struct {
	PLACI *PLACISubmitted
	CSD   *CSDSubmitted
	DGDs  []DGDSubmitted
}

// EvolveCompliance applies an event to a shipment's declarations.
func EvolveCompliance(c Compliance, e Event) Compliance {
	switch e := e.(type) {
	case PLACISubmitted:
		c.PLACI = &e
	case CSDSubmitted:
		c.CSD = &e
	case DGDSubmitted:
		c.DGDs = append(c.DGDs[:len(c.DGDs):len(c.DGDs)], e)
	}
	return c
}

// CheckCSDFiler: an e-CSD is filed by a forwarder (as regulated agent),
// for its own shipment only (see ShipmentOwnership.CheckFiler), or by the
// airline of the AWB's prefix.
func CheckCSDFiler(p Principal, shipment ShipmentOwnership) error {
	return shipment.checkOwnerOrAirline(p, "an e-CSD for %s is filed by a forwarder or the airline with prefix %s")
}
