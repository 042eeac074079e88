package httpapi

import (
	"net/http"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/views"
)

// bookingRequest is the spec's booking request.
type bookingRequest struct {
	QuoteID            string                     `json:"quoteId"`
	FlightID           string                     `json:"flightId"`
	Pieces             *int                       `json:"pieces"`
	Weight             *float64                   `json:"weight"`
	Commodity          string                     `json:"commodity"`
	Shipper            domain.FullParty           `json:"shipper"`
	Consignee          domain.FullParty           `json:"consignee"`
	AWB                *awbRef                    `json:"awb"`
	Routing            []domain.RoutingLeg        `json:"routing"`
	GrossWeightKg      *float64                   `json:"grossWeightKg"`
	ChargeableWeightKg *float64                   `json:"chargeableWeightKg"`
	DimensionsCm       []domain.SentDimensionLine `json:"dimensionsCm"`
	Volume             *float64                   `json:"volume"`
	SHC                []string                   `json:"shc"`
}

type awbRef struct {
	Prefix string `json:"prefix"`
	Number string `json:"number"`
}

// handleCreateBooking files a booking as pending; it is confirmed or
// rejected moments later (see GET /api/bookings/{id}). A booking of a
// flight closed already, or of an airline that takes none, is refused at
// once (see commands.RequestBooking, domain.CheckAirlineTakesBookings).
func (s *Server) handleCreateBooking() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req bookingRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		c := domain.RequestBooking{QuoteID: req.QuoteID, FlightID: domain.CanonicalFlightID(req.FlightID), Pieces: req.Pieces, WeightKg: req.Weight,
			GrossWeightKg: req.GrossWeightKg, ChargeableWeightKg: req.ChargeableWeightKg, VolumeM3: req.Volume,
			Commodity: req.Commodity, Shipper: req.Shipper, Consignee: req.Consignee, Routing: req.Routing,
			Dimensions: req.DimensionsCm, SHC: req.SHC}
		if req.AWB != nil {
			c.AWBPrefix, c.AWBSerial = req.AWB.Prefix, req.AWB.Number
		}
		if f, ok := s.flights.Get(c.FlightID); ok {
			c.Airline, c.AirlineKnown = s.identity.Airline("", f.Carrier)
		}
		res, err := s.commands.RequestBooking(r.Context(), meta(r), c)
		if err != nil {
			return err
		}
		s.writeCreated(w, r, res.Sequence, res.Version, "/api/bookings/"+res.State.ID, views.ToBookingJSON(res.State))
		return nil
	}
}

// handleGetBooking is a booking now, or as it was at a past moment
// (?at=, ?seq=).
func (s *Server) handleGetBooking() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, who := r.PathValue("id"), principal(r.Context())
		return answerVersion(s, w, r, domain.Aggregate{Type: domain.AggregateBooking, ID: id},
			func(cut projections.Cut) (domain.Booking, uint64, error) {
				return s.past.Booking(r.Context(), who, id, cut)
			},
			func() (domain.Booking, uint64, bool) { return s.bookings.GetVersion(who, id) },
			"no booking "+id, views.ToBookingJSON)
	}
}

func (s *Server) handleListBookings() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var p domain.Problems
		page, limit := pageParams(q, &p)
		f := projections.BookingFilter{Status: q.Get("status"), FlightID: flightIDParam(q, &p), QuoteID: idParam(q, &p, "quoteId")}
		switch f.Status {
		case "", domain.BookingStatusPending, domain.BookingStatusConfirmed, domain.BookingStatusRejected, domain.BookingStatusCancelled:
		default:
			p.Add("status", domain.CodeInvalidValue, "must be pending, confirmed, rejected or cancelled")
		}
		if err := p.Err(); err != nil {
			return err
		}
		bookings, total := s.bookings.List(principal(r.Context()), f, page, limit)
		writePage(w, "bookings", bookings, views.ToBookingJSON, page, limit, total)
		return nil
	}
}

func (s *Server) handleCancelBooking() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		m, err := changeMeta(r)
		if err != nil {
			return err
		}
		res, err := s.commands.CancelBooking(r.Context(), m, r.PathValue("id"))
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		setVersion(w, res.Version)
		writeJSON(w, http.StatusOK, views.ToBookingJSON(res.State))
		return nil
	}
}
