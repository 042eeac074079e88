package httpapi

import (
	"net/http"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/views"
)

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

// forwarderFiling reads the body of a forwarder's filing into req and
// returns the AWB its awbNumber names, which must be the forwarder's own
// shipment, or no forwarder's yet, and the forwarder whose AWB stock alone
// makes it its own (see commands.Handler.SubmitPLACI).
func (s *Server) forwarderFiling(r *http.Request, req any, awbNumber *string) (awb string, stockHolder string, err error) {
	if err := decodeJSON(r, req); err != nil {
		return "", "", err
	}
	if awb, err = awbField("awbNumber", *awbNumber); err != nil {
		return "", "", err
	}
	owner, p := s.shipmentFacts.Ownership(awb), principal(r.Context())
	return awb, owner.HeldInStockBy(), owner.CheckFiler(p)
}

// handleSubmitPLACI files PLACI (forwarders).
func (s *Server) handleSubmitPLACI() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req placiRequest
		awb, stockHolder, err := s.forwarderFiling(r, &req, &req.AWBNumber)
		if err != nil {
			return err
		}
		res, err := s.commands.SubmitPLACI(r.Context(), meta(r), domain.PLACISubmitted{AWBNumber: awb, Origin: req.Origin, Destination: req.Destination,
			DepartureDate: req.DepartureDate, CargoDescription: req.CargoDescription, ShipperName: req.ShipperName, ShipperAddress: req.ShipperAddress,
			ConsigneeName: req.ConsigneeName, ConsigneeAddress: req.ConsigneeAddress, Pieces: req.Pieces, WeightKg: req.Weight},
			s.bookings, stockHolder)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/shipments/"+awb)
		writeJSON(w, http.StatusCreated, views.ToPLACIJSON(res.Event.(domain.PLACISubmitted)))
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
		owner, p := s.shipmentFacts.Ownership(awb), principal(r.Context())
		if err := domain.CheckCSDFiler(p, owner); err != nil {
			return err
		}
		res, err := s.commands.SubmitCSD(r.Context(), meta(r), domain.SubmitCSD{
			CSDSubmitted: domain.CSDSubmitted{AWBNumber: awb, SecurityStatus: req.SecurityStatus, ScreeningMethods: req.ScreeningMethods,
				ScreeningResult: req.ScreeningResult, Exemption: req.Exemption, RegulatedEntity: req.RegulatedEntity},
			ScreeningMethod: req.ScreeningMethod, ScreeningDate: req.ScreeningDate, Carriers: s.shipmentFacts.ForManifest(awb).Carriers()},
			owner.HeldInStockBy())
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/shipments/"+awb)
		writeJSON(w, http.StatusCreated, views.ToCSDJSON(res.Event.(domain.CSDSubmitted)))
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

// handleSubmitDGD files a shipper's declaration for dangerous goods
// (forwarders, as the shipper's agent).
func (s *Server) handleSubmitDGD() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req dgdRequest
		awb, stockHolder, err := s.forwarderFiling(r, &req, &req.AWBNumber)
		if err != nil {
			return err
		}
		res, err := s.commands.SubmitDGD(r.Context(), meta(r), domain.SubmitDGD{
			DGDSubmitted: domain.DGDSubmitted{AWBNumber: awb, UNNumber: req.UNNumber, ProperShippingName: req.ProperShippingName, Class: req.Class,
				GrossWeightKg: req.GrossWeight, PackingGroup: req.PackingGroup, PackingInstructions: req.PackingInstructions,
				LimitedQuantity: req.LimitedQuantity, ExceptedQuantity: req.ExceptedQuantity, ShipperDeclaration: req.ShipperDeclaration},
			Quantity: req.Quantity, NetWeightKg: req.NetWeight, Carriers: s.shipmentFacts.ForManifest(awb).Carriers()}, stockHolder)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/shipments/"+awb)
		writeJSON(w, http.StatusCreated, views.ToDGDJSON(res.Event.(domain.DGDSubmitted)))
		return nil
	}
}
