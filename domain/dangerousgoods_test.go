package domain

import (
	"strings"
	"testing"
	"time"
)

// dgRef is reference data holding one dangerous good, as the US DOT table
// names it.
type dgRef struct{ Lookup }

func (dgRef) DangerousGood(un string) (KnownCommodity, bool) {
	c, ok := map[string]KnownCommodity{
		"UN1845": {Name: "Carbon dioxide, solid or Dry ice", HazardClass: "9"},
		"UN1950": {Name: "Aerosols, flammable, (each not exceeding 1 L capacity)", HazardClass: "2.1", HazardClasses: []string{"2.1", "2.2"},
			OtherNames: []string{"Aerosols, non-flammable, (each not exceeding 1 L capacity)"}},
		"UN1088": {Name: "Acetal", HazardClass: "3", PackingGroup: "II"},
		"UN1005": {Name: "Ammonia, anhydrous", HazardClass: "2.2", CargoAircraftForbidden: true},
		"UN1089": {Name: "Acetaldehyde", HazardClass: "3", PackingGroup: "I", PassengerAircraftForbidden: true},
		"UN0004": {Name: "Ammonium picrate, dry", HazardClass: "1.1D", CargoAircraftForbidden: true, PassengerAircraftForbidden: true},
		"UN2814": {Name: "Infectious substances, affecting humans", HazardClass: "6.2"},
		"UN1017": {Name: "Chlorine", HazardClass: "2.3"},
		"UN1935": {Name: "Cyanide solutions, n.o.s.", HazardClass: "6.1", PackingGroup: "I", PackingGroups: []string{"I", "II", "III"}},
	}[un]
	c.Code, c.UNNumber, c.DangerousGoods = un, un, true
	return c, ok
}

func TestDecideDGD(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	num := func(v float64) *float64 { return &v }
	base := func() SubmitDGD {
		return SubmitDGD{DGDSubmitted: DGDSubmitted{AWBNumber: "020-00000011", UNNumber: "un1845", ProperShippingName: "Dry ice",
			Class: "9", PackingInstructions: "954", ShipperDeclaration: "I hereby declare…", SubmittedAt: now},
			Quantity: num(20), NetWeightKg: num(20)}
	}
	tests := []struct {
		name   string
		change func(c *SubmitDGD)
		want   string // the first problem's code and field, or "" when accepted
	}{
		{"dry ice", func(*SubmitDGD) {}, ""},
		{"bare class of a division", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingGroup, c.PackingInstructions = "UN1950", "2", "", "203"
		}, ""},
		{"explosive with compatibility group", func(c *SubmitDGD) { c.UNNumber, c.Class, c.PackingInstructions = "UN0012", "1.4s", "130" }, ""},
		{"limited quantity", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingGroup, c.PackingInstructions, c.LimitedQuantity = "UN1263", "3", "ii", "y341", true
		}, ""},
		{"excepted quantity", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingGroup, c.PackingInstructions, c.ExceptedQuantity = "UN1170", "3", "II", "", true
		}, ""},
		{"no UN number", func(c *SubmitDGD) { c.UNNumber = "" }, "INVALID_UN_NUMBER unNumber"},
		{"UN number short", func(c *SubmitDGD) { c.UNNumber = "UN184" }, "INVALID_UN_NUMBER unNumber"},
		{"NA number", func(c *SubmitDGD) { c.UNNumber = "NA1993" }, "INVALID_UN_NUMBER unNumber"},
		{"UN number 0000", func(c *SubmitDGD) { c.UNNumber = "UN0000" }, "INVALID_UN_NUMBER unNumber"},
		{"no class", func(c *SubmitDGD) { c.Class = "" }, "INVALID_HAZARD_CLASS class"},
		{"class 0", func(c *SubmitDGD) { c.Class = "0" }, "INVALID_HAZARD_CLASS class"},
		{"class 10", func(c *SubmitDGD) { c.Class = "10" }, "INVALID_HAZARD_CLASS class"},
		{"no such division", func(c *SubmitDGD) { c.Class = "3.1" }, "INVALID_HAZARD_CLASS class"},
		{"compatibility group off class 1", func(c *SubmitDGD) { c.Class = "2.1S" }, "INVALID_HAZARD_CLASS class"},
		// Each division of class 1 has its own compatibility groups (UN
		// Model Regulations 2.1.2): there is no 1.4A nor 1.6S.
		{"compatibility group its division has not", func(c *SubmitDGD) { c.Class = "1.4A" }, "INVALID_HAZARD_CLASS class"},
		{"compatibility group of another division", func(c *SubmitDGD) { c.Class = "1.6S" }, "INVALID_HAZARD_CLASS class"},
		{"compatibility group that is none", func(c *SubmitDGD) { c.Class = "1.1I" }, "INVALID_HAZARD_CLASS class"},
		{"packing group for gas", func(c *SubmitDGD) { c.UNNumber, c.Class, c.PackingGroup = "UN1950", "2.1", "II" }, "INVALID_PACKING_GROUP packingGroup"},
		{"packing group for radioactive", func(c *SubmitDGD) { c.UNNumber, c.Class, c.PackingGroup = "UN2910", "7", "I" }, "INVALID_PACKING_GROUP packingGroup"},
		{"packing group for organic peroxide", func(c *SubmitDGD) { c.UNNumber, c.Class, c.PackingGroup = "UN3101", "5.2", "II" }, "INVALID_PACKING_GROUP packingGroup"},
		{"packing group IV", func(c *SubmitDGD) { c.PackingGroup = "IV" }, "INVALID_PACKING_GROUP packingGroup"},
		{"flammable liquid without packing group", func(c *SubmitDGD) { c.UNNumber, c.Class, c.PackingInstructions = "UN1263", "3", "353" }, "REQUIRED packingGroup"},
		{"packing instruction of two digits", func(c *SubmitDGD) { c.PackingInstructions = "95" }, "INVALID_PACKING_INSTRUCTION packingInstructions"},
		{"no packing instruction", func(c *SubmitDGD) { c.PackingInstructions = "" }, "REQUIRED packingInstructions"},
		{"Y instruction not flagged", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingGroup, c.PackingInstructions = "UN1263", "3", "II", "Y341"
		}, "MISMATCH limitedQuantity"},
		{"limited quantity without Y", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingGroup, c.PackingInstructions, c.LimitedQuantity = "UN1263", "3", "II", "353", true
		}, "INVALID_PACKING_INSTRUCTION packingInstructions"},
		{"limited quantity of explosives", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingInstructions, c.LimitedQuantity = "UN0012", "1.4S", "Y130", true
		}, "INVALID_VALUE limitedQuantity"},
		{"limited and excepted", func(c *SubmitDGD) { c.LimitedQuantity, c.ExceptedQuantity = true, true }, "INVALID_VALUE exceptedQuantity"},
		{"excepted with instruction", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingGroup, c.ExceptedQuantity = "UN1170", "3", "II", true
		}, "INVALID_PACKING_INSTRUCTION packingInstructions"},
		{"no quantity", func(c *SubmitDGD) { c.Quantity = nil }, "REQUIRED quantity"},
		{"gross below net", func(c *SubmitDGD) { c.GrossWeightKg = num(10) }, "INVALID_RANGE grossWeight"},
		{"gross weight out of range", func(c *SubmitDGD) { c.GrossWeightKg = num(0) }, "INVALID_RANGE grossWeight"},
		{"no net weight", func(c *SubmitDGD) { c.NetWeightKg = nil }, "REQUIRED netWeight"},
		{"negative net weight", func(c *SubmitDGD) { c.NetWeightKg = num(-20) }, "INVALID_RANGE netWeight"},
		{"quantity zero", func(c *SubmitDGD) { c.Quantity = num(0) }, "INVALID_RANGE quantity"},
		{"no proper shipping name", func(c *SubmitDGD) { c.ProperShippingName = "" }, "REQUIRED properShippingName"},
		{"proper shipping name too long", func(c *SubmitDGD) { c.ProperShippingName = strings.Repeat("x", 201) }, "TOO_LONG properShippingName"},
		{"declaration too long", func(c *SubmitDGD) { c.ShipperDeclaration = strings.Repeat("x", 2001) }, "TOO_LONG shipperDeclaration"},
		{"no declaration", func(c *SubmitDGD) { c.ShipperDeclaration = " " }, "REQUIRED shipperDeclaration"},
		{"class against the reference", func(c *SubmitDGD) { c.Class, c.PackingGroup = "8", "II" }, "MISMATCH class"},
		{"one of the reference's classes", func(c *SubmitDGD) {
			c.UNNumber, c.ProperShippingName, c.Class, c.PackingInstructions = "UN1950", "Aerosols, non-flammable", "2.2", "203"
		}, ""},
		{"none of the reference's classes", func(c *SubmitDGD) { c.UNNumber, c.Class, c.PackingInstructions = "UN1950", "2.3", "203" }, "MISMATCH class"},
		{"limited quantity of packing group I", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingGroup, c.PackingInstructions, c.LimitedQuantity = "UN1088", "3", "I", "Y341", true
		}, "INVALID_VALUE limitedQuantity"},
		{"limited quantity of division 4.2", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingGroup, c.PackingInstructions, c.LimitedQuantity = "UN1362", "4.2", "III", "Y470", true
		}, "INVALID_VALUE limitedQuantity"},
		{"excepted flammable gas", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingInstructions, c.ExceptedQuantity = "UN1950", "2.1", "", true
		}, "INVALID_VALUE exceptedQuantity"},
		{"lithium ion batteries", func(c *SubmitDGD) {
			c.UNNumber, c.ProperShippingName, c.PackingGroup, c.PackingInstructions = "UN3480", "Lithium ion batteries", "II", "965"
		}, ""},
		{"limited quantity of lithium ion batteries", func(c *SubmitDGD) {
			c.UNNumber, c.PackingGroup, c.PackingInstructions, c.LimitedQuantity = "un3480", "II", "Y965", true
		}, "INVALID_VALUE limitedQuantity"},
		{"excepted quantity of lithium metal batteries in equipment", func(c *SubmitDGD) {
			c.UNNumber, c.PackingInstructions, c.ExceptedQuantity = "UN3091", "", true
		}, "INVALID_VALUE exceptedQuantity"},
		// A bare class stands for the divisions the reference gives the
		// UN number: it does not open limited or excepted quantities to
		// goods whose division has none.
		{"limited quantity of infectious substances declared by their bare class", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingInstructions, c.LimitedQuantity = "UN2814", "6", "Y620", true
		}, "INVALID_VALUE limitedQuantity"},
		{"excepted quantity of chlorine declared by its bare class", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingInstructions, c.ExceptedQuantity = "UN1017", "2", "", true
		}, "INVALID_VALUE exceptedQuantity"},
		{"excepted quantity of aerosols declared by their bare class, one of whose divisions has them", func(c *SubmitDGD) {
			c.UNNumber, c.ProperShippingName, c.Class, c.PackingInstructions, c.ExceptedQuantity = "UN1950", "Aerosols, non-flammable", "2", "", true
		}, ""},
		{"limited quantity of a bare class the reference does not know the UN number of", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingInstructions, c.LimitedQuantity = "UN3373", "6", "Y650", true
		}, ""},
		{"cyanide solutions declared by their bare class without packing group", func(c *SubmitDGD) {
			c.UNNumber, c.ProperShippingName, c.Class, c.PackingInstructions = "UN1935", "Cyanide solutions, n.o.s.", "6", "654"
		}, "REQUIRED packingGroup"},
		{"infectious substances declared by their bare class with a packing group", func(c *SubmitDGD) {
			c.UNNumber, c.Class, c.PackingGroup, c.PackingInstructions = "UN2814", "6", "II", "620"
		}, "INVALID_PACKING_GROUP packingGroup"},
		{"lithium ion batteries packed to dry ice's instruction", func(c *SubmitDGD) {
			c.UNNumber, c.ProperShippingName, c.PackingInstructions = "UN3480", "Lithium ion batteries", "954"
		}, "MISMATCH packingInstructions"},
		{"lithium ion batteries packed to lithium metal batteries' instruction", func(c *SubmitDGD) {
			c.UNNumber, c.ProperShippingName, c.PackingInstructions = "UN3480", "Lithium ion batteries", "968"
		}, "MISMATCH packingInstructions"},
		{"lithium metal batteries contained in equipment", func(c *SubmitDGD) {
			c.UNNumber, c.ProperShippingName, c.PackingInstructions = "UN3091", "Lithium metal batteries contained in equipment", "970"
		}, ""},
		{"lithium ion batteries packed with equipment", func(c *SubmitDGD) {
			c.UNNumber, c.ProperShippingName, c.PackingInstructions = "UN3481", "Lithium ion batteries packed with equipment", "966"
		}, ""},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, err := DecideDGD(c, dgRef{})
		got := ""
		if e, ok := err.(*Error); ok {
			got = string(e.Fields[0].Code) + " " + e.Fields[0].Field
			// Each says what was sent, or that nothing was.
			if msg := e.Fields[0].Message; tt.name == "UN number 0000" && msg != "UN0000 is no UN number: they begin at UN0004" ||
				(tt.name == "no UN number" || tt.name == "no class") && !strings.HasPrefix(msg, "is required") {
				t.Errorf("%s: message %q", tt.name, msg)
			}
		} else if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
			continue
		}
		if err == nil {
			d := events[0].(DGDSubmitted)
			if !d.ValidUntil.Equal(now.Add(DGDValidity)) || d.UNNumber != strings.ToUpper(d.UNNumber) {
				t.Errorf("%s: recorded %+v", tt.name, d)
			}
		}
	}
}

func TestDecideDGDReviewNotes(t *testing.T) {
	num := func(v float64) *float64 { return &v }
	c := SubmitDGD{DGDSubmitted: DGDSubmitted{UNNumber: "UN1845", Class: "9", PackingInstructions: "954", ShipperDeclaration: "declared"},
		Quantity: num(5), NetWeightKg: num(5)}
	for name, want := range map[string]string{
		"Dry ice":                          "",
		"CARBON DIOXIDE, SOLID OR DRY ICE": "",
		"Carbon dioxide, solid":            "",
		"Frozen carbon":                    `proper shipping name differs from the reference data for UN1845: "Carbon dioxide, solid or Dry ice"`,
		"Carbon":                           `proper shipping name differs from the reference data for UN1845: "Carbon dioxide, solid or Dry ice"`,
	} {
		c.ProperShippingName = name
		events, err := DecideDGD(c, dgRef{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := strings.Join(events[0].(DGDSubmitted).ReviewNotes, "; "); got != want {
			t.Errorf("%s: notes %q, want %q", name, got, want)
		}
	}
	for _, tt := range []struct {
		un, name, class, pg, want string
	}{
		{"UN1950", "Aerosols, flammable", "2.1", "", ""},
		{"UN1950", "Aerosols", "2.1", "", ""},
		// The start of the name cut inside a word is another substance's:
		// acetal is UN1088.
		{"UN1089", "Acetal", "3", "I", `proper shipping name differs from the reference data for UN1089: "Acetaldehyde"`},
		{"UN1089", "Acetaldehyde", "3", "I", ""},
		{"UN1088", "Acetal", "3", "I", "packing group I is not listed for UN1088 in the reference data (II)"},
		// Dry ice has no packing group in the reference: one declared is noted.
		{"UN1845", "Dry ice", "9", "III", "packing group III is not listed for UN1845 in the reference data (none)"},
		{"UN1845", "Dry ice", "9", "", ""},
		{"UN1005", "Ammonia, anhydrous", "2.2", "", "UN1005 is forbidden on cargo aircraft in the reference data: check the ICAO Technical Instructions"},
	} {
		c.UNNumber, c.ProperShippingName, c.Class, c.PackingGroup = tt.un, tt.name, tt.class, tt.pg
		events, err := DecideDGD(c, dgRef{})
		if err != nil {
			t.Fatalf("%s: %v", tt.un, err)
		}
		if got := strings.Join(events[0].(DGDSubmitted).ReviewNotes, "; "); got != tt.want {
			t.Errorf("%s: notes %q, want %q", tt.un, got, tt.want)
		}
	}
	c.Class, c.PackingGroup = "9", ""
	c.UNNumber, c.ProperShippingName, c.PackingInstructions = "UN3480", "Lithium ion batteries", "965"
	events, err := DecideDGD(c, dgRef{})
	if err != nil || !strings.Contains(strings.Join(events[0].(DGDSubmitted).ReviewNotes, ""), "not in the loaded dangerous-goods reference") {
		t.Errorf("unknown UN number: %v %v", events, err)
	}
}

func TestDecideDGDNotesThePassengerAircraftSetToCarryGoodsForCargoAircraftOnly(t *testing.T) {
	num := func(v float64) *float64 { return &v }
	passenger := Flight{ID: "LH400-2026-11-26", AircraftType: "A359"}
	freighter := Flight{ID: "LH8400-2026-11-26", AircraftType: "B77F"}
	tests := []struct {
		name     string
		un       string
		carriers []Flight
		want     string
	}{
		{"batteries on their own, set to fly on a passenger aircraft", "UN3480", []Flight{freighter, passenger},
			"UN3480 goes on cargo aircraft only, and the shipment is set to fly on LH400-2026-11-26, a passenger aircraft (A359): move it to a freighter"},
		{"batteries on their own, set to fly on a freighter", "UN3480", []Flight{freighter}, ""},
		{"batteries on their own, on no flight yet", "UN3090", nil, ""},
		{"dry ice, set to fly on a passenger aircraft", "UN1845", []Flight{passenger}, ""},
		{"goods the reference data allows on cargo aircraft only, set to fly on a passenger aircraft", "UN1089", []Flight{passenger},
			"UN1089 goes on cargo aircraft only, and the shipment is set to fly on LH400-2026-11-26, a passenger aircraft (A359): move it to a freighter"},
		{"goods the reference data forbids on every aircraft, set to fly on a passenger aircraft", "UN0004", []Flight{passenger},
			"UN0004 is forbidden on passenger aircraft, and the shipment is set to fly on LH400-2026-11-26, a passenger aircraft (A359): take it off"},
	}
	for _, tt := range tests {
		c := SubmitDGD{DGDSubmitted: DGDSubmitted{UNNumber: tt.un, ProperShippingName: "Dry ice", Class: "9", PackingInstructions: "954", ShipperDeclaration: "declared"},
			Quantity: num(5), NetWeightKg: num(5), Carriers: tt.carriers}
		switch tt.un {
		case "UN1089":
			c.ProperShippingName, c.Class, c.PackingGroup, c.PackingInstructions = "Acetaldehyde", "3", "I", "361"
		case "UN3480":
			c.ProperShippingName, c.PackingInstructions = "Lithium batteries", "965"
		case "UN3090":
			c.ProperShippingName, c.PackingInstructions = "Lithium batteries", "968"
		case "UN0004":
			c.ProperShippingName, c.Class, c.PackingInstructions = "Ammonium picrate, dry", "1.1D", "112"
		}
		events, err := DecideDGD(c, dgRef{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		// What the manifests check: recorded on the e-DGD.
		if got, want := events[0].(DGDSubmitted).CargoAircraftOnly, tt.un != "UN1845"; got != want {
			t.Errorf("%s: cargo aircraft only recorded %t, want %t", tt.name, got, want)
		}
		var notes []string
		for _, n := range events[0].(DGDSubmitted).ReviewNotes {
			if !strings.Contains(n, "reference data") { // the reference's notes are another test's
				notes = append(notes, n)
			}
		}
		if got := strings.Join(notes, "; "); got != tt.want {
			t.Errorf("%s: notes %q, want %q", tt.name, got, tt.want)
		}
	}
}

// tableRef is the dangerous goods of the US DOT table as the reference
// loader gathers them: a UN number's first entry names it, all its entries
// give its classes and packing groups.
type tableRef struct {
	Lookup
	goods map[string]KnownCommodity
}

func (r tableRef) DangerousGood(un string) (KnownCommodity, bool) {
	c, ok := r.goods[un]
	return c, ok
}

// Entries that break their class's rule on packing groups in the table
// are declared as the table has them, and accepted: those of classes that
// use packing groups but have none (self-reactive substances, wet
// batteries, engines), and those of classes that use none but have one
// (clinical waste, UN3291, 6.2 II).
func TestDecideDGDEntriesAgainstTheirClassPackingGroupRule(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	num := func(v float64) *float64 { return &v }
	declare := func(un, name, class, pg, pi string) SubmitDGD {
		name, _, _ = strings.Cut(name, " or ") // the first of the names the entry offers
		return SubmitDGD{DGDSubmitted: DGDSubmitted{AWBNumber: "020-00000011", UNNumber: un, ProperShippingName: name,
			Class: class, PackingGroup: pg, PackingInstructions: pi, ShipperDeclaration: "I hereby declare…", SubmittedAt: now},
			Quantity: num(20), NetWeightKg: num(20)}
	}
	ref := tableRef{goods: map[string]KnownCommodity{}}
	for _, r := range readCSV(t, "dangerous-goods/us-dot-hmt-49cfr172101-2019.csv", ',', nil) {
		un := r["id_number"]
		if !strings.HasPrefix(un, "UN") || !IsHazardClass(r["hazard_class"]) {
			continue
		}
		c, seen := ref.goods[un]
		if !seen {
			c = KnownCommodity{Code: un, UNNumber: un, Name: r["proper_shipping_name"], HazardClass: r["hazard_class"], DangerousGoods: true}
		}
		if pg := r["packing_group"]; pg != "" {
			c.PackingGroups = append(c.PackingGroups, pg)
		}
		ref.goods[un] = c
	}
	groupless, grouped := 0, 0
	for un, c := range ref.goods {
		switch {
		case len(c.PackingGroups) == 0 && classIn(needPackingGroup, c.HazardClass):
			groupless++
			if _, err := DecideDGD(declare(un, c.Name, c.HazardClass, "", "870"), ref); err != nil {
				t.Errorf("%s %q, class %s, no packing group: %v", un, c.Name, c.HazardClass, err)
			}
		case len(c.PackingGroups) > 0 && classIn(noPackingGroup, c.HazardClass):
			grouped++
			if _, err := DecideDGD(declare(un, c.Name, c.HazardClass, c.PackingGroups[0], "622"), ref); err != nil {
				t.Errorf("%s %q, class %s, packing group %s: %v", un, c.Name, c.HazardClass, c.PackingGroups[0], err)
			}
		}
	}
	if groupless == 0 || grouped == 0 {
		t.Fatalf("the table has %d entries that need a packing group and have none, %d that need none and have one", groupless, grouped)
	}
	// Entries that keep their class's rule still do.
	for _, tt := range []struct{ un, name, class, pg, want string }{
		{"UN1263", "Paint", "3", "", "REQUIRED packingGroup"},
		{"UN2814", "Infectious substance, affecting humans", "6.2", "II", "INVALID_PACKING_GROUP packingGroup"},
	} {
		_, err := DecideDGD(declare(tt.un, tt.name, tt.class, tt.pg, "620"), ref)
		got := ""
		if e, ok := err.(*Error); ok {
			got = string(e.Fields[0].Code) + " " + e.Fields[0].Field
		}
		if got != tt.want {
			t.Errorf("%s class %s packing group %q: %v, want %s", tt.un, tt.class, tt.pg, err, tt.want)
		}
	}
}

// A declared name may leave out the qualification the US table writes
// after a proper shipping name, not cut the name short: a name cut inside
// it is another substance's, or none.
func TestAShippingNameIsTheReferencesLessItsQualificationOnly(t *testing.T) {
	for _, tt := range []struct {
		declared, known string
		want            bool
	}{
		{"Aerosols, flammable", "Aerosols, flammable, (each not exceeding 1 L capacity)", true},
		{"Lithium ion batteries", "Lithium ion batteries including lithium ion polymer batteries", true},
		{"Gasoline", "Gasoline includes gasoline mixed with ethyl alcohol, with not more than 10% alcohol", true},
		{"Ammonium picrate", "Ammonium picrate, dry or wetted with less than 10 percent water, by mass", true},
		{"Dry ice", "Carbon dioxide, solid or Dry ice", true},
		{"Acetal", "Acetaldehyde", false},
		{"Gasol", "Gasoline includes gasoline mixed with ethyl alcohol, with not more than 10% alcohol", false},
		{"Lithium", "Lithium ion batteries including lithium ion polymer batteries", false},
		{"Carbon", "Carbon dioxide, solid or Dry ice", false},
	} {
		if got := sameShippingName(tt.declared, tt.known); got != tt.want {
			t.Errorf("%q of %q: %t, want %t", tt.declared, tt.known, got, tt.want)
		}
	}
}
