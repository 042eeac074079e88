package httpapi

import (
	"cmp"
	"net/http"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/projections"
	"github.com/gorilla/mux"
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

// statusEventCreatedJSON is the spec's shipment event response.
type statusEventCreatedJSON struct {
	EventID    string    `json:"eventId"`
	AWBNumber  string    `json:"awbNumber"`
	EventType  string    `json:"eventType"`
	RecordedAt time.Time `json:"recordedAt"`
}

// statusEventJSON is one event of a shipment's timeline.
type statusEventJSON struct {
	EventID         string    `json:"eventId"`
	AWBNumber       string    `json:"awbNumber"`
	EventType       string    `json:"eventType"`
	Source          string    `json:"source"`
	DiscrepancyCode *string   `json:"discrepancyCode"`
	XFSUCode        *string   `json:"xfsuCode"`
	EventDate       time.Time `json:"eventDate"`
	Location        *string   `json:"location"`
	Pieces          *int      `json:"pieces"`
	Weight          *float64  `json:"weight"`
	Notes           string    `json:"notes"`
	RecordedAt      time.Time `json:"recordedAt"`
}

func toStatusEventJSON(entry projections.TimelineEntry) statusEventJSON {
	e := entry.Event
	out := statusEventJSON{EventID: e.StatusEventID, AWBNumber: e.AWBNumber, EventType: e.StatusCode, Source: entry.Source,
		DiscrepancyCode: orNull(e.DiscrepancyCode), EventDate: e.EventDate, Location: orNull(e.Location), Pieces: e.Pieces, Weight: e.Weight,
		Notes: e.Notes, RecordedAt: e.RecordedAt}
	if entry.IsStatus() {
		out.XFSUCode = orNull(e.XFSUCode())
	}
	return out
}

// shipmentAWB reads the AWB number of the path.
func shipmentAWB(r *http.Request) (string, error) {
	awb, err := domain.ParseAWB(mux.Vars(r)["awb"])
	if err != nil {
		var p domain.Problems
		p.Add("awb", domain.CodeInvalidAWBNumber, "%s", err.Error())
		return "", p.Err()
	}
	return awb, nil
}

// handleRecordStatus records a status event; status events are the
// airline's to post, for AWBs of its prefix.
func (s *Server) handleRecordStatus() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		awb, err := shipmentAWB(r)
		if err != nil {
			return err
		}
		if p := principal(r.Context()); p.Role != domain.RoleAirline || p.AWBPrefix != awb[:3] {
			return domain.Errorf(domain.Forbidden, "status events of %s are posted by the airline with prefix %s", awb, awb[:3])
		}
		var req statusEventRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		res, err := s.commands.RecordShipmentStatus(r.Context(), meta(r), domain.RecordStatus{AWBNumber: awb, EventType: req.EventType,
			DiscrepancyCode: req.DiscrepancyCode, EventDate: req.EventDate, Location: req.Location, Pieces: req.Pieces, Weight: req.Weight, Notes: req.Notes})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		e := res.Event.(domain.ShipmentStatusRecorded)
		code := e.StatusCode
		if e.DiscrepancyCode != "" {
			code += "/" + e.DiscrepancyCode
		}
		w.Header().Set("Location", "/api/shipments/"+awb+"/events")
		writeJSON(w, http.StatusCreated, statusEventCreatedJSON{EventID: e.StatusEventID, AWBNumber: awb, EventType: code, RecordedAt: e.RecordedAt})
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
		eventType := strings.ToUpper(strings.TrimSpace(q.Get("eventType")))
		code, disc, _ := strings.Cut(eventType, "/")
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
		out := struct {
			AWBNumber string            `json:"awbNumber"`
			Events    []statusEventJSON `json:"events"`
		}{AWBNumber: awb, Events: []statusEventJSON{}}
		for _, entry := range timeline {
			e := entry.Event
			if (code != "" && e.StatusCode != code) || (disc != "" && e.DiscrepancyCode != disc) ||
				(!from.IsZero() && e.EventDate.Before(from)) || (!to.IsZero() && !e.EventDate.Before(to)) {
				continue
			}
			out.Events = append(out.Events, toStatusEventJSON(entry))
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// shipmentJSON is the consolidated shipment.
type shipmentJSON struct {
	AWBNumber      string           `json:"awbNumber"`
	Booking        *bookingJSON     `json:"booking"`
	MAWB           *mawbJSON        `json:"mawb"`
	HAWBs          []hawbJSON       `json:"hawbs"`
	PLACI          *placiJSON       `json:"placi"`
	CSD            *csdJSON         `json:"csd"`
	DangerousGoods []dgdJSON        `json:"dangerousGoods"`
	Documents      []documentJSON   `json:"documents"`
	LatestEvent    *statusEventJSON `json:"latestEvent"`
	Declared       cargoJSON        `json:"declared"`
	Reported       cargoJSON        `json:"reported"`
	EventCount     int              `json:"eventCount"`
}

type cargoJSON struct {
	Pieces *int     `json:"pieces"`
	Weight *float64 `json:"weight"`
}

// handleShipment is the consolidated shipment as far as it is known: the
// booking that carries the AWB, the latest status, and pieces and weight
// as booked against as last reported.
func (s *Server) handleShipment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		awb, err := shipmentAWB(r)
		if err != nil {
			return err
		}
		b, booked := s.bookings.ByAWB(awb)
		timeline := s.shipments.Timeline(awb)
		waybills, filings := s.shipments.Waybills(awb), s.shipments.Compliance(awb)
		if !s.shipmentFacts.Ownership(awb).VisibleTo(principal(r.Context())) || (!booked && len(timeline) == 0) {
			return domain.Errorf(domain.NotFound, "no shipment %s", awb)
		}
		out := shipmentJSON{AWBNumber: awb, EventCount: len(timeline), HAWBs: []hawbJSON{}, DangerousGoods: []dgdJSON{}, Documents: []documentJSON{}}
		if booked {
			bj := toBookingJSON(b)
			out.Booking = &bj
			out.Declared = cargoJSON{Pieces: &b.Pieces, Weight: &b.WeightKg}
		}
		if m := waybills.MAWB; m != nil {
			mj := toMAWBJSON(*m)
			out.MAWB = &mj
			// The air waybill is the declaration of record.
			out.Declared = cargoJSON{Pieces: &m.Pieces, Weight: &m.WeightKg}
		}
		for _, h := range waybills.HAWBs {
			out.HAWBs = append(out.HAWBs, toHAWBJSON(h))
		}
		if f := filings.PLACI; f != nil {
			pj := toPLACIJSON(*f)
			out.PLACI = &pj
		}
		if f := filings.CSD; f != nil {
			cj := toCSDJSON(*f)
			out.CSD = &cj
		}
		for _, d := range filings.DGDs {
			out.DangerousGoods = append(out.DangerousGoods, toDGDJSON(d))
		}
		for _, d := range s.documents.ByAWB(awb) {
			out.Documents = append(out.Documents, toDocumentJSON(d))
		}
		for _, entry := range timeline {
			if !entry.IsStatus() {
				continue
			}
			latest := toStatusEventJSON(entry)
			out.LatestEvent = &latest
			// A discrepancy's pieces and weight are the discrepancy's (so
			// many offloaded), not the shipment's.
			if e := entry.Event; e.StatusCode != "DIS" {
				if e.Pieces != nil {
					out.Reported.Pieces = e.Pieces
				}
				if e.Weight != nil {
					out.Reported.Weight = e.Weight
				}
			}
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// renderShipmentEvent is the webhook data of a status event.
func (s *Server) renderShipmentEvent(rec eventstore.Record, e domain.Event, p domain.Principal) (any, bool) {
	se, ok := e.(domain.ShipmentStatusRecorded)
	if !ok || !s.shipmentFacts.Ownership(se.AWBNumber).VisibleTo(p) {
		return nil, false
	}
	return toStatusEventJSON(projections.TimelineEntry{Event: se, Source: cmp.Or(se.Source, projections.SourceStatus)}), true
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

// mawbCreatedJSON is the spec's MAWB response.
type mawbCreatedJSON struct {
	AWBNumber string    `json:"awbNumber"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
}

// mawbJSON is a master waybill in the consolidated shipment.
type mawbJSON struct {
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

func toMAWBJSON(m domain.MAWBCreated) mawbJSON {
	return mawbJSON{AWBNumber: m.AWBNumber, Origin: m.Origin, Destination: m.Destination, Pieces: m.Pieces, Weight: m.WeightKg,
		Volume: m.VolumeM3, Commodity: m.Commodity, Shipper: m.Shipper, Consignee: m.Consignee, Status: "created", CreatedAt: m.CreatedAt}
}

type hawbRequest struct {
	HAWBNumber string           `json:"hawbNumber"`
	MAWBNumber string           `json:"mawbNumber"`
	Pieces     *int             `json:"pieces"`
	Weight     *float64         `json:"weight"`
	Shipper    domain.FullParty `json:"shipper"`
	Consignee  domain.FullParty `json:"consignee"`
}

// hawbJSON is the spec's HAWB response, and a house in the shipment.
type hawbJSON struct {
	HAWBNumber string           `json:"hawbNumber"`
	MAWBNumber string           `json:"mawbNumber"`
	Status     string           `json:"status"`
	Pieces     int              `json:"pieces"`
	Weight     float64          `json:"weight"`
	Shipper    domain.FullParty `json:"shipper"`
	Consignee  domain.FullParty `json:"consignee"`
}

func toHAWBJSON(h domain.HAWBCreated) hawbJSON {
	return hawbJSON{HAWBNumber: h.HAWBNumber, MAWBNumber: h.MAWBNumber, Status: "created", Pieces: h.Pieces, Weight: h.WeightKg,
		Shipper: h.Shipper, Consignee: h.Consignee}
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
		b, booked := s.bookings.ByAWB(awb)
		res, err := s.commands.CreateMAWB(r.Context(), meta(r), domain.CreateMAWB{AWBNumber: awb, Origin: req.Origin, Destination: req.Destination,
			Pieces: req.Pieces, WeightKg: req.Weight, VolumeM3: req.Volume, Commodity: req.Commodity, Shipper: req.Shipper, Consignee: req.Consignee},
			booked && b.OrganizationID == principal(r.Context()).OrganizationID)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/shipments/"+awb)
		writeJSON(w, http.StatusCreated, mawbCreatedJSON{AWBNumber: awb, Status: "created", CreatedAt: res.Event.(domain.MAWBCreated).CreatedAt})
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
		writeJSON(w, http.StatusCreated, toHAWBJSON(h))
		return nil
	}
}

// renderWaybill is the webhook data of a MAWB or HAWB: the waybill as the
// shipment shows it.
func (s *Server) renderWaybill(e domain.Event, p domain.Principal) (any, bool) {
	switch e := e.(type) {
	case domain.MAWBCreated:
		return toMAWBJSON(e), s.shipmentFacts.Ownership(e.AWBNumber).VisibleTo(p)
	case domain.HAWBCreated:
		return toHAWBJSON(e), s.shipmentFacts.Ownership(e.MAWBNumber).VisibleTo(p)
	}
	return nil, false
}
