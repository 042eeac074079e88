package domain

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Field codes of waybills.
const (
	CodeUnknownMAWB   FieldCode = "UNKNOWN_MAWB"
	CodeExceedsMAWB   FieldCode = "EXCEEDS_MAWB"
	CodeAWBNotInStock FieldCode = "AWB_NOT_IN_STOCK"
	CodeAWBInUse      FieldCode = "AWB_IN_USE"
)

// hawbPattern: house waybill numbers are the forwarder's own, up to 12
// letters and digits.
var hawbPattern = regexp.MustCompile(`^[A-Z0-9]{1,12}$`)

// MAWBCreated records a master air waybill of a forwarder.
type MAWBCreated struct {
	AWBNumber      string    `json:"awbNumber"`
	OrganizationID string    `json:"organizationId"`
	Origin         string    `json:"origin"`
	Destination    string    `json:"destination"`
	Pieces         int       `json:"pieces"`
	WeightKg       float64   `json:"weight"`
	VolumeM3       float64   `json:"volume"`
	Commodity      string    `json:"commodity"`
	Shipper        FullParty `json:"shipper"`
	Consignee      FullParty `json:"consignee"`
	CreatedAt      time.Time `json:"createdAt"`
}

func (MAWBCreated) EventType() string { return "MAWBCreated" }

// HAWBCreated records a house air waybill consolidated under a master.
type HAWBCreated struct {
	HAWBNumber     string    `json:"hawbNumber"`
	MAWBNumber     string    `json:"mawbNumber"`
	OrganizationID string    `json:"organizationId"`
	Pieces         int       `json:"pieces"`
	WeightKg       float64   `json:"weight"`
	Shipper        FullParty `json:"shipper"`
	Consignee      FullParty `json:"consignee"`
	CreatedAt      time.Time `json:"createdAt"`
}

func (HAWBCreated) EventType() string { return "HAWBCreated" }

// Waybills is a shipment's master and its houses.
type Waybills struct {
	MAWB  *MAWBCreated
	HAWBs []HAWBCreated
}

// EvolveWaybills applies an event to a shipment's waybills.
func EvolveWaybills(w Waybills, e Event) Waybills {
	switch e := e.(type) {
	case MAWBCreated:
		w.MAWB = &e
	case HAWBCreated:
		w.HAWBs = append(w.HAWBs[:len(w.HAWBs):len(w.HAWBs)], e)
	}
	return w
}

// CreateMAWB is a forwarder's master air waybill. The number's own checks
// (format, stock) are made before; Booked is the journey of its confirmed
// booking, if the number has one.
type CreateMAWB struct {
	AWBNumber      string
	Booked         Journey
	OrganizationID string
	Origin         string
	Destination    string
	Pieces         *int
	WeightKg       *float64
	VolumeM3       *float64
	Commodity      string
	Shipper        FullParty
	Consignee      FullParty
	At             time.Time
}

// DecideCreateMAWB validates the master and records it once.
func DecideCreateMAWB(w Waybills, c CreateMAWB, ref Lookup) ([]Event, error) {
	var p Problems
	e := MAWBCreated{AWBNumber: c.AWBNumber, OrganizationID: c.OrganizationID, Origin: strings.ToUpper(strings.TrimSpace(c.Origin)),
		Destination: strings.ToUpper(strings.TrimSpace(c.Destination)), Commodity: strings.ToUpper(strings.TrimSpace(c.Commodity)),
		Shipper: c.Shipper.trimmed(), Consignee: c.Consignee.trimmed(), CreatedAt: c.At}
	from, to := checkRoute(&p, ref, "", e.Origin, e.Destination)
	c.Booked.checkBooked(&p, from, to)
	e.Pieces, e.WeightKg = cargoAmounts(&p, c.Pieces, c.WeightKg)
	if c.VolumeM3 != nil {
		if v := *c.VolumeM3; !(v >= 0 && v <= maxVolumeM3) {
			p.Add("volume", CodeInvalidRange, "must be from 0 to %d m³", maxVolumeM3)
		} else {
			e.VolumeM3 = v
		}
	}
	switch {
	case utf8.RuneCountInString(e.Commodity) > 20:
		p.Add("commodity", CodeTooLong, "must be at most 20 characters")
	case e.Commodity != "" && !commodityPattern.MatchString(e.Commodity):
		p.Add("commodity", CodeInvalidFormat, "must be a commodity code: letters, digits, '-' or '_', such as GEN")
	}
	checkParties(&p, e.Shipper, e.Consignee)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if w.MAWB != nil {
		return nil, Errorf(Conflict, "MAWB %s already exists", c.AWBNumber)
	}
	return []Event{e}, nil
}

// CreateHAWB is a house waybill under a forwarder's master.
type CreateHAWB struct {
	HAWBNumber     string
	MAWBNumber     string
	OrganizationID string
	Pieces         *int
	WeightKg       *float64
	Shipper        FullParty
	Consignee      FullParty
	At             time.Time
}

// DecideCreateHAWB checks the house against its master: the master must be
// the same forwarder's, and the houses together must fit its pieces and
// weight.
func DecideCreateHAWB(w Waybills, c CreateHAWB) ([]Event, error) {
	var p Problems
	e := HAWBCreated{HAWBNumber: strings.ToUpper(strings.TrimSpace(c.HAWBNumber)), MAWBNumber: c.MAWBNumber,
		OrganizationID: c.OrganizationID, Shipper: c.Shipper.trimmed(), Consignee: c.Consignee.trimmed(), CreatedAt: c.At}
	if !hawbPattern.MatchString(e.HAWBNumber) {
		p.Add("hawbNumber", CodeInvalidFormat, "must be 1 to 12 letters or digits")
	}
	e.Pieces, e.WeightKg = cargoAmounts(&p, c.Pieces, c.WeightKg)
	checkParties(&p, e.Shipper, e.Consignee)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if w.MAWB == nil || w.MAWB.OrganizationID != c.OrganizationID {
		p.Add("mawbNumber", CodeUnknownMAWB, "no MAWB %s of yours", c.MAWBNumber)
		return nil, p.Err()
	}
	pieces, weight := e.Pieces, e.WeightKg
	for _, h := range w.HAWBs {
		if h.HAWBNumber == e.HAWBNumber {
			return nil, Errorf(Conflict, "HAWB %s already exists under MAWB %s", e.HAWBNumber, c.MAWBNumber)
		}
		pieces += h.Pieces
		weight += h.WeightKg
	}
	if pieces > w.MAWB.Pieces {
		p.Add("pieces", CodeExceedsMAWB, "the houses would hold %s, the master %d", countOf(pieces, "piece"), w.MAWB.Pieces)
	}
	if weight > w.MAWB.WeightKg+0.001 {
		p.Add("weight", CodeExceedsMAWB, "the houses would weigh %g kg, the master %g kg", weight, w.MAWB.WeightKg)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return []Event{e}, nil
}

// cargoAmounts checks pieces (1..) and weight (> 0 kg), both required.
func cargoAmounts(p *Problems, pieces *int, weight *float64) (int, float64) {
	var n int
	var kg float64
	switch {
	case pieces == nil:
		p.Add("pieces", CodeRequired, "is required")
	case *pieces < 1 || *pieces > maxPieces:
		p.Add("pieces", CodeInvalidRange, "must be 1 to %d", maxPieces)
	default:
		n = *pieces
	}
	switch {
	case weight == nil:
		p.Add("weight", CodeRequired, "is required")
	case !(*weight > 0 && *weight <= maxWeightKg):
		p.Add("weight", CodeInvalidRange, "must be more than 0 and at most %d kg", maxWeightKg)
	default:
		kg = *weight
	}
	return n, kg
}

// checkParties: shipper and consignee, trimmed, need names; all parts
// are bounded.
func checkParties(p *Problems, shipper, consignee FullParty) {
	for _, party := range []struct {
		name string
		FullParty
	}{{"shipper", shipper}, {"consignee", consignee}} {
		if party.Name == "" {
			p.Add(party.name+".name", CodeRequired, "is required")
		}
		checkLength(p, party.name+".name", party.Name, maxText)
		checkLength(p, party.name+".address", party.Address, 500)
		checkLength(p, party.name+".contact", party.Contact, maxText)
	}
}
