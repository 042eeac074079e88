package httpapi

import (
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/views"
)

// rfqRequest is the spec's RFQ body.
type rfqRequest struct {
	Shipper   domain.Party `json:"shipper"`
	Consignee domain.Party `json:"consignee"`
	Routing   struct {
		Origin      string `json:"origin"`
		Destination string `json:"destination"`
	} `json:"routing"`
	Pieces                *int                       `json:"pieces"`
	GrossWeightKg         *float64                   `json:"grossWeightKg"`
	Commodity             domain.Commodity           `json:"commodity"`
	DimensionsCm          []domain.SentDimensionLine `json:"dimensionsCm"`
	SHC                   []string                   `json:"shc"`
	DeliveryToAirlineDate string                     `json:"deliveryToAirlineDate"`
	Notes                 string                     `json:"notes"`
	AirlineFilter         []string                   `json:"airlineFilter"`
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
		s.writeCreated(w, r, res.Sequence, res.Version, "/api/quotes/"+res.State.ID, views.ToQuoteJSON(res.State, principal(r.Context()), nil))
		return nil
	}
}

// handleListQuotes lists the quotes the caller may see. With id it
// returns that one quote, in the same list shape, with its ETag and long
// poll (currentQuote). As the spec says, a query that matches nothing is
// answered not_found.
func (s *Server) handleListQuotes() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var p domain.Problems
		page, limit := pageParams(q, &p)
		f := projections.QuoteFilter{
			Status:      q.Get("status"),
			Origin:      codeParam(q, &p, "origin", domain.ValidAirportCode, "a three-letter IATA airport code"),
			Destination: codeParam(q, &p, "destination", domain.ValidAirportCode, "a three-letter IATA airport code"),
		}
		switch f.Status {
		case "", domain.QuoteStatusPending, domain.QuoteStatusPriced, domain.QuoteStatusAccepted, domain.QuoteStatusRejected:
		default:
			p.Add("status", domain.CodeInvalidValue, "must be pending, priced, accepted or rejected")
		}
		if err := p.Err(); err != nil {
			return err
		}
		who := principal(r.Context())
		if id := q.Get("id"); id != "" {
			// The spec's way to read a quote: an ETag and long polls as
			// GET /api/quotes/{id} has.
			shown, tag, err := s.currentQuote(w, r, who, id, f)
			if err != nil {
				return err
			}
			if !notModified(w, r, tag) {
				writeQuoteListOfOne(w, shown.view, views.ToPaginationJSON(1, limit, 1))
			}
			return nil
		}
		quotes, total := s.quotes.List(who, f, page, limit)
		if total == 0 {
			return domain.Errorf(domain.NotFound, "no quotes match")
		}
		out := views.QuoteListJSON{Quotes: make([]views.QuoteJSON, len(quotes)), Pagination: views.ToPaginationJSON(page, limit, total)}
		closed := s.flightClosed()
		for i, q := range quotes {
			out.Quotes[i] = views.ToQuoteJSON(q, who, closed)
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// handleGetQuote returns one quote, now or as it was at a past moment
// (?at=, ?seq=); a quote the caller may not see is not found, without a
// hint that it exists.
func (s *Server) handleGetQuote() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		who := principal(r.Context())
		cut, past, err := pastCut(r)
		if err != nil {
			return err
		}
		if past {
			q, version, err := s.past.Quote(r.Context(), who, id, cut)
			if err != nil {
				return err
			}
			if !notModified(w, r, etag(version)) {
				writeJSON(w, http.StatusOK, views.ToQuoteJSON(q, who, nil))
			}
			return nil
		}
		shown, tag, err := s.currentQuote(w, r, who, id, projections.QuoteFilter{})
		if err != nil {
			return err
		}
		if !notModified(w, r, tag) {
			writeEncoded(w, http.StatusOK, shown.view)
		}
		return nil
	}
}

// shownQuote is a quote and its JSON as a reader sees it (quoteViews).
type shownQuote struct {
	quote domain.Quote
	view  []byte
}

// currentQuote is the quote id as who sees it now, with its ETag
// (quoteETag), or after the long poll the request asks for (current),
// which its options' flights wake too (quoteWakers); not found if who may
// not see it, or if f leaves it out. f's fields are the quote's own,
// which move its ETag when they change: one left out is answered at
// once, and a wait ends once it is.
func (s *Server) currentQuote(w http.ResponseWriter, r *http.Request, who domain.Principal, id string, f projections.QuoteFilter) (shownQuote, string, error) {
	shown, tag, ok, err := current(s, w, r, domain.Aggregate{Type: domain.AggregateQuote, ID: id}, func() (shownQuote, string, bool) {
		q, version, ok := s.quotes.GetVersion(who, id)
		if !ok || !f.Matches(q) {
			return shownQuote{quote: q}, "", false
		}
		view, shut := s.quoteViews.of(q, version, who, s.flightClosed())
		return shownQuote{quote: q, view: view}, quoteETag(version, shut), true
	}, func() wakers {
		// Its own look, before the wait is registered: the look above
		// comes after, so that no change between is missed.
		q, _, _ := s.quotes.GetVersion(who, id)
		return s.quoteWakers(q, time.Now())
	})
	switch q := shown.quote; {
	case err != nil || ok:
	case q.ID == "":
		err = domain.Errorf(domain.NotFound, "no quote %s", id)
	default:
		// A caller that may see the quote learns why it is left out,
		// rather than suspect the id.
		err = domain.Errorf(domain.NotFound, "quote %s does not match the filters (it is %s, from %s to %s)",
			id, q.Status, q.Origin, q.Destination)
	}
	return shown, tag, err
}

// quoteETag is the ETag of a quote at version whose options' flights
// closed are shut (closedOptions): "42", and "42-1" once its first
// option's flight is closed. A flight's closing is no event of the quote,
// yet changes what it shows: a client holding the quote as it was must
// not be told it is unchanged.
func quoteETag(version, shut uint64) string {
	if shut == 0 {
		return etag(version)
	}
	return `"` + uitoa(version) + "-" + uitoa(shut) + `"`
}

// quoteWakers are what moves a quote's ETag besides its own events
// (quoteETag): the status events of its options' flights (not their
// capacity, which bookings move all the time), and the moment the first
// of those still open closes by its departure time.
func (s *Server) quoteWakers(q domain.Quote, now time.Time) wakers {
	var w wakers
	for _, o := range q.Options {
		agg := projections.StatusOf(o.FlightID)
		if slices.Contains(w.aggs, agg) {
			continue
		}
		w.aggs = append(w.aggs, agg)
		if f, ok := s.flights.Get(o.FlightID); ok && !f.ClosedAt(now) && (w.at.IsZero() || f.ClosesAt().Before(w.at)) {
			w.at = f.ClosesAt()
		}
	}
	return w
}

// flightClosed tells the quote views which options' flights take no more
// bookings now (see views.FlightClosed).
func (s *Server) flightClosed() func(flightID string) bool {
	return views.FlightClosed(s.flights, time.Now())
}
