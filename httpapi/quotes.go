package httpapi

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/gorilla/mux"
)

// rfqRequest is the spec's RFQ body.
type rfqRequest struct {
	Shipper   domain.Party `json:"shipper"`
	Consignee domain.Party `json:"consignee"`
	Routing   struct {
		Origin      string `json:"origin"`
		Destination string `json:"destination"`
	} `json:"routing"`
	Pieces                *int                   `json:"pieces"`
	GrossWeightKg         *float64               `json:"grossWeightKg"`
	Commodity             domain.Commodity       `json:"commodity"`
	DimensionsCm          []domain.DimensionLine `json:"dimensionsCm"`
	SHC                   []string               `json:"shc"`
	DeliveryToAirlineDate string                 `json:"deliveryToAirlineDate"`
	Notes                 string                 `json:"notes"`
	AirlineFilter         []string               `json:"airlineFilter"`
}

// quoteResponse is the spec's quote.
type quoteResponse struct {
	ID           string        `json:"id"`
	Status       string        `json:"status"`
	Origin       string        `json:"origin"`
	Destination  string        `json:"destination"`
	Pieces       int           `json:"pieces"`
	Weight       float64       `json:"weight"` // gross, kg
	Volume       float64       `json:"volume"` // m³
	Commodity    string        `json:"commodity"`
	SHC          []string      `json:"shc"`
	CreatedAt    time.Time     `json:"createdAt"`
	PriceOptions []priceOption `json:"priceOptions"`
	// Beyond the spec: why nothing was offered, and the weight priced.
	RejectionReason    *string  `json:"rejectionReason"`
	ChargeableWeightKg *float64 `json:"chargeableWeightKg"`
}

type priceOption struct {
	FlightID      string  `json:"flightId"`
	FlightNumber  string  `json:"flightNumber"`
	DepartureDate string  `json:"departureDate"`
	PricePerKg    float64 `json:"pricePerKg"`
	TotalAmount   float64 `json:"totalAmount"`
	Currency      string  `json:"currency"`
	ValidityHours int     `json:"validityHours"`
}

// quoteJSON is a quote as p may see it (see domain.Quote.AsSeenBy).
func quoteJSON(q domain.Quote, p domain.Principal) quoteResponse {
	q = q.AsSeenBy(p)
	shc := q.SHC
	if shc == nil {
		shc = []string{}
	}
	out := quoteResponse{
		ID: q.ID, Status: q.Status, Origin: q.Origin, Destination: q.Destination, Pieces: q.Pieces,
		Weight: q.WeightKg, Volume: q.VolumeM3, Commodity: q.Commodity.Code, SHC: shc,
		CreatedAt: q.CreatedAt, PriceOptions: make([]priceOption, len(q.Options)),
	}
	for i, o := range q.Options {
		out.PriceOptions[i] = priceOption{FlightID: o.FlightID, FlightNumber: o.FlightNumber, DepartureDate: o.DepartureDate,
			PricePerKg: o.PricePerKg, TotalAmount: o.TotalAmount, Currency: o.Currency, ValidityHours: o.ValidityHours}
	}
	if q.Reason != "" {
		out.RejectionReason = &q.Reason
	}
	if !q.PricedAt.IsZero() {
		out.ChargeableWeightKg = &q.ChargeableWeightKg
	}
	return out
}

// meta is the metadata of the command this request carries out.
func meta(r *http.Request) commands.Meta {
	m := commands.NewMeta(principal(r.Context()), commandID(r.Context()), requestID(r.Context()))
	m.ClientIP = clientIP(r)
	return m
}

// clientIP is the address a request came from.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *Server) handleCreateQuote() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req rfqRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		res, err := s.commands.RequestQuote(r.Context(), meta(r), domain.RequestQuote{
			Shipper: req.Shipper, Consignee: req.Consignee,
			Origin: req.Routing.Origin, Destination: req.Routing.Destination,
			Pieces: req.Pieces, GrossWeightKg: req.GrossWeightKg, Commodity: req.Commodity,
			Dimensions: req.DimensionsCm, SHC: req.SHC, DeliveryToAirlineDate: req.DeliveryToAirlineDate,
			Notes: req.Notes, AirlineFilter: req.AirlineFilter,
		})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/quotes/"+res.State.ID)
		writeJSON(w, http.StatusCreated, quoteJSON(res.State, principal(r.Context())))
		return nil
	}
}

type quoteList struct {
	Quotes     []quoteResponse `json:"quotes"`
	Pagination pagination      `json:"pagination"`
}

// handleListQuotes lists the quotes the caller may see. With id it
// returns that one quote, in the same list shape. As the spec says, a
// query that matches nothing is answered not_found.
func (s *Server) handleListQuotes() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var p domain.Problems
		page, limit := pageParams(q, &p)
		f := projections.QuoteFilter{
			Status:      q.Get("status"),
			Origin:      strings.ToUpper(q.Get("origin")),
			Destination: strings.ToUpper(q.Get("destination")),
		}
		switch f.Status {
		case "", domain.QuoteStatusPending, domain.QuoteStatusPriced, domain.QuoteStatusAccepted, domain.QuoteStatusRejected:
		default:
			p.Add("status", domain.CodeInvalidValue, "must be pending, priced, accepted or rejected")
		}
		for _, c := range [...]struct{ name, code string }{{"origin", f.Origin}, {"destination", f.Destination}} {
			if c.code != "" && !domain.ValidAirportCode(c.code) {
				p.Add(c.name, domain.CodeInvalidFormat, "must be a three-letter IATA airport code")
			}
		}
		if err := p.Err(); err != nil {
			return err
		}
		who := principal(r.Context())
		if id := q.Get("id"); id != "" {
			quote, version, ok := s.quotes.GetVersion(who, id)
			if !ok || !f.Matches(quote) {
				return domain.Errorf(domain.NotFound, "no quote %s", id)
			}
			writeQuoteListOfOne(w, s.quoteViews.of(quote, version, who), newPagination(1, limit, 1))
			return nil
		}
		quotes, total := s.quotes.List(who, f, page, limit)
		if total == 0 {
			return domain.Errorf(domain.NotFound, "no quotes match")
		}
		out := quoteList{Quotes: make([]quoteResponse, len(quotes)), Pagination: newPagination(page, limit, total)}
		for i, q := range quotes {
			out.Quotes[i] = quoteJSON(q, who)
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// handleGetQuote returns one quote; a quote the caller may not see is
// not found, without a hint that it exists.
func (s *Server) handleGetQuote() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := mux.Vars(r)["id"]
		who := principal(r.Context())
		q, version, ok := s.quotes.GetVersion(who, id)
		if !ok {
			return domain.Errorf(domain.NotFound, "no quote %s", id)
		}
		writeEncoded(w, http.StatusOK, s.quoteViews.of(q, version, who))
		return nil
	}
}
