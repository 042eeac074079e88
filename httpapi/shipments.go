package httpapi

import (
	"net/http"
	"strings"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/views"
)

type statusEventRequest struct {
	EventType       string   `json:"eventType"`
	DiscrepancyCode string   `json:"discrepancyCode"`
	EventDate       string   `json:"eventDate"`
	Location        string   `json:"location"`
	Pieces          *int     `json:"pieces"`
	Weight          *float64 `json:"weight"`
	Notes           string   `json:"notes"`
}

// shipmentAWB reads the AWB number of the path.
func shipmentAWB(r *http.Request) (string, error) {
	awb, err := domain.ParseAWB(r.PathValue("awb"))
	if err != nil {
		var p domain.Problems
		p.Add("awb", domain.CodeInvalidAWBNumber, "%s", err.Error())
		return "", p.Err()
	}
	return awb, nil
}

// handleRecordStatus records a status event of the carrying airline (see
// domain.CheckStatusPoster), who is checked before the body is read.
func (s *Server) handleRecordStatus() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		awb, err := shipmentAWB(r)
		if err != nil {
			return err
		}
		if err := domain.CheckStatusPoster(principal(r.Context()), awb); err != nil {
			return err
		}
		var req statusEventRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		m, err := changeMeta(r)
		if err != nil {
			return err
		}
		res, repeated, err := s.commands.RecordShipmentStatus(r.Context(), m, domain.RecordStatus{AWBNumber: awb, EventType: req.EventType,
			DiscrepancyCode: req.DiscrepancyCode, EventDate: req.EventDate, Location: req.Location, Pieces: req.Pieces, Weight: req.Weight, Notes: req.Notes},
			s.bookings, s.shipmentFacts.Ownership(awb).HeldInStockBy())
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		setVersion(w, res.Version)
		w.Header().Set("Location", "/api/shipments/"+awb+"/events")
		if repeated != nil {
			// A departure or arrival the flight already gave the
			// shipment: the status on record answers, as a repeat would.
			writeJSON(w, http.StatusOK, views.ToStatusEventCreatedJSON(*repeated))
			return nil
		}
		writeJSON(w, http.StatusCreated, views.ToStatusEventCreatedJSON(res.Event.(domain.ShipmentStatusRecorded)))
		return nil
	}
}

// handleShipmentEvents is a shipment's timeline, in event order, filtered
// by eventType (a code, or DIS/OFLD) and eventDate from/to.
func (s *Server) handleShipmentEvents() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		awb, err := shipmentAWB(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		var p domain.Problems
		from, to := timeWindow(q, &p)
		eventType := strings.TrimSpace(q.Get("eventType"))
		code, disc := domain.SplitEventType(eventType)
		if eventType != "" && !projections.IsTimelineType(code, disc) {
			p.Add("eventType", domain.CodeInvalidEventType, "must be an IATA status code (RCS, MAN, DEP, DIS/OFLD, …) or a filing (%s)", strings.Join(projections.FilingKinds, ", "))
		}
		if err := p.Err(); err != nil {
			return err
		}
		timeline := s.shipments.Timeline(awb)
		if !s.shipmentFacts.Ownership(awb).VisibleTo(principal(r.Context())) || len(timeline) == 0 {
			return domain.Errorf(domain.NotFound, "no shipment events of %s", awb)
		}
		out := views.TimelineJSON{AWBNumber: awb, Events: []views.StatusEventJSON{}}
		for _, entry := range timeline {
			e := entry.Event
			if (code != "" && e.StatusCode != code) || (disc != "" && e.DiscrepancyCode != disc) ||
				(!from.IsZero() && e.EventDate.Before(from)) || (!to.IsZero() && !e.EventDate.Before(to)) {
				continue
			}
			out.Events = append(out.Events, views.ToStatusEventJSON(entry))
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// handleShipment is the consolidated shipment (see views.ToShipmentJSON)
// to those who may see it, now or as it was at a past moment (?at=,
// ?seq=). Its ETag is the version of its status events, what If-Match on
// a status event names; its waybills, filings and documents have
// versions of their own, so it answers no If-None-Match.
func (s *Server) handleShipment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		awb, err := shipmentAWB(r)
		if err != nil {
			return err
		}
		cut, past, err := pastCut(r)
		if err != nil {
			return err
		}
		live := projections.ShipmentParts{Bookings: s.bookings, Shipments: s.shipments, Documents: s.documents}
		if !s.shipmentFacts.Ownership(awb).VisibleTo(principal(r.Context())) || !live.Exists(awb) {
			return domain.Errorf(domain.NotFound, "no shipment %s", awb)
		}
		parts := live
		if past {
			if parts, err = s.past.Shipment(r.Context(), live, awb, cut); err != nil {
				return err
			}
		}
		setVersion(w, parts.Shipments.Version(awb))
		writeJSON(w, http.StatusOK, views.ToShipmentJSON(views.ShipmentOf(parts, awb)))
		return nil
	}
}

type mawbRequest struct {
	AWBNumber   string           `json:"awbNumber"`
	Origin      string           `json:"origin"`
	Destination string           `json:"destination"`
	Pieces      *int             `json:"pieces"`
	Weight      *float64         `json:"weight"`
	Commodity   string           `json:"commodity"`
	Shipper     domain.FullParty `json:"shipper"`
	Consignee   domain.FullParty `json:"consignee"`
	Volume      *float64         `json:"volume"`
}

type hawbRequest struct {
	HAWBNumber string           `json:"hawbNumber"`
	MAWBNumber string           `json:"mawbNumber"`
	Pieces     *int             `json:"pieces"`
	Weight     *float64         `json:"weight"`
	Shipper    domain.FullParty `json:"shipper"`
	Consignee  domain.FullParty `json:"consignee"`
}

// awbField reads an AWB number of a body field.
func awbField(field, value string) (string, error) {
	awb, err := domain.ParseAWB(value)
	if err != nil {
		var p domain.Problems
		p.Add(field, domain.CodeInvalidAWBNumber, "%s", err.Error())
		return "", p.Err()
	}
	return awb, nil
}

// handleCreateMAWB files a forwarder's master air waybill.
func (s *Server) handleCreateMAWB() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req mawbRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		awb, err := awbField("awbNumber", req.AWBNumber)
		if err != nil {
			return err
		}
		res, err := s.commands.CreateMAWB(r.Context(), meta(r), domain.CreateMAWB{AWBNumber: awb, Origin: req.Origin, Destination: req.Destination,
			Pieces: req.Pieces, WeightKg: req.Weight, VolumeM3: req.Volume, Commodity: req.Commodity, Shipper: req.Shipper, Consignee: req.Consignee},
			s.bookings)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/shipments/"+awb)
		writeJSON(w, http.StatusCreated, views.ToMAWBCreatedJSON(res.Event.(domain.MAWBCreated)))
		return nil
	}
}

// handleCreateHAWB files a house waybill under one of the forwarder's
// masters.
func (s *Server) handleCreateHAWB() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req hawbRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		mawb, err := awbField("mawbNumber", req.MAWBNumber)
		if err != nil {
			return err
		}
		res, err := s.commands.CreateHAWB(r.Context(), meta(r), domain.CreateHAWB{HAWBNumber: req.HAWBNumber, MAWBNumber: mawb,
			Pieces: req.Pieces, WeightKg: req.Weight, Shipper: req.Shipper, Consignee: req.Consignee})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		h := res.Event.(domain.HAWBCreated)
		w.Header().Set("Location", "/api/shipments/"+mawb)
		writeJSON(w, http.StatusCreated, views.ToHAWBJSON(h))
		return nil
	}
}
