package domain

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDecideCSD(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	base := func() SubmitCSD {
		return SubmitCSD{CSDSubmitted: CSDSubmitted{AWBNumber: "020-00000011", ScreeningResult: "pass", SubmittedAt: now},
			ScreeningMethod: "xry", ScreeningDate: "2026-11-25T10:00:00Z"}
	}
	tests := []struct {
		name   string
		change func(c *SubmitCSD)
		status string // the status recorded, or the first problem's code and field
	}{
		{"screened", func(*SubmitCSD) {}, "SPX"},
		{"several methods", func(c *SubmitCSD) { c.ScreeningMethod = ""; c.ScreeningMethods = []string{"EDD", "etd", "EDD"} }, "SPX"},
		{"failed is NSC", func(c *SubmitCSD) { c.ScreeningResult = "fail" }, "NSC"},
		{"exempt mail", func(c *SubmitCSD) {
			c.ScreeningMethod, c.ScreeningResult, c.ScreeningDate, c.Exemption = "", "", "", "MAIL"
		}, "SPX"},
		{"failed but secure", func(c *SubmitCSD) { c.ScreeningResult, c.SecurityStatus = "fail", "SHR" }, "INVALID_SECURITY_STATUS securityStatus"},
		{"secure unscreened", func(c *SubmitCSD) { c.ScreeningMethod, c.ScreeningResult = "", "" }, "INVALID_SCREENING_RESULT screeningResult"},
		{"unknown exemption", func(c *SubmitCSD) { c.Exemption = "VIP" }, "INVALID_EXEMPTION exemption"},
		{"future screening", func(c *SubmitCSD) { c.ScreeningDate = "2026-11-25T14:00:00Z" }, "INVALID_DATE screeningDate"},
		{"screening date not a date", func(c *SubmitCSD) { c.ScreeningDate = "25/11/2026" }, "INVALID_DATE screeningDate"},
		{"screening date zero", func(c *SubmitCSD) { c.ScreeningDate = "0001-01-01T00:00:00Z" }, "INVALID_DATE screeningDate"},
		{"no screening date", func(c *SubmitCSD) { c.ScreeningDate = "" }, "REQUIRED screeningDate"},
		{"not secured, not screened yet", func(c *SubmitCSD) {
			c.SecurityStatus, c.ScreeningMethod, c.ScreeningResult, c.ScreeningDate = "NSC", "", "", ""
		}, "NSC"},
		{"failed, no screening date", func(c *SubmitCSD) { c.ScreeningResult, c.ScreeningDate = "fail", "" }, "REQUIRED screeningDate"},
		{"not secure after a screening, no date", func(c *SubmitCSD) {
			c.SecurityStatus, c.ScreeningResult, c.ScreeningDate = "NSC", "", ""
		}, "REQUIRED screeningDate"},
		{"unknown status", func(c *SubmitCSD) { c.SecurityStatus = "SAFE" }, "INVALID_SECURITY_STATUS securityStatus"},
		{"unknown result", func(c *SubmitCSD) { c.ScreeningResult = "maybe" }, "INVALID_SCREENING_RESULT screeningResult"},
		{"unknown method", func(c *SubmitCSD) { c.ScreeningMethod = "SNIFF" }, "INVALID_SCREENING_METHOD screeningMethod"},
		{"unknown method in the list", func(c *SubmitCSD) { c.ScreeningMethods = []string{"XRY", "ASK"} }, "INVALID_SCREENING_METHOD screeningMethods[1]"},
		{"regulated entity category too long", func(c *SubmitCSD) {
			c.RegulatedEntity = &RegulatedEntity{Category: "REGULATED-AGENT", Identifier: "DE/RA/0001"}
		}, "TOO_LONG regulatedEntity.category"},
		{"regulated entity identifier too long", func(c *SubmitCSD) {
			c.RegulatedEntity = &RegulatedEntity{Category: "RA", Identifier: strings.Repeat("9", 51)}
		}, "TOO_LONG regulatedEntity.identifier"},
		{"regulated entity without identifier", func(c *SubmitCSD) {
			c.RegulatedEntity = &RegulatedEntity{Category: "RA"}
		}, "REQUIRED regulatedEntity.identifier"},
		{"regulated entity without category", func(c *SubmitCSD) {
			c.RegulatedEntity = &RegulatedEntity{Category: " ", Identifier: "DE/RA/0001"}
		}, "REQUIRED regulatedEntity.category"},
		{"a method for each item of a long list", func(c *SubmitCSD) {
			c.ScreeningMethod = ""
			c.ScreeningMethods = slices.Repeat([]string{"XRY"}, 21)
		}, "TOO_MANY screeningMethods"},
		{"a screening date with a fraction no clock has", func(c *SubmitCSD) {
			c.ScreeningDate = "2026-11-25T10:00:00." + strings.Repeat("0", 20) + "Z"
		}, "INVALID_DATE screeningDate"},
		{"a screening date to the nanosecond, in another zone", func(c *SubmitCSD) { c.ScreeningDate = "2026-11-25T10:00:00.123456789+01:00" }, "SPX"},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, err := DecideCSD(c)
		got := ""
		if err == nil {
			got = events[0].(CSDSubmitted).SecurityStatus
		} else {
			got = problemOf(err)
		}
		if got != tt.status {
			t.Errorf("%s = %q (%v), want %q", tt.name, got, err, tt.status)
		}
	}
}

// An e-CSD filed for a shipment set to fly (its confirmed booking's
// flight, or a flight whose manifest loads it) tells the airline what a
// manifest would now refuse: cargo not secured goes on no flight, cargo
// secured for cargo aircraft only on no passenger aircraft.
func TestAnECSDFiledForAShipmentSetToFlySaysWhatTheAirlineMustDo(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	freighter := Flight{ID: "LH8400-2026-11-26", AircraftType: "B77F"}
	passenger := Flight{ID: "LH400-2026-11-26", AircraftType: "A359"}
	for _, tt := range []struct {
		name     string
		status   string
		carriers []Flight
		want     string
	}{
		{"secured, on a passenger aircraft", "SPX", []Flight{passenger}, ""},
		{"not secured, booked on nothing", "NSC", nil, ""},
		{"not secured, on a freighter", "NSC", []Flight{freighter},
			"the shipment is not secured (NSC), and is set to fly on LH8400-2026-11-26: take it off until an e-CSD says it is secured"},
		{"for cargo aircraft only, on a freighter", "SCO", []Flight{freighter}, ""},
		{"for cargo aircraft only, on a freighter and a passenger aircraft", "SCO", []Flight{freighter, passenger},
			"the shipment is secured for cargo aircraft only (SCO), and is set to fly on LH400-2026-11-26, a passenger aircraft (A359): move it to a freighter"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := SubmitCSD{CSDSubmitted: CSDSubmitted{AWBNumber: "020-00000011", SecurityStatus: tt.status, ScreeningResult: "pass", SubmittedAt: now},
				ScreeningMethod: "xry", ScreeningDate: "2026-11-25T10:00:00Z", Carriers: tt.carriers}
			if tt.status == "NSC" {
				c.ScreeningMethod, c.ScreeningResult, c.ScreeningDate = "", "", ""
			}
			events, err := DecideCSD(c)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(events[0].(CSDSubmitted).ReviewNotes, "; "); got != tt.want {
				t.Errorf("review notes %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecidePLACI(t *testing.T) {
	base := func() PLACISubmitted {
		return PLACISubmitted{AWBNumber: "020-00000011", Origin: "fra", Destination: "JFK", DepartureDate: "2026-11-26",
			CargoDescription: "Machine parts, steel", ShipperName: "Shipper", ConsigneeName: "Consignee",
			SubmittedAt: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	}
	long := strings.Repeat("x", 2001)
	tests := []struct {
		name   string
		change func(c *PLACISubmitted)
		want   string // the first problem's code and field, or "" when accepted
	}{
		{"complete", func(*PLACISubmitted) {}, ""},
		{"with addresses, pieces and weight", func(c *PLACISubmitted) {
			c.ShipperAddress, c.ConsigneeAddress, c.Pieces, c.WeightKg = "Frankfurt", "New York", new(3), new(120.5)
		}, ""},
		{"no origin", func(c *PLACISubmitted) { c.Origin = "" }, "REQUIRED origin"},
		{"no destination", func(c *PLACISubmitted) { c.Destination = " " }, "REQUIRED destination"},
		{"destination not a code", func(c *PLACISubmitted) { c.Destination = "NYC1" }, "INVALID_FORMAT destination"},
		{"unknown origin", func(c *PLACISubmitted) { c.Origin = "XXX" }, "UNKNOWN_AIRPORT origin"},
		{"no departure date", func(c *PLACISubmitted) { c.DepartureDate = "" }, "REQUIRED departureDate"},
		{"departure date with time", func(c *PLACISubmitted) { c.DepartureDate = "2026-11-26T10:00:00Z" }, "INVALID_DATE departureDate"},
		{"no description", func(c *PLACISubmitted) { c.CargoDescription = "" }, "REQUIRED cargoDescription"},
		{"vague description", func(c *PLACISubmitted) { c.CargoDescription = "Consolidation" }, "INVALID_VALUE cargoDescription"},
		{"vague description, spaced", func(c *PLACISubmitted) { c.CargoDescription = "  general   CARGO " }, "INVALID_VALUE cargoDescription"},
		{"vague description, punctuated", func(c *PLACISubmitted) { c.CargoDescription = "FAK." }, "INVALID_VALUE cargoDescription"},
		{"vague description, hyphenated", func(c *PLACISubmitted) { c.CargoDescription = "General-Cargo!" }, "INVALID_VALUE cargoDescription"},
		{"vague description, quoted", func(c *PLACISubmitted) { c.CargoDescription = `"parts"` }, "INVALID_VALUE cargoDescription"},
		{"FAK written out", func(c *PLACISubmitted) { c.CargoDescription = "Freight All Kinds" }, "INVALID_VALUE cargoDescription"},
		{"FAK written out with of", func(c *PLACISubmitted) { c.CargoDescription = "freight of all kinds" }, "INVALID_VALUE cargoDescription"},
		{"consolidated", func(c *PLACISubmitted) { c.CargoDescription = "CONSOLIDATED" }, "INVALID_VALUE cargoDescription"},
		{"parts described, punctuated", func(c *PLACISubmitted) { c.CargoDescription = "Car parts: brake discs." }, ""},
		{"a letter", func(c *PLACISubmitted) { c.CargoDescription = "x" }, "INVALID_VALUE cargoDescription"},
		{"no letters", func(c *PLACISubmitted) { c.CargoDescription = "1234 / 56" }, "INVALID_VALUE cargoDescription"},
		{"tea leaves, in Chinese", func(c *PLACISubmitted) { c.CargoDescription = "茶叶" }, ""},
		{"same origin and destination", func(c *PLACISubmitted) { c.Destination = "FRA" }, "INVALID_VALUE destination"},
		{"departure long ago", func(c *PLACISubmitted) { c.DepartureDate = "1900-01-01" }, "INVALID_DATE departureDate"},
		{"departure far ahead", func(c *PLACISubmitted) { c.DepartureDate = "2026-12-26" }, "INVALID_DATE departureDate"},
		{"departure a month ahead", func(c *PLACISubmitted) { c.DepartureDate = "2026-12-25" }, ""},
		{"departure yesterday", func(c *PLACISubmitted) { c.DepartureDate = "2026-11-24" }, ""},
		{"description too long", func(c *PLACISubmitted) { c.CargoDescription = long }, "TOO_LONG cargoDescription"},
		{"no shipper", func(c *PLACISubmitted) { c.ShipperName = "" }, "REQUIRED shipperName"},
		{"no consignee", func(c *PLACISubmitted) { c.ConsigneeName = "  " }, "REQUIRED consigneeName"},
		{"consignee name too long", func(c *PLACISubmitted) { c.ConsigneeName = long }, "TOO_LONG consigneeName"},
		{"shipper address too long", func(c *PLACISubmitted) { c.ShipperAddress = long }, "TOO_LONG shipperAddress"},
		{"consignee address too long", func(c *PLACISubmitted) { c.ConsigneeAddress = long }, "TOO_LONG consigneeAddress"},
		{"no pieces", func(c *PLACISubmitted) { c.Pieces = new(0) }, "INVALID_RANGE pieces"},
		{"negative weight", func(c *PLACISubmitted) { c.WeightKg = new(-3.0) }, "INVALID_RANGE weight"},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, err := DecidePLACI(c, Journey{}, knownAirports{})
		if got := problemOf(err); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
			continue
		}
		if err == nil && events[0].(PLACISubmitted).Origin != "FRA" {
			t.Errorf("%s: recorded %+v", tt.name, events[0])
		}
	}
}

func TestCheckCSDFiler(t *testing.T) {
	shipment := ShipmentOwnership{AWBNumber: "020-00000011", BookedBy: "f1"}
	notYours := "forbidden: 020-00000011 is not a shipment of yours: file for the AWB numbers you booked, waybilled or hold in stock"
	notAFiler := "forbidden: an e-CSD for 020-00000011 is filed by a forwarder or the airline with prefix 020"
	tests := []struct {
		name string
		p    Principal
		want string
	}{
		{"the forwarder the shipment is of files it, as regulated agent", Principal{OrganizationID: "f1", Role: RoleForwarder}, ""},
		{"another forwarder may file e-CSDs, but not for this shipment", Principal{OrganizationID: "f2", Role: RoleForwarder}, notYours},
		{"the airline of the prefix files it", Principal{OrganizationID: "lh", Role: RoleAirline, AWBPrefix: "020"}, ""},
		{"an airline of another prefix does not", Principal{OrganizationID: "ek", Role: RoleAirline, AWBPrefix: "176"}, notAFiler},
		{"an admin does not", Principal{OrganizationID: "ops", Role: RoleAdmin}, notAFiler},
	}
	for _, tt := range tests {
		if got := errText(CheckCSDFiler(tt.p, shipment)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
