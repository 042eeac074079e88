package views

import (
	"cmp"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

// StatusEventCreatedJSON is the spec's shipment event response.
type StatusEventCreatedJSON struct {
	EventID    string    `json:"eventId"`
	AWBNumber  string    `json:"awbNumber"`
	EventType  string    `json:"eventType"`
	RecordedAt time.Time `json:"recordedAt"`
}

// ToStatusEventCreatedJSON names the event type as it was posted: the
// status code, with its discrepancy code after a slash.
func ToStatusEventCreatedJSON(e domain.ShipmentStatusRecorded) StatusEventCreatedJSON {
	code := e.StatusCode
	if e.DiscrepancyCode != "" {
		code += "/" + e.DiscrepancyCode
	}
	return StatusEventCreatedJSON{EventID: e.StatusEventID, AWBNumber: e.AWBNumber, EventType: code, RecordedAt: e.RecordedAt}
}

// StatusEventJSON is one event of a shipment's timeline.
type StatusEventJSON struct {
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

// ToStatusEventJSON gives the XFSU code of status events only: filings in
// the timeline have none.
func ToStatusEventJSON(entry projections.TimelineEntry) StatusEventJSON {
	e := entry.Event
	out := StatusEventJSON{EventID: e.StatusEventID, AWBNumber: e.AWBNumber, EventType: e.StatusCode, Source: entry.Source,
		DiscrepancyCode: orNull(e.DiscrepancyCode), EventDate: e.EventDate, Location: orNull(e.Location), Pieces: e.Pieces, Weight: e.Weight,
		Notes: e.Notes, RecordedAt: e.RecordedAt}
	if entry.IsStatus() {
		out.XFSUCode = orNull(e.XFSUCode())
	}
	return out
}

// TimelineJSON is a shipment's timeline, or the part of it asked for.
type TimelineJSON struct {
	AWBNumber string            `json:"awbNumber"`
	Events    []StatusEventJSON `json:"events"`
}

// ShipmentJSON is the consolidated shipment.
type ShipmentJSON struct {
	AWBNumber      string           `json:"awbNumber"`
	Booking        *BookingJSON     `json:"booking"`
	MAWB           *MAWBJSON        `json:"mawb"`
	HAWBs          []HAWBJSON       `json:"hawbs"`
	PLACI          *PLACIJSON       `json:"placi"`
	CSD            *CSDJSON         `json:"csd"`
	DangerousGoods []DGDJSON        `json:"dangerousGoods"`
	Documents      []DocumentJSON   `json:"documents"`
	LatestEvent    *StatusEventJSON `json:"latestEvent"`
	Declared       CargoJSON        `json:"declared"`
	Reported       CargoJSON        `json:"reported"`
	EventCount     int              `json:"eventCount"`
}

// CargoJSON is pieces and weight as declared or as reported.
type CargoJSON struct {
	Pieces *int     `json:"pieces"`
	Weight *float64 `json:"weight"`
}

// Shipment is what is known of one AWB, from the read models.
type Shipment struct {
	AWBNumber string
	Booking   *domain.Booking // nil when no booking carries the AWB
	Waybills  domain.Waybills
	Filings   domain.Compliance
	Documents []domain.DocumentUploaded
	Timeline  []projections.TimelineEntry
}

// ShipmentOf is what parts, the live read models or a past moment's (see
// projections.Past), know of one AWB.
func ShipmentOf(parts projections.ShipmentParts, awb string) Shipment {
	s := Shipment{AWBNumber: awb, Waybills: parts.Shipments.Waybills(awb), Filings: parts.Shipments.Compliance(awb),
		Documents: parts.Documents.ByAWB(awb), Timeline: parts.Shipments.Timeline(awb)}
	if b, booked := parts.Bookings.ByAWB(awb); booked {
		s.Booking = &b
	}
	return s
}

// ToShipmentJSON is the shipment as far as it is known: the booking that
// carries the AWB, the latest status, and pieces and weight as declared
// against as last reported.
func ToShipmentJSON(s Shipment) ShipmentJSON {
	out := ShipmentJSON{AWBNumber: s.AWBNumber, EventCount: len(s.Timeline), HAWBs: []HAWBJSON{}, DangerousGoods: []DGDJSON{}, Documents: []DocumentJSON{}}
	var booking domain.Booking
	if b := s.Booking; b != nil {
		bj := ToBookingJSON(*b)
		out.Booking = &bj
		booking = *b
	}
	if m := s.Waybills.MAWB; m != nil {
		mj := ToMAWBJSON(*m)
		out.MAWB = &mj
	}
	// The declaration the status events' pieces are checked against: a
	// booking cancelled since declares nothing.
	if d := domain.Declared(s.AWBNumber, booking, s.Waybills.MAWB); d.Pieces > 0 {
		out.Declared = CargoJSON{Pieces: &d.Pieces, Weight: &d.WeightKg}
	}
	for _, h := range s.Waybills.HAWBs {
		out.HAWBs = append(out.HAWBs, ToHAWBJSON(h))
	}
	if f := s.Filings.PLACI; f != nil {
		pj := ToPLACIJSON(*f)
		out.PLACI = &pj
	}
	if f := s.Filings.CSD; f != nil {
		cj := ToCSDJSON(*f)
		out.CSD = &cj
	}
	for _, d := range s.Filings.DGDs {
		out.DangerousGoods = append(out.DangerousGoods, ToDGDJSON(d))
	}
	for _, d := range s.Documents {
		out.Documents = append(out.Documents, ToDocumentJSON(d))
	}
	for _, entry := range s.Timeline {
		if !entry.IsStatus() {
			continue
		}
		latest := ToStatusEventJSON(entry)
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
	return out
}

// renderStatusEvent is the webhook data of a status event.
func (r *Renderer) renderStatusEvent(e domain.Event, p domain.Principal) (any, bool) {
	se, ok := e.(domain.ShipmentStatusRecorded)
	if !ok || !r.ShipmentFacts.Ownership(se.AWBNumber).VisibleTo(p) {
		return nil, false
	}
	return ToStatusEventJSON(projections.TimelineEntry{Event: se, Source: cmp.Or(se.Source, projections.SourceStatus)}), true
}
