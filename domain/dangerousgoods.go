package domain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// DGDValidity is how long a submitted e-DGD stands: the acceptance check
// of the shipment is expected within a week of the shipper's declaration.
const DGDValidity = 7 * 24 * time.Hour

// Validation codes of the e-DGD beyond the spec's two.
const (
	CodeInvalidUNNumber           FieldCode = "INVALID_UN_NUMBER"
	CodeInvalidHazardClass        FieldCode = "INVALID_HAZARD_CLASS"
	CodeInvalidPackingGroup       FieldCode = "INVALID_PACKING_GROUP"
	CodeInvalidPackingInstruction FieldCode = "INVALID_PACKING_INSTRUCTION"
)

var (
	// hazardClassPattern: a bare class 1 to 9 (as the spec allows), or a
	// division; class 1 divisions may carry a compatibility group, one
	// of compatibilityGroups.
	hazardClassPattern        = regexp.MustCompile(`^([1-9])$|^(1\.[1-6])([A-Z])?$|^(2\.[1-3]|4\.[1-3]|5\.[12]|6\.[12])$`)
	packingInstructionPattern = regexp.MustCompile(`^(Y?)[0-9]{3}$`)
	packingGroups             = []string{"I", "II", "III"}
	// compatibilityGroups are the groups each division of class 1 has,
	// as the classification codes of the UN Model Regulations (2.1.2)
	// pair them: an explosive is 1.4S or 1.1D, never 1.4A or 1.6S.
	compatibilityGroups = map[string]string{
		"1.1": "ABCDEFGJL", "1.2": "BCDEFGHJKL", "1.3": "CFGHJKL", "1.4": "BCDEFGS", "1.5": "D", "1.6": "N",
	}
)

// Hazard classes and divisions by their use of packing groups (DESIGN §3,
// IATA DGR 4.1): never for 1, 2, 5.2, 6.2 and 7; always for 3, 4, 5.1, 6.1
// and 8; class 9 has entries with and without one, and a bare 5 or 6 does
// not say which division it is.
var (
	noPackingGroup   = []string{"1", "2", "5.2", "6.2", "7"}
	needPackingGroup = []string{"3", "4", "5.1", "6.1", "8"}
	// noLimitedQuantity: explosives, toxic gases, spontaneously combustible
	// substances, infectious substances and radioactive material have no
	// limited-quantity (Y) instructions (IATA DGR 2.4); nor has anything of
	// packing group I.
	noLimitedQuantity = []string{"1", "2.3", "4.2", "6.2", "7"}
	// noExceptedQuantity: excepted quantities (DGR 2.6) are not open to
	// explosives, flammable and toxic gases, infectious substances, or
	// radioactive material (which has excepted packages of its own).
	noExceptedQuantity = []string{"1", "2.1", "2.3", "6.2", "7"}
	// lithiumBatteries, metal and ion, on their own or with equipment, go
	// neither as limited nor as excepted quantities (their entries in the
	// IATA DGR list say Forbidden and E0), whatever their class's rule:
	// they go to their own packing instructions, 965 to 970.
	lithiumBatteries = []string{"UN3090", "UN3091", "UN3480", "UN3481"}
	// lithiumPackingInstructions are the packing instructions of each
	// (ICAO Technical Instructions, IATA DGR Section II/IA/IB alike): on
	// their own, packed with equipment, contained in it. Another number,
	// as dry ice's 954, packs something else.
	lithiumPackingInstructions = map[string][]string{
		"UN3480": {"965"}, "UN3481": {"966", "967"}, "UN3090": {"968"}, "UN3091": {"969", "970"},
	}
)

// DGDSubmitted records a shipper's declaration for dangerous goods.
type DGDSubmitted struct {
	DGDID               string   `json:"dgdId"`
	AWBNumber           string   `json:"awbNumber"`
	OrganizationID      string   `json:"organizationId"`
	UNNumber            string   `json:"unNumber"`
	ProperShippingName  string   `json:"properShippingName"`
	Class               string   `json:"class"`
	Quantity            float64  `json:"quantity"`
	NetWeightKg         float64  `json:"netWeight"`
	GrossWeightKg       *float64 `json:"grossWeight,omitempty"`
	PackingGroup        string   `json:"packingGroup,omitempty"`
	PackingInstructions string   `json:"packingInstructions,omitempty"`
	LimitedQuantity     bool     `json:"limitedQuantity"`
	ExceptedQuantity    bool     `json:"exceptedQuantity"`
	ShipperDeclaration  string   `json:"shipperDeclaration"`
	ReviewNotes         []string `json:"reviewNotes,omitempty"` // warnings found on submission
	// CargoAircraftOnly: no passenger aircraft may carry the goods, as the
	// built-in list or the reference data said when the e-DGD was filed
	// (see forbiddenOnPassengerAircraft); what the manifests check.
	CargoAircraftOnly bool      `json:"cargoAircraftOnly,omitempty"`
	SubmittedAt       time.Time `json:"submittedAt"`
	ValidUntil        time.Time `json:"validUntil"`
}

func (DGDSubmitted) EventType() string { return "DGDSubmitted" }

// SubmitDGD is an e-DGD as posted, with the flights still on the ground
// set to carry its shipment (ManifestFacts.Carriers).
type SubmitDGD struct {
	DGDSubmitted
	Quantity    *float64
	NetWeightKg *float64
	Carriers    []Flight
}

// classIn reports whether a class or division falls under an entry of
// list: the entry itself, or its main class.
func classIn(list []string, class string) bool {
	main, _, _ := strings.Cut(class, ".")
	return slices.Contains(list, class) || slices.Contains(list, main)
}

// DecideDGD checks an e-DGD as a dangerous-goods acceptance check would:
// the UN number and class, the packing group where the class uses one,
// the packing instruction and the limited- and excepted-quantity flags,
// and, where the reference data knows the UN number, its class and proper
// shipping name. A differing name is a review note, not a refusal: the
// reference names entries in their own wording.
func DecideDGD(c SubmitDGD, ref Lookup) ([]Event, error) {
	var p Problems
	e := c.DGDSubmitted
	e.UNNumber = strings.ToUpper(strings.TrimSpace(e.UNNumber))
	e.Class = strings.ToUpper(strings.TrimSpace(e.Class))
	e.PackingGroup = strings.ToUpper(strings.TrimSpace(e.PackingGroup))
	e.PackingInstructions = strings.ToUpper(strings.TrimSpace(e.PackingInstructions))
	e.ProperShippingName = strings.TrimSpace(e.ProperShippingName)
	e.ValidUntil = e.SubmittedAt.Add(DGDValidity)
	e.ReviewNotes = nil

	switch {
	case e.UNNumber == "":
		p.Add("unNumber", CodeInvalidUNNumber, "is required: UN followed by 4 digits, as UN1845")
	case e.UNNumber == "UN0000":
		p.Add("unNumber", CodeInvalidUNNumber, "UN0000 is no UN number: they begin at UN0004")
	case !unNumberPattern.MatchString(e.UNNumber):
		p.Add("unNumber", CodeInvalidUNNumber, "must be UN followed by 4 digits, as UN1845, not %q", e.UNNumber)
	}
	classOK := IsHazardClass(e.Class)
	// A missing UN number or class has the spec's codes of those fields
	// (errors.md), which a client reads by field.
	switch {
	case e.Class == "":
		p.Add("class", CodeInvalidHazardClass, "is required: a class 1 to 9 or a division (1.1–1.6 with compatibility group, 2.1–2.3, 4.1–4.3, 5.1, 5.2, 6.1, 6.2)")
	case !classOK:
		p.Add("class", CodeInvalidHazardClass, "must be a class 1 to 9 or a division (1.1–1.6 with compatibility group, 2.1–2.3, 4.1–4.3, 5.1, 5.2, 6.1, 6.2), not %q", e.Class)
	}
	known, ok := lookupDangerousGood(ref, e.UNNumber)
	if classOK {
		// Some entries break their class's rule: self-reactive substances
		// of 4.1 (UN3221–UN3240), wet batteries of class 8 (UN2794,
		// UN2800) and engines of class 3 (UN3528) have no packing group;
		// clinical waste of 6.2 (UN3291) has II. The reference's groups
		// for the UN number, where it knows it, decide.
		var listed []string
		if ok {
			listed = orOne(known.PackingGroups, known.PackingGroup)
		}
		checkPackingGroup(&p, e.PackingGroup, e.Class, divisions(e.Class, known, ok), listed, ok)
	}
	if e.ProperShippingName == "" {
		p.Add("properShippingName", CodeRequired, "is required")
	}
	checkLength(&p, "properShippingName", e.ProperShippingName, maxText)
	switch {
	case c.Quantity == nil:
		p.Add("quantity", CodeRequired, "is required")
	case !(*c.Quantity > 0 && *c.Quantity <= maxWeightKg):
		p.Add("quantity", CodeInvalidRange, "must be more than 0 and at most %d", maxWeightKg)
	default:
		e.Quantity = *c.Quantity
	}
	switch {
	case c.NetWeightKg == nil:
		p.Add("netWeight", CodeRequired, "is required")
	case !(*c.NetWeightKg > 0 && *c.NetWeightKg <= maxWeightKg):
		p.Add("netWeight", CodeInvalidRange, "must be more than 0 and at most %d kg", maxWeightKg)
	default:
		e.NetWeightKg = *c.NetWeightKg
	}
	if g := e.GrossWeightKg; g != nil && !(*g > 0 && *g <= maxWeightKg) {
		p.Add("grossWeight", CodeInvalidRange, "must be more than 0 and at most %d kg", maxWeightKg)
	} else if g != nil && e.NetWeightKg > 0 && *g < e.NetWeightKg {
		p.Add("grossWeight", CodeInvalidRange, "must not be less than the net weight (%g kg)", e.NetWeightKg)
	}
	checkPackingInstruction(&p, e, divisions(e.Class, known, ok))
	if strings.TrimSpace(e.ShipperDeclaration) == "" {
		p.Add("shipperDeclaration", CodeRequired, "is required: the shipper's signed certification")
	}
	checkLength(&p, "shipperDeclaration", e.ShipperDeclaration, maxNotes)
	if err := p.Err(); err != nil {
		return nil, err
	}

	// Declared after its shipment was booked or manifested: the
	// declaration is the shipper's and is filed, and the airline is told
	// to move goods no passenger aircraft may carry.
	e.CargoAircraftOnly = forbiddenOnPassengerAircraft(ref, nil, e.UNNumber)
	if e.CargoAircraftOnly {
		// Goods the reference forbids on cargo aircraft too are not
		// called cargo aircraft only: whether a freighter may take them
		// is the acceptance check's (the note below).
		note := "%s goes on cargo aircraft only, and the shipment is set to fly on %s, a passenger aircraft (%s): move it to a freighter"
		if ok && known.CargoAircraftForbidden {
			note = "%s is forbidden on passenger aircraft, and the shipment is set to fly on %s, a passenger aircraft (%s): take it off"
		}
		for _, f := range c.Carriers {
			if f.PassengerAircraft() {
				e.ReviewNotes = append(e.ReviewNotes, fmt.Sprintf(note, e.UNNumber, f.ID, f.AircraftType))
			}
		}
	}
	if !ok {
		e.ReviewNotes = append(e.ReviewNotes, e.UNNumber+" is not in the loaded dangerous-goods reference data: check it by hand")
		return []Event{e}, nil
	}
	classes := orOne(known.HazardClasses, known.HazardClass)
	if !slices.ContainsFunc(classes, func(k string) bool { return !IsHazardClass(k) || sameHazardClass(e.Class, k) }) {
		p.Add("class", CodeMismatch, "%s is class %s in the reference data, not %s", e.UNNumber, strings.Join(classes, " or "), e.Class)
		return nil, p.Err()
	}
	if !slices.ContainsFunc(append([]string{known.Name}, known.OtherNames...), func(name string) bool { return sameShippingName(e.ProperShippingName, name) }) {
		e.ReviewNotes = append(e.ReviewNotes, "proper shipping name differs from the reference data for "+e.UNNumber+": \""+known.Name+"\"")
	}
	// The reference is the US DOT table: where it differs from the ICAO
	// Technical Instructions, the acceptance check decides, so these are
	// notes.
	// An entry that lists no packing group (UN3480, UN1845) has none: a
	// group declared for it is noted as one no entry lists.
	if groups := orOne(known.PackingGroups, known.PackingGroup); e.PackingGroup != "" && !slices.Contains(groups, e.PackingGroup) {
		listed := "none"
		if len(groups) > 0 {
			listed = strings.Join(groups, ", ")
		}
		e.ReviewNotes = append(e.ReviewNotes, "packing group "+e.PackingGroup+" is not listed for "+e.UNNumber+" in the reference data ("+listed+")")
	}
	if known.CargoAircraftForbidden {
		e.ReviewNotes = append(e.ReviewNotes, e.UNNumber+" is forbidden on cargo aircraft in the reference data: check the ICAO Technical Instructions")
	}
	return []Event{e}, nil
}

// orOne is list, or else one as a list of one (none if one is empty).
func orOne(list []string, one string) []string {
	if len(list) > 0 || one == "" {
		return list
	}
	return []string{one}
}

// IsHazardClass reports whether s is a class (1 to 9) or a division, as
// 2.1 or 1.4S.
func IsHazardClass(s string) bool {
	m := hazardClassPattern.FindStringSubmatch(s)
	return m != nil && (m[3] == "" || strings.Contains(compatibilityGroups[m[2]], m[3]))
}

// checkPackingGroup: I, II or III where the class uses one, none where it
// does not, unless the reference knows the UN number (known) and lists
// the group declared, or none at all (listed). The class is asked by the
// divisions it stands for (see divisions): a bare 6 of cyanide solutions,
// 6.1, needs a group as 6.1 does.
func checkPackingGroup(p *Problems, pg, class string, divisions, listed []string, known bool) {
	switch {
	case pg != "" && !slices.Contains(packingGroups, pg):
		p.Add("packingGroup", CodeInvalidPackingGroup, "must be I, II or III")
	case pg != "" && allIn(noPackingGroup, divisions) && !slices.Contains(listed, pg):
		p.Add("packingGroup", CodeInvalidPackingGroup, "class %s has no packing group", classNamed(class, divisions))
	case pg == "" && allIn(needPackingGroup, divisions) && !(known && len(listed) == 0):
		p.Add("packingGroup", CodeRequired, "class %s needs a packing group (I, II or III)", classNamed(class, divisions))
	}
}

// divisions are the classes or divisions a declared class stands for: the
// reference's of the UN number that it names, where the reference knows
// the number (a bare 6 of UN2814 is 6.2, a bare 2 of UN1950 2.1 or 2.2),
// else the class itself.
func divisions(class string, known KnownCommodity, ok bool) []string {
	var out []string
	if ok {
		for _, k := range orOne(known.HazardClasses, known.HazardClass) {
			if IsHazardClass(k) && sameHazardClass(class, k) {
				out = append(out, k)
			}
		}
	}
	if len(out) == 0 {
		return []string{class}
	}
	return out
}

// allIn reports whether every class of classes falls under list.
func allIn(list, classes []string) bool {
	return !slices.ContainsFunc(classes, func(c string) bool { return !classIn(list, c) })
}

// classNamed is the class as declared, with the divisions it stands for
// when they differ from it ("6 (6.2)").
func classNamed(class string, divisions []string) string {
	if len(divisions) == 1 && divisions[0] == class {
		return class
	}
	return class + " (" + strings.Join(divisions, " or ") + ")"
}

// checkPackingInstruction: three digits, with a Y prefix exactly when the
// goods go as a limited quantity; excepted quantities have none. Which
// classes may go as either is asked of the divisions the declared class
// stands for (see divisions): a bare class does not let infectious
// substances (6.2) go as a limited quantity, nor chlorine (2.3) as an
// excepted one.
func checkPackingInstruction(p *Problems, e DGDSubmitted, divisions []string) {
	pi := e.PackingInstructions
	m := packingInstructionPattern.FindStringSubmatch(pi)
	switch {
	case e.LimitedQuantity && e.ExceptedQuantity:
		p.Add("exceptedQuantity", CodeInvalidValue, "goods go either as a limited or as an excepted quantity, not both")
	case e.LimitedQuantity && allIn(noLimitedQuantity, divisions):
		p.Add("limitedQuantity", CodeInvalidValue, "class %s cannot go as a limited quantity", classNamed(e.Class, divisions))
	case e.LimitedQuantity && e.PackingGroup == "I":
		p.Add("limitedQuantity", CodeInvalidValue, "packing group I cannot go as a limited quantity")
	case e.LimitedQuantity && slices.Contains(lithiumBatteries, e.UNNumber):
		p.Add("limitedQuantity", CodeInvalidValue, "lithium batteries (%s) cannot go as a limited quantity: they go to their packing instruction, 965 to 970", e.UNNumber)
	case e.ExceptedQuantity && slices.Contains(lithiumBatteries, e.UNNumber):
		p.Add("exceptedQuantity", CodeInvalidValue, "lithium batteries (%s) cannot go as an excepted quantity: they go to their packing instruction, 965 to 970", e.UNNumber)
	case e.ExceptedQuantity && allIn(noExceptedQuantity, divisions):
		p.Add("exceptedQuantity", CodeInvalidValue, "class %s cannot go as an excepted quantity", classNamed(e.Class, divisions))
	case pi == "":
		if !e.ExceptedQuantity {
			p.Add("packingInstructions", CodeRequired, "is required: three digits, as 966, or Y and three digits for a limited quantity")
		}
	case m == nil:
		p.Add("packingInstructions", CodeInvalidPackingInstruction, "must be three digits, as 966, or Y and three digits for a limited quantity, not %q", pi)
	case e.ExceptedQuantity:
		p.Add("packingInstructions", CodeInvalidPackingInstruction, "excepted quantities have no packing instruction")
	case e.LimitedQuantity && m[1] == "":
		p.Add("packingInstructions", CodeInvalidPackingInstruction, "a limited quantity is packed to a Y instruction, as Y341")
	case !e.LimitedQuantity && m[1] == "Y":
		p.Add("limitedQuantity", CodeMismatch, "%s is a limited-quantity instruction: set limitedQuantity", pi)
	case lithiumPackingInstructions[e.UNNumber] != nil && !slices.Contains(lithiumPackingInstructions[e.UNNumber], pi):
		p.Add("packingInstructions", CodeMismatch, "%s is packed to packing instruction %s, not %s",
			e.UNNumber, strings.Join(lithiumPackingInstructions[e.UNNumber], " or "), pi)
	}
}

// sameHazardClass: a declared class matches the reference's when equal,
// when it is the bare class of the reference's division, or when it names
// the same explosive division without the compatibility group.
func sameHazardClass(declared, known string) bool {
	known = strings.ToUpper(known)
	if declared == known || strings.HasPrefix(known, declared+".") {
		return true
	}
	return len(known) == 4 && known[:3] == declared
}

// sameShippingName compares names on their letters and digits only. It
// accepts a declared name that is one of the reference's alternatives
// ("Carbon dioxide, solid or Dry ice"), or the start of the reference's
// name when that goes on with a qualification ("Aerosols, flammable" of
// "Aerosols, flammable, (each not exceeding 1 L capacity)"; "Lithium ion
// batteries" of "… including lithium ion polymer batteries"). A start cut
// elsewhere is another name: "Acetal" (UN1088) is not "Acetaldehyde"
// (UN1089), nor "Carbon" "Carbon dioxide, solid".
func sameShippingName(declared, known string) bool {
	d, k := lettersAndDigits(declared), lettersAndDigits(known)
	if d == k || (len(d) >= 5 && strings.HasPrefix(k, d) && qualifies(known, len(d))) {
		return true
	}
	for _, alt := range strings.Split(strings.ToLower(known), " or ") {
		if lettersAndDigits(alt) == d {
			return true
		}
	}
	return false
}

// qualifies reports whether name, after its first n letters and digits,
// goes on with a qualification of what they name: a comma, semicolon or
// parenthesis, or the US table's "including" and "includes" (its italics,
// no part of the proper shipping name).
func qualifies(name string, n int) bool {
	rest := name
	for i, r := range name {
		if n == 0 {
			rest = name[i:]
			break
		}
		if lettersAndDigits(string(r)) != "" {
			n--
		}
		rest = name[i+len(string(r)):]
	}
	rest = strings.ToLower(strings.TrimSpace(rest))
	return rest == "" || strings.ContainsAny(rest[:1], ",;(") ||
		strings.HasPrefix(rest, "including ") || strings.HasPrefix(rest, "includes ")
}

func lettersAndDigits(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, s)
}

func lookupDangerousGood(ref Lookup, un string) (KnownCommodity, bool) {
	if ref == nil {
		return KnownCommodity{}, false
	}
	return ref.DangerousGood(un)
}
