package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// renderCompliance is the webhook data of a PLACI or e-CSD.
func (s *Server) renderCompliance(e domain.Event, p domain.Principal) (any, bool) {
	switch e := e.(type) {
	case domain.PLACISubmitted:
		return toPLACIJSON(e), s.shipmentFacts.Ownership(e.AWBNumber).VisibleTo(p)
	case domain.CSDSubmitted:
		return toCSDJSON(e), s.shipmentFacts.Ownership(e.AWBNumber).VisibleTo(p)
	case domain.DGDSubmitted:
		return toDGDJSON(e), s.shipmentFacts.Ownership(e.AWBNumber).VisibleTo(p)
	}
	return nil, false
}

type placiRequest struct {
	AWBNumber        string   `json:"awbNumber"`
	Origin           string   `json:"origin"`
	Destination      string   `json:"destination"`
	DepartureDate    string   `json:"departureDate"`
	CargoDescription string   `json:"cargoDescription"`
	ShipperName      string   `json:"shipperName"`
	ConsigneeName    string   `json:"consigneeName"`
	ShipperAddress   string   `json:"shipperAddress"`
	ConsigneeAddress string   `json:"consigneeAddress"`
	Pieces           *int     `json:"pieces"`
	Weight           *float64 `json:"weight"`
}

// placiJSON is the spec's PLACI response, and the filing in the shipment.
type placiJSON struct {
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

func toPLACIJSON(p domain.PLACISubmitted) placiJSON {
	return placiJSON{PLACIID: p.PLACIID, AWBNumber: p.AWBNumber, Status: "submitted", Origin: p.Origin, Destination: p.Destination,
		DepartureDate: p.DepartureDate, CargoDescription: p.CargoDescription, ShipperName: p.ShipperName, ShipperAddress: orNull(p.ShipperAddress),
		ConsigneeName: p.ConsigneeName, ConsigneeAddress: orNull(p.ConsigneeAddress), Pieces: p.Pieces, Weight: p.WeightKg, SubmittedAt: p.SubmittedAt}
}

type csdRequest struct {
	AWBNumber        string                  `json:"awbNumber"`
	ScreeningMethod  string                  `json:"screeningMethod"`
	ScreeningDate    string                  `json:"screeningDate"`
	ScreeningResult  string                  `json:"screeningResult"`
	SecurityStatus   string                  `json:"securityStatus"`
	ScreeningMethods []string                `json:"screeningMethods"`
	Exemption        string                  `json:"exemption"`
	RegulatedEntity  *domain.RegulatedEntity `json:"regulatedEntity"`
}

// csdJSON is the spec's e-CSD response, and the declaration in the
// shipment.
type csdJSON struct {
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
}

func toCSDJSON(c domain.CSDSubmitted) csdJSON {
	methods := c.ScreeningMethods
	if methods == nil {
		methods = []string{}
	}
	var screened *time.Time
	if !c.ScreeningDate.IsZero() {
		screened = &c.ScreeningDate
	}
	return csdJSON{CSDID: c.CSDID, AWBNumber: c.AWBNumber, Status: "submitted", SecurityStatus: c.SecurityStatus,
		ScreeningMethods: methods, ScreeningResult: orNull(c.ScreeningResult), ScreeningDate: screened, Exemption: orNull(c.Exemption),
		RegulatedEntity: c.RegulatedEntity, SubmittedAt: c.SubmittedAt}
}

// forwarderFiling reads the body of a forwarder's filing into req and
// returns the AWB its awbNumber names, which must be the forwarder's own
// shipment, or no forwarder's yet.
func (s *Server) forwarderFiling(r *http.Request, req any, awbNumber *string) (string, error) {
	if err := decodeJSON(r, req); err != nil {
		return "", err
	}
	awb, err := awbField("awbNumber", *awbNumber)
	if err != nil {
		return "", err
	}
	return awb, s.shipmentFacts.Ownership(awb).CheckFiler(principal(r.Context()))
}

// handleSubmitPLACI files PLACI (forwarders).
func (s *Server) handleSubmitPLACI() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req placiRequest
		awb, err := s.forwarderFiling(r, &req, &req.AWBNumber)
		if err != nil {
			return err
		}
		res, err := s.commands.SubmitPLACI(r.Context(), meta(r), domain.PLACISubmitted{AWBNumber: awb, Origin: req.Origin, Destination: req.Destination,
			DepartureDate: req.DepartureDate, CargoDescription: req.CargoDescription, ShipperName: req.ShipperName, ShipperAddress: req.ShipperAddress,
			ConsigneeName: req.ConsigneeName, ConsigneeAddress: req.ConsigneeAddress, Pieces: req.Pieces, WeightKg: req.Weight})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/shipments/"+awb)
		writeJSON(w, http.StatusCreated, toPLACIJSON(res.Event.(domain.PLACISubmitted)))
		return nil
	}
}

// handleSubmitCSD files an e-CSD: a forwarder (as regulated agent) or the
// airline of the AWB's prefix.
func (s *Server) handleSubmitCSD() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req csdRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		awb, err := awbField("awbNumber", req.AWBNumber)
		if err != nil {
			return err
		}
		if err := domain.CheckCSDFiler(principal(r.Context()), s.shipmentFacts.Ownership(awb)); err != nil {
			return err
		}
		res, err := s.commands.SubmitCSD(r.Context(), meta(r), domain.SubmitCSD{
			CSDSubmitted: domain.CSDSubmitted{AWBNumber: awb, SecurityStatus: req.SecurityStatus, ScreeningMethods: req.ScreeningMethods,
				ScreeningResult: req.ScreeningResult, Exemption: req.Exemption, RegulatedEntity: req.RegulatedEntity},
			ScreeningMethod: req.ScreeningMethod, ScreeningDate: req.ScreeningDate})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/shipments/"+awb)
		writeJSON(w, http.StatusCreated, toCSDJSON(res.Event.(domain.CSDSubmitted)))
		return nil
	}
}

type dgdRequest struct {
	AWBNumber           string   `json:"awbNumber"`
	UNNumber            string   `json:"unNumber"`
	ProperShippingName  string   `json:"properShippingName"`
	Class               string   `json:"class"`
	Quantity            *float64 `json:"quantity"`
	NetWeight           *float64 `json:"netWeight"`
	GrossWeight         *float64 `json:"grossWeight"`
	PackingGroup        string   `json:"packingGroup"`
	PackingInstructions string   `json:"packingInstructions"`
	LimitedQuantity     bool     `json:"limitedQuantity"`
	ExceptedQuantity    bool     `json:"exceptedQuantity"`
	ShipperDeclaration  string   `json:"shipperDeclaration"`
}

// dgdJSON is the spec's e-DGD response, and a declaration in the
// shipment. reviewNotes joins the warnings found on submission (a proper
// shipping name other than the reference's, a UN number the reference
// does not hold); it is empty when there are none.
type dgdJSON struct {
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

func toDGDJSON(d domain.DGDSubmitted) dgdJSON {
	return dgdJSON{DGDID: d.DGDID, AWBNumber: d.AWBNumber, Status: "submitted", SubmittedAt: d.SubmittedAt, ValidUntil: d.ValidUntil,
		ReviewNotes: strings.Join(d.ReviewNotes, "; "), UNNumber: d.UNNumber, ProperShippingName: d.ProperShippingName, Class: d.Class,
		PackingGroup: orNull(d.PackingGroup), PackingInstructions: orNull(d.PackingInstructions), Quantity: d.Quantity, NetWeight: d.NetWeightKg,
		GrossWeight: d.GrossWeightKg, LimitedQuantity: d.LimitedQuantity, ExceptedQuantity: d.ExceptedQuantity}
}

// handleSubmitDGD files a shipper's declaration for dangerous goods
// (forwarders, as the shipper's agent).
func (s *Server) handleSubmitDGD() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req dgdRequest
		awb, err := s.forwarderFiling(r, &req, &req.AWBNumber)
		if err != nil {
			return err
		}
		res, err := s.commands.SubmitDGD(r.Context(), meta(r), domain.SubmitDGD{
			DGDSubmitted: domain.DGDSubmitted{AWBNumber: awb, UNNumber: req.UNNumber, ProperShippingName: req.ProperShippingName, Class: req.Class,
				GrossWeightKg: req.GrossWeight, PackingGroup: req.PackingGroup, PackingInstructions: req.PackingInstructions,
				LimitedQuantity: req.LimitedQuantity, ExceptedQuantity: req.ExceptedQuantity, ShipperDeclaration: req.ShipperDeclaration},
			Quantity: req.Quantity, NetWeightKg: req.NetWeight})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/shipments/"+awb)
		writeJSON(w, http.StatusCreated, toDGDJSON(res.Event.(domain.DGDSubmitted)))
		return nil
	}
}
