package views

import (
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// PLACIJSON is the spec's PLACI response, and the filing in the shipment.
type PLACIJSON struct {
	PLACIID          string    `json:"placiId"`
	AWBNumber        string    `json:"awbNumber"`
	Status           string    `json:"status"`
	Origin           string    `json:"origin"`
	Destination      string    `json:"destination"`
	DepartureDate    string    `json:"departureDate"`
	CargoDescription string    `json:"cargoDescription"`
	ShipperName      string    `json:"shipperName"`
	ShipperAddress   *string   `json:"shipperAddress"`
	ConsigneeName    string    `json:"consigneeName"`
	ConsigneeAddress *string   `json:"consigneeAddress"`
	Pieces           *int      `json:"pieces"`
	Weight           *float64  `json:"weight"`
	SubmittedAt      time.Time `json:"submittedAt"`
}

func ToPLACIJSON(p domain.PLACISubmitted) PLACIJSON {
	return PLACIJSON{PLACIID: p.PLACIID, AWBNumber: p.AWBNumber, Status: "submitted", Origin: p.Origin, Destination: p.Destination,
		DepartureDate: p.DepartureDate, CargoDescription: p.CargoDescription, ShipperName: p.ShipperName, ShipperAddress: orNull(p.ShipperAddress),
		ConsigneeName: p.ConsigneeName, ConsigneeAddress: orNull(p.ConsigneeAddress), Pieces: p.Pieces, Weight: p.WeightKg, SubmittedAt: p.SubmittedAt}
}

// CSDJSON is the spec's e-CSD response, and the declaration in the
// shipment.
type CSDJSON struct {
	CSDID            string                  `json:"csdId"`
	AWBNumber        string                  `json:"awbNumber"`
	Status           string                  `json:"status"`
	SecurityStatus   string                  `json:"securityStatus"`
	ScreeningMethods []string                `json:"screeningMethods"`
	ScreeningResult  *string                 `json:"screeningResult"`
	ScreeningDate    *time.Time              `json:"screeningDate"`
	Exemption        *string                 `json:"exemption"`
	RegulatedEntity  *domain.RegulatedEntity `json:"regulatedEntity"`
	SubmittedAt      time.Time               `json:"submittedAt"`
	ReviewNotes      string                  `json:"reviewNotes"`
}

func ToCSDJSON(c domain.CSDSubmitted) CSDJSON {
	methods := c.ScreeningMethods
	if methods == nil {
		methods = []string{}
	}
	var screened *time.Time
	if !c.ScreeningDate.IsZero() {
		screened = &c.ScreeningDate
	}
	return CSDJSON{CSDID: c.CSDID, AWBNumber: c.AWBNumber, Status: "submitted", SecurityStatus: c.SecurityStatus,
		ScreeningMethods: methods, ScreeningResult: orNull(c.ScreeningResult), ScreeningDate: screened, Exemption: orNull(c.Exemption),
		RegulatedEntity: c.RegulatedEntity, SubmittedAt: c.SubmittedAt, ReviewNotes: strings.Join(c.ReviewNotes, "; ")}
}

// DGDJSON is the spec's e-DGD response, and a declaration in the
// shipment. reviewNotes joins the warnings found on submission (a proper
// shipping name other than the reference's, a UN number the reference
// does not hold); it is empty when there are none.
type DGDJSON struct {
	DGDID               string    `json:"dgdId"`
	AWBNumber           string    `json:"awbNumber"`
	Status              string    `json:"status"`
	SubmittedAt         time.Time `json:"submittedAt"`
	ValidUntil          time.Time `json:"validUntil"`
	ReviewNotes         string    `json:"reviewNotes"`
	UNNumber            string    `json:"unNumber"`
	ProperShippingName  string    `json:"properShippingName"`
	Class               string    `json:"class"`
	PackingGroup        *string   `json:"packingGroup"`
	PackingInstructions *string   `json:"packingInstructions"`
	Quantity            float64   `json:"quantity"`
	NetWeight           float64   `json:"netWeight"`
	GrossWeight         *float64  `json:"grossWeight"`
	LimitedQuantity     bool      `json:"limitedQuantity"`
	ExceptedQuantity    bool      `json:"exceptedQuantity"`
}

func ToDGDJSON(d domain.DGDSubmitted) DGDJSON {
	return DGDJSON{DGDID: d.DGDID, AWBNumber: d.AWBNumber, Status: "submitted", SubmittedAt: d.SubmittedAt, ValidUntil: d.ValidUntil,
		ReviewNotes: strings.Join(d.ReviewNotes, "; "), UNNumber: d.UNNumber, ProperShippingName: d.ProperShippingName, Class: d.Class,
		PackingGroup: orNull(d.PackingGroup), PackingInstructions: orNull(d.PackingInstructions), Quantity: d.Quantity, NetWeight: d.NetWeightKg,
		GrossWeight: d.GrossWeightKg, LimitedQuantity: d.LimitedQuantity, ExceptedQuantity: d.ExceptedQuantity}
}

// renderCompliance is the webhook data of a PLACI, e-CSD or e-DGD.
func (r *Renderer) renderCompliance(e domain.Event, p domain.Principal) (any, bool) {
	switch e := e.(type) {
	case domain.PLACISubmitted:
		return ToPLACIJSON(e), r.ShipmentFacts.Ownership(e.AWBNumber).VisibleTo(p)
	case domain.CSDSubmitted:
		return ToCSDJSON(e), r.ShipmentFacts.Ownership(e.AWBNumber).VisibleTo(p)
	case domain.DGDSubmitted:
		return ToDGDJSON(e), r.ShipmentFacts.Ownership(e.AWBNumber).VisibleTo(p)
	}
	return nil, false
}
