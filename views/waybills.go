package views

import (
	"time"

	"github.com/cargostream/cargostream/domain"
)

// MAWBCreatedJSON is the spec's MAWB response.
type MAWBCreatedJSON struct {
	AWBNumber string    `json:"awbNumber"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
}

func ToMAWBCreatedJSON(m domain.MAWBCreated) MAWBCreatedJSON {
	return MAWBCreatedJSON{AWBNumber: m.AWBNumber, Status: "created", CreatedAt: m.CreatedAt}
}

// MAWBJSON is a master waybill in the consolidated shipment.
type MAWBJSON struct {
	AWBNumber   string           `json:"awbNumber"`
	Origin      string           `json:"origin"`
	Destination string           `json:"destination"`
	Pieces      int              `json:"pieces"`
	Weight      float64          `json:"weight"`
	Volume      float64          `json:"volume"`
	Commodity   string           `json:"commodity"`
	Shipper     domain.FullParty `json:"shipper"`
	Consignee   domain.FullParty `json:"consignee"`
	Status      string           `json:"status"`
	CreatedAt   time.Time        `json:"createdAt"`
}

func ToMAWBJSON(m domain.MAWBCreated) MAWBJSON {
	return MAWBJSON{AWBNumber: m.AWBNumber, Origin: m.Origin, Destination: m.Destination, Pieces: m.Pieces, Weight: m.WeightKg,
		Volume: m.VolumeM3, Commodity: m.Commodity, Shipper: m.Shipper, Consignee: m.Consignee, Status: "created", CreatedAt: m.CreatedAt}
}

// HAWBJSON is the spec's HAWB response, and a house in the shipment.
type HAWBJSON struct {
	HAWBNumber string           `json:"hawbNumber"`
	MAWBNumber string           `json:"mawbNumber"`
	Status     string           `json:"status"`
	Pieces     int              `json:"pieces"`
	Weight     float64          `json:"weight"`
	Shipper    domain.FullParty `json:"shipper"`
	Consignee  domain.FullParty `json:"consignee"`
}

func ToHAWBJSON(h domain.HAWBCreated) HAWBJSON {
	return HAWBJSON{HAWBNumber: h.HAWBNumber, MAWBNumber: h.MAWBNumber, Status: "created", Pieces: h.Pieces, Weight: h.WeightKg,
		Shipper: h.Shipper, Consignee: h.Consignee}
}

// renderWaybill is the webhook data of a MAWB or HAWB: the waybill as the
// shipment shows it.
func (r *Renderer) renderWaybill(e domain.Event, p domain.Principal) (any, bool) {
	switch e := e.(type) {
	case domain.MAWBCreated:
		return ToMAWBJSON(e), r.ShipmentFacts.Ownership(e.AWBNumber).VisibleTo(p)
	case domain.HAWBCreated:
		return ToHAWBJSON(e), r.ShipmentFacts.Ownership(e.MAWBNumber).VisibleTo(p)
	}
	return nil, false
}
