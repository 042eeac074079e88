package projections

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cargostream/cargostream/domain"
)

// History answers the event histories of resources: the events of an
// aggregate, or of every aggregate one air waybill touches, as far as the
// caller may see them. The read models say which aggregates exist and who
// may read them (by domain's rules); the events come from the stream.
type History struct {
	Events        Histories
	Quotes        *Quotes
	Bookings      *Bookings
	Stock         *AWBStock
	Flights       *Flights
	Documents     *Documents
	ShipmentFacts ShipmentFacts
}

// HistoryPage is one page (from 1) of a history, oldest first, and how
// many events it has in all.
type HistoryPage struct {
	Records []domain.Record
	Total   int
}

// Quote is the history of a quote p may see, with only the price options
// p sees in its pricing (see domain.QuotePriced.AsSeenBy), and only the
// bookings p sees in its acceptances (domain.QuoteAccepted.AsSeenBy).
func (h History) Quote(ctx context.Context, p domain.Principal, id string, page, limit int) (HistoryPage, error) {
	if _, ok := h.Quotes.Get(p, id); !ok {
		return HistoryPage{}, domain.Errorf(domain.NotFound, "no quote %s", id)
	}
	records, err := h.load(ctx, domain.Aggregate{Type: domain.AggregateQuote, ID: id})
	if err != nil {
		return HistoryPage{}, err
	}
	return pageOfHistory(p, records, quoteRecordsSeenBy(p), page, limit)
}

// Booking is the history of a booking p may see.
func (h History) Booking(ctx context.Context, p domain.Principal, id string, page, limit int) (HistoryPage, error) {
	if _, ok := h.Bookings.Get(p, id); !ok {
		return HistoryPage{}, domain.Errorf(domain.NotFound, "no booking %s", id)
	}
	return h.whole(ctx, p, domain.Aggregate{Type: domain.AggregateBooking, ID: id}, page, limit)
}

// StockRequest is the history of a stock request p may see.
func (h History) StockRequest(ctx context.Context, p domain.Principal, id string, page, limit int) (HistoryPage, error) {
	if _, _, ok := h.Stock.Request(p, id); !ok {
		return HistoryPage{}, domain.Errorf(domain.NotFound, "no stock request %s", id)
	}
	return h.whole(ctx, p, domain.Aggregate{Type: domain.AggregateStockRequest, ID: id}, page, limit)
}

// Flight is the history of a flight: to everyone its schedule and status,
// to those who see its load its reservations, manifests and offloads too
// (see domain.Flight.HistoryEventVisibleTo).
func (h History) Flight(ctx context.Context, p domain.Principal, id string, page, limit int) (HistoryPage, error) {
	f, ok := h.Flights.Get(id)
	if !ok {
		return HistoryPage{}, domain.Errorf(domain.NotFound, "no flight %s", id)
	}
	records, err := h.load(ctx, domain.Aggregate{Type: domain.AggregateFlight, ID: id})
	if err != nil {
		return HistoryPage{}, err
	}
	return pageOfHistory(p, records, func(r domain.Record, e domain.Event) (domain.Record, bool, error) {
		return r, f.HistoryEventVisibleTo(p, e), nil
	}, page, limit)
}

// Shipment is the whole life of the shipment of a (canonical) AWB number,
// to those who may see the shipment (domain.ShipmentOwnership.VisibleTo):
// the quote and the booking it came from (each of them, when rebooked
// under its number; of the quote, not what another AWB's booking of it
// did), its waybills, filings, status
// events and documents, and of the flights it was booked on, manifested
// on or offloaded from the events that concern it; all in stream order.
// Each aggregate's events are there as far as p may read that aggregate,
// and a flight's only as far as they are about this AWB: to those who do
// not see the flight's load, a manifest shows this AWB's line alone.
func (h History) Shipment(ctx context.Context, p domain.Principal, awb string, page, limit int) (HistoryPage, error) {
	ownership := h.ShipmentFacts.Ownership(awb)
	if !ownership.VisibleTo(p) {
		return HistoryPage{}, domain.Errorf(domain.NotFound, "no shipment %s", awb)
	}
	type part struct {
		agg  domain.Aggregate
		keep func(domain.Record, domain.Event) (domain.Record, bool, error)
	}
	all := func(r domain.Record, _ domain.Event) (domain.Record, bool, error) { return r, true, nil }
	parts := []part{
		{domain.Aggregate{Type: domain.AggregateWaybill, ID: awb}, all},
		{domain.Aggregate{Type: domain.AggregateCompliance, ID: awb}, all},
		{domain.Aggregate{Type: domain.AggregateShipment, ID: awb}, all},
	}
	// Every booking that used the number, oldest first: a shipment
	// rebooked under its number (its first booking cancelled) lived
	// both.
	var flights []string
	reservedBy := map[string][]string{} // flight → the bookings p sees that reserved on it
	bookings := h.Bookings.AllByAWB(awb)
	for _, id := range bookings {
		booking, ok := h.Bookings.any(id)
		if !ok {
			continue
		}
		quote := domain.Aggregate{Type: domain.AggregateQuote, ID: booking.QuoteID}
		if _, ok := h.Quotes.Get(p, booking.QuoteID); ok && !slices.ContainsFunc(parts, func(pt part) bool { return pt.agg == quote }) {
			// Rebooked, a quote reopened may be booked again.
			parts = append(parts, part{quote, quoteRecordsAbout(p, bookings)})
		}
		if booking.VisibleTo(p) {
			parts = append(parts, part{domain.Aggregate{Type: domain.AggregateBooking, ID: booking.ID}, all})
			reservedBy[booking.FlightID] = append(reservedBy[booking.FlightID], booking.ID)
		}
		if !slices.Contains(flights, booking.FlightID) {
			flights = append(flights, booking.FlightID)
		}
	}
	for _, d := range h.Documents.ByAWB(awb) {
		if d.VisibleTo(p, ownership) {
			parts = append(parts, part{domain.Aggregate{Type: domain.AggregateDocument, ID: d.DocumentID}, all})
		}
	}
	for _, id := range h.ShipmentFacts.Shipments.Flights(awb) {
		if !slices.Contains(flights, id) {
			flights = append(flights, id)
		}
	}
	for _, id := range flights {
		f, ok := h.Flights.Get(id)
		if !ok {
			continue
		}
		reservedBy := reservedBy[id]
		parts = append(parts, part{domain.Aggregate{Type: domain.AggregateFlight, ID: id}, func(r domain.Record, e domain.Event) (domain.Record, bool, error) {
			return flightRecordAbout(p, f, awb, reservedBy, r, e)
		}})
	}
	var records []domain.Record
	for _, pt := range parts {
		rs, err := h.load(ctx, pt.agg)
		if err != nil {
			return HistoryPage{}, err
		}
		if rs, err = kept(p, rs, pt.keep); err != nil {
			return HistoryPage{}, err
		}
		records = append(records, rs...)
	}
	if len(records) == 0 {
		return HistoryPage{}, domain.Errorf(domain.NotFound, "no shipment %s", awb)
	}
	// Each aggregate's events come in stream order; the whole life is
	// theirs merged by stream sequence, the order they happened in.
	slices.SortFunc(records, func(a, b domain.Record) int { return cmp.Compare(a.Sequence, b.Sequence) })
	return pageOfRecords(records, page, limit), nil
}

// whole is the page of an aggregate's history that its reader p sees
// whole.
func (h History) whole(ctx context.Context, p domain.Principal, agg domain.Aggregate, page, limit int) (HistoryPage, error) {
	records, err := h.load(ctx, agg)
	if err != nil {
		return HistoryPage{}, err
	}
	return pageOfHistory(p, records, func(r domain.Record, _ domain.Event) (domain.Record, bool, error) { return r, true, nil }, page, limit)
}

func (h History) load(ctx context.Context, agg domain.Aggregate) ([]domain.Record, error) {
	records, err := h.Events.Load(ctx, agg)
	if err != nil {
		return nil, fmt.Errorf("projections: history of %s: %w", agg, err)
	}
	return records, nil
}

// pageOfHistory is the page-th page of limit of the records that keep
// keeps for p (as it rewrites them), in the order given.
func pageOfHistory(p domain.Principal, records []domain.Record, keep func(domain.Record, domain.Event) (domain.Record, bool, error), page, limit int) (HistoryPage, error) {
	records, err := kept(p, records, keep)
	if err != nil {
		return HistoryPage{}, err
	}
	return pageOfRecords(records, page, limit), nil
}

// kept are the records that keep keeps for p, as it rewrites them. An
// event this version cannot decode (a newer version's) cannot be judged by
// keep: an admin, who sees everything, gets it as stored; others do not,
// as the read models skip it.
func kept(p domain.Principal, records []domain.Record, keep func(domain.Record, domain.Event) (domain.Record, bool, error)) ([]domain.Record, error) {
	out := make([]domain.Record, 0, len(records))
	for _, r := range records {
		e, err := domain.DecodeEvent(r.Type, r.Data)
		if err != nil {
			if p.Role == domain.RoleAdmin {
				out = append(out, r)
			}
			continue
		}
		r, ok, err := keep(r, e)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

func pageOfRecords(records []domain.Record, page, limit int) HistoryPage {
	out, total := pageOfN(len(records), false, func(i int) domain.Record { return records[i] }, func(domain.Record) bool { return true }, page, limit)
	return HistoryPage{Records: out, Total: total}
}

// quoteRequestedShown is a QuoteRequested as a history shows it: a party
// the request left out is left out, where the event, whose shape stays,
// holds {"name": ""}.
type quoteRequestedShown struct {
	domain.QuoteRequested
	Shipper   domain.Party `json:"shipper,omitzero"`
	Consignee domain.Party `json:"consignee,omitzero"`
}

// quoteRecordsSeenBy keeps a quote's events, given in order, as p may
// see them: its request without the parties it left out, its pricing with
// only the price options p sees, its acceptances and reopenings with only
// the bookings p sees.
func quoteRecordsSeenBy(p domain.Principal) func(domain.Record, domain.Event) (domain.Record, bool, error) {
	var accepted domain.QuoteAccepted // the last, which a reopening undoes
	return func(r domain.Record, e domain.Event) (domain.Record, bool, error) {
		switch e := e.(type) {
		case domain.QuoteRequested:
			if e.Shipper.Name == "" || e.Consignee.Name == "" {
				return withData(r, quoteRequestedShown{QuoteRequested: e, Shipper: e.Shipper, Consignee: e.Consignee})
			}
		case domain.QuotePriced:
			return withData(r, e.AsSeenBy(p))
		case domain.QuoteAccepted:
			accepted = e
			return withData(r, e.AsSeenBy(p))
		case domain.QuoteReopened:
			return withData(r, e.AsSeenBy(p, accepted))
		}
		return r, true, nil
	}
}

// quoteRecordsAbout keeps of a quote's events, as p may see them (see
// quoteRecordsSeenBy), those of the shipment whose bookings are bookings:
// its request and pricing, and its acceptances and reopenings by those
// bookings, not by another booking of the quote under another AWB number
// (a quote reopened may be booked again, for another shipment).
func quoteRecordsAbout(p domain.Principal, bookings []string) func(domain.Record, domain.Event) (domain.Record, bool, error) {
	seen := quoteRecordsSeenBy(p)
	return func(r domain.Record, e domain.Event) (domain.Record, bool, error) {
		r, ok, err := seen(r, e) // every acceptance, for the reopening after it
		switch e := e.(type) {
		case domain.QuoteAccepted:
			ok = ok && slices.Contains(bookings, e.BookingID)
		case domain.QuoteReopened:
			ok = ok && slices.Contains(bookings, e.BookingID)
		}
		return r, ok, err
	}
}

// flightRecordAbout keeps of a flight's events those about the shipment
// of awb: the reservations of its bookings reservedBy (those p may see),
// the manifests that name it and its offloads; to those
// who do not see the flight's load, a manifest with this shipment's line
// only.
func flightRecordAbout(p domain.Principal, f domain.Flight, awb string, reservedBy []string, r domain.Record, e domain.Event) (domain.Record, bool, error) {
	switch e := e.(type) {
	case domain.CapacityReserved:
		return r, slices.Contains(reservedBy, e.BookingID), nil
	case domain.CapacityReleased:
		return r, slices.Contains(reservedBy, e.BookingID), nil
	case domain.OffloadReported:
		return r, e.AWBNumber == awb, nil
	case domain.ManifestSubmitted:
		if !e.Names(awb) {
			return r, false, nil
		}
		if f.LoadVisibleTo(p) {
			return r, true, nil
		}
		return withData(r, e.PartOf(awb))
	}
	return r, false, nil
}

// withData is the record with data in place of its event.
func withData(r domain.Record, data any) (domain.Record, bool, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return r, false, fmt.Errorf("projections: history: event %d: %w", r.Sequence, err)
	}
	r.Data = b
	return r, true, nil
}
