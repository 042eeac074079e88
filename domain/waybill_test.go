package domain

import (
	"strings"
	"testing"
	"time"
)

func TestDecideCreateHAWB(t *testing.T) {
	master := Waybills{MAWB: &MAWBCreated{AWBNumber: "020-00000011", OrganizationID: "f", Pieces: 10, WeightKg: 500},
		HAWBs: []HAWBCreated{{HAWBNumber: "H1", Pieces: 6, WeightKg: 300}}}
	party := FullParty{Name: "x"}
	tests := []struct {
		name   string
		w      Waybills
		c      CreateHAWB
		fields string // the first problem's field and code, or "" for success
	}{
		{"fits", master, CreateHAWB{HAWBNumber: "h2", OrganizationID: "f", Pieces: new(4), WeightKg: new(200.0), Shipper: party, Consignee: party}, ""},
		{"too many pieces", master, CreateHAWB{HAWBNumber: "H2", OrganizationID: "f", Pieces: new(5), WeightKg: new(1.0), Shipper: party, Consignee: party}, "pieces EXCEEDS_MAWB"},
		{"too heavy", master, CreateHAWB{HAWBNumber: "H2", OrganizationID: "f", Pieces: new(1), WeightKg: new(201.0), Shipper: party, Consignee: party}, "weight EXCEEDS_MAWB"},
		{"another forwarder's master", master, CreateHAWB{HAWBNumber: "H2", OrganizationID: "g", Pieces: new(1), WeightKg: new(1.0), Shipper: party, Consignee: party}, "mawbNumber UNKNOWN_MAWB"},
		{"no master", Waybills{}, CreateHAWB{HAWBNumber: "H2", OrganizationID: "f", Pieces: new(1), WeightKg: new(1.0), Shipper: party, Consignee: party}, "mawbNumber UNKNOWN_MAWB"},
		{"bad number", master, CreateHAWB{HAWBNumber: "H-2", OrganizationID: "f", Pieces: new(1), WeightKg: new(1.0), Shipper: party, Consignee: party}, "hawbNumber INVALID_FORMAT"},
		{"no pieces", master, CreateHAWB{HAWBNumber: "H2", OrganizationID: "f", WeightKg: new(1.0), Shipper: party, Consignee: party}, "pieces REQUIRED"},
		{"no weight", master, CreateHAWB{HAWBNumber: "H2", OrganizationID: "f", Pieces: new(1), Shipper: party, Consignee: party}, "weight REQUIRED"},
		{"weight out of range", master, CreateHAWB{HAWBNumber: "H2", OrganizationID: "f", Pieces: new(1), WeightKg: new(-1.0), Shipper: party, Consignee: party}, "weight INVALID_RANGE"},
		{"consignee unnamed", master, CreateHAWB{HAWBNumber: "H2", OrganizationID: "f", Pieces: new(1), WeightKg: new(1.0), Shipper: party}, "consignee.name REQUIRED"},
		{"shipper address too long", master, CreateHAWB{HAWBNumber: "H2", OrganizationID: "f", Pieces: new(1), WeightKg: new(1.0),
			Shipper: FullParty{Name: "x", Address: strings.Repeat("x", 501)}, Consignee: party}, "shipper.address TOO_LONG"},
	}
	for _, tt := range tests {
		events, err := DecideCreateHAWB(tt.w, tt.c)
		got := ""
		if e, ok := err.(*Error); ok {
			got = e.Fields[0].Field + " " + string(e.Fields[0].Code)
		}
		if got != tt.fields || (tt.fields == "" && len(events) != 1) {
			t.Errorf("%s: = %q, %v; want %q", tt.name, got, err, tt.fields)
		}
	}
	if _, err := DecideCreateHAWB(master, CreateHAWB{HAWBNumber: "H1", OrganizationID: "f", Pieces: new(1), WeightKg: new(1.0), Shipper: party, Consignee: party}); ErrorCode(err) != Conflict {
		t.Errorf("a repeated house = %v", err)
	}
}

// knownAirports is reference data that knows a few airports and nothing else.
type knownAirports struct{ Lookup }

func (knownAirports) Airport(code string) (Airport, bool) {
	if code != "FRA" && code != "JFK" {
		return Airport{}, false
	}
	return Airport{IATACode: code}, true
}

func TestDecideCreateMAWB(t *testing.T) {
	long := strings.Repeat("x", 501)
	base := func() CreateMAWB {
		return CreateMAWB{AWBNumber: "020-00000011", OrganizationID: "f", Origin: "fra", Destination: "JFK", Pieces: new(2), WeightKg: new(150.0),
			VolumeM3: new(1.0), Commodity: "gen", Shipper: FullParty{Name: " Shipper "}, Consignee: FullParty{Name: "Consignee", Contact: "ops@consignee.example\n"}}
	}
	tests := []struct {
		name   string
		change func(c *CreateMAWB)
		want   string // the first problem's code and field, or "" when accepted
	}{
		{"complete", func(*CreateMAWB) {}, ""},
		{"no volume", func(c *CreateMAWB) { c.VolumeM3 = nil }, ""},
		{"no origin", func(c *CreateMAWB) { c.Origin = " " }, "REQUIRED origin"},
		{"no destination", func(c *CreateMAWB) { c.Destination = "" }, "REQUIRED destination"},
		{"origin of four letters", func(c *CreateMAWB) { c.Origin = "EDDF" }, "INVALID_FORMAT origin"},
		{"unknown airport", func(c *CreateMAWB) { c.Destination = "XXX" }, "UNKNOWN_AIRPORT destination"},
		{"round trip", func(c *CreateMAWB) { c.Destination = "FRA" }, "INVALID_VALUE destination"},
		{"no pieces", func(c *CreateMAWB) { c.Pieces = nil }, "REQUIRED pieces"},
		{"no pieces at all", func(c *CreateMAWB) { c.Pieces = new(0) }, "INVALID_RANGE pieces"},
		{"no weight", func(c *CreateMAWB) { c.WeightKg = nil }, "REQUIRED weight"},
		{"weightless", func(c *CreateMAWB) { c.WeightKg = new(0.0) }, "INVALID_RANGE weight"},
		{"negative volume", func(c *CreateMAWB) { c.VolumeM3 = new(-1.0) }, "INVALID_RANGE volume"},
		{"commodity too long", func(c *CreateMAWB) { c.Commodity = strings.Repeat("A", 21) }, "TOO_LONG commodity"},
		{"commodity that is no code", func(c *CreateMAWB) { c.Commodity = "machine parts" }, "INVALID_FORMAT commodity"},
		{"shipper unnamed", func(c *CreateMAWB) { c.Shipper.Name = "" }, "REQUIRED shipper.name"},
		{"consignee unnamed", func(c *CreateMAWB) { c.Consignee.Name = "\t" }, "REQUIRED consignee.name"},
		{"shipper name too long", func(c *CreateMAWB) { c.Shipper.Name = long }, "TOO_LONG shipper.name"},
		{"consignee address too long", func(c *CreateMAWB) { c.Consignee.Address = long }, "TOO_LONG consignee.address"},
		{"shipper contact too long", func(c *CreateMAWB) { c.Shipper.Contact = long }, "TOO_LONG shipper.contact"},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, err := DecideCreateMAWB(Waybills{}, c, knownAirports{})
		if got := problemOf(err); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
			continue
		}
		if err == nil {
			if m := events[0].(MAWBCreated); m.Origin != "FRA" || m.Commodity != "GEN" || m.Pieces != 2 || m.Shipper.Name != "Shipper" ||
				m.Consignee.Contact != "ops@consignee.example" {
				t.Errorf("%s: recorded %+v", tt.name, m)
			}
		}
	}
	if _, err := DecideCreateMAWB(Waybills{MAWB: &MAWBCreated{}}, base(), knownAirports{}); ErrorCode(err) != Conflict {
		t.Errorf("a repeated master = %v", err)
	}
}

func TestAWaybillOrAPLACIOfABookedAWBGoesTheJourneyBooked(t *testing.T) {
	tests := []struct {
		name                string
		booked              Journey
		origin, destination string
		want                string // the error's message, or "" when accepted
	}{
		{"an AWB number without a booking", Journey{}, "FRA", "JFK", ""},
		{"the journey booked", Journey{Origin: "FRA", Destination: "JFK"}, "fra", "jfk", ""},
		{"another destination", Journey{Origin: "FRA", Destination: "ORD"}, "FRA", "JFK", "destination: must be the booking's destination, ORD"},
		{"another origin", Journey{Origin: "MUC", Destination: "JFK"}, "FRA", "JFK", "origin: must be the booking's origin, MUC"},
		{"the journey the other way round", Journey{Origin: "FRA", Destination: "JFK"}, "JFK", "FRA",
			"origin: must be the booking's origin, FRA (and 1 more)"},
		{"an unknown airport, which is only that", Journey{Origin: "FRA", Destination: "ORD"}, "FRA", "XXX",
			"destination: XXX is not a known airport"},
	}
	for _, tt := range tests {
		mawb := CreateMAWB{AWBNumber: "020-00000022", OrganizationID: "f", Booked: tt.booked, Origin: tt.origin, Destination: tt.destination,
			Pieces: new(7), WeightKg: new(1000.0), Commodity: "AVI", Shipper: FullParty{Name: "Shipper"}, Consignee: FullParty{Name: "Consignee"}}
		_, err := DecideCreateMAWB(Waybills{}, mawb, knownAirports{})
		if got := messageOf(err); got != tt.want {
			t.Errorf("%s: the MAWB = %q, want %q", tt.name, got, tt.want)
		}
		placi := PLACISubmitted{AWBNumber: "020-00000022", Origin: tt.origin, Destination: tt.destination, DepartureDate: "2026-11-26",
			CargoDescription: "Machine parts, steel", ShipperName: "Shipper", ConsigneeName: "Consignee",
			SubmittedAt: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
		_, err = DecidePLACI(placi, tt.booked, knownAirports{})
		if got := messageOf(err); got != tt.want {
			t.Errorf("%s: the PLACI = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// messageOf is an error's message, "" for none.
func messageOf(err error) string {
	if err == nil {
		return ""
	}
	return ErrorMessage(err)
}
