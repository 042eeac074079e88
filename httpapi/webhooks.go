package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/webhooks"
	"github.com/gorilla/mux"
)

type webhookRequest struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Secret string   `json:"secret"`
}

// webhookJSON is the spec's webhook response; the secret only when the
// service generated it, once.
type webhookJSON struct {
	WebhookID string    `json:"webhookId"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	CreatedAt time.Time `json:"createdAt"`
	Status    string    `json:"status"` // active, or disabled after a 410 Gone
	Secret    string    `json:"secret,omitempty"`
}

func toWebhookJSON(w domain.Webhook) webhookJSON {
	status := "active"
	if w.Disabled {
		status = "disabled"
	}
	return webhookJSON{WebhookID: w.ID, URL: w.URL, Events: w.Events, CreatedAt: w.CreatedAt, Status: status}
}

// maxWebhooksPerOrganization bounds an organisation's subscriptions.
const maxWebhooksPerOrganization = 25

func (s *Server) handleCreateWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req webhookRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		// Each subscription is a copy of every matching event: many of
		// them to one URL would be a way to flood it.
		if n := len(s.webhooks.List(principal(r.Context()).OrganizationID)); n >= maxWebhooksPerOrganization {
			return domain.Errorf(domain.Conflict, "your organisation has %d webhooks, the most it may have: delete one first", n)
		}
		err := domain.ValidateWebhook(req.URL, req.Events, s.webhookGuard.Check)
		generated := req.Secret == ""
		if generated {
			req.Secret = webhooks.NewSecret()
		} else if why := webhooks.ValidSecret(req.Secret); why != "" {
			var p domain.Problems
			if invalid := (*domain.Error)(nil); errors.As(err, &invalid) {
				p = invalid.Fields
			}
			p.Add("secret", domain.CodeInvalidFormat, "%s", why)
			err = p.Err()
		}
		if err != nil {
			return err
		}
		res, err := s.commands.RegisterWebhook(r.Context(), meta(r), domain.RegisterWebhook{URL: req.URL, Events: req.Events,
			SealedSecret: s.sealer.Seal(req.Secret)})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		out := toWebhookJSON(res.State)
		if generated {
			out.Secret = req.Secret
		}
		w.Header().Set("Location", "/api/webhooks/"+res.State.ID)
		writeJSON(w, http.StatusCreated, out)
		return nil
	}
}

// ownWebhook is a subscription of the caller's organisation (any, for an
// admin); others are not found.
func (s *Server) ownWebhook(r *http.Request) (domain.Webhook, error) {
	id := mux.Vars(r)["id"]
	wh, ok := s.webhooks.Webhook(id)
	p := principal(r.Context())
	if !ok || wh.Deleted || (p.Role != domain.RoleAdmin && wh.OrganizationID != p.OrganizationID) {
		return domain.Webhook{}, domain.Errorf(domain.NotFound, "no webhook %s", id)
	}
	return wh, nil
}

func (s *Server) handleListWebhooks() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		org := principal(r.Context()).OrganizationID
		if principal(r.Context()).Role == domain.RoleAdmin {
			org = ""
		}
		writeList(w, "webhooks", s.webhooks.List(org), toWebhookJSON)
		return nil
	}
}

func (s *Server) handleGetWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.ownWebhook(r)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, toWebhookJSON(wh))
		return nil
	}
}

func (s *Server) handleDeleteWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.ownWebhook(r)
		if err != nil {
			return err
		}
		res, err := s.commands.DeleteWebhook(r.Context(), meta(r), wh.ID)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

type attemptJSON struct {
	Attempt    int        `json:"attempt"`
	At         time.Time  `json:"at"`
	StatusCode *int       `json:"statusCode"`
	LatencyMs  int64      `json:"latencyMs"`
	Error      *string    `json:"error"`
	Outcome    string     `json:"outcome"`
	NextTryAt  *time.Time `json:"nextTryAt"`
}

type deliveryJSON struct {
	DeliveryID string        `json:"deliveryId"`
	EventName  string        `json:"eventName"`
	EventID    string        `json:"eventId"`
	Status     string        `json:"status"`
	Attempts   []attemptJSON `json:"attempts"`
}

// handleDeliveries is a subscription's delivery log: each attempt's time,
// status code, latency and error.
func (s *Server) handleDeliveries() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.ownWebhook(r)
		if err != nil {
			return err
		}
		var p domain.Problems
		page, limit := pageParams(r.URL.Query(), &p)
		if err := p.Err(); err != nil {
			return err
		}
		ds, total := s.webhooks.Deliveries(wh.ID, page, limit)
		out := struct {
			Deliveries []deliveryJSON `json:"deliveries"`
			Pagination pagination     `json:"pagination"`
		}{Deliveries: make([]deliveryJSON, len(ds)), Pagination: newPagination(page, limit, total)}
		for i, d := range ds {
			dj := deliveryJSON{DeliveryID: d.ID, EventName: d.EventName, EventID: d.EventID, Status: d.Status, Attempts: make([]attemptJSON, len(d.Attempts))}
			for k, a := range d.Attempts {
				aj := attemptJSON{Attempt: a.Attempt, At: a.At, LatencyMs: a.LatencyMs, Outcome: a.Outcome}
				if a.StatusCode != 0 {
					aj.StatusCode = &a.StatusCode
				}
				if a.Error != "" {
					aj.Error = &a.Error
				}
				if !a.NextTryAt.IsZero() {
					aj.NextTryAt = &a.NextTryAt
				}
				dj.Attempts[k] = aj
			}
			out.Deliveries[i] = dj
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

type queuedJSON struct {
	DeliveryID string `json:"deliveryId"`
}

func (s *Server) handleRedeliver() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.ownWebhook(r)
		if err != nil {
			return err
		}
		d, ok := s.webhooks.Delivery(wh.ID, mux.Vars(r)["deliveryId"])
		if !ok {
			return domain.Errorf(domain.NotFound, "no delivery %s of webhook %s", mux.Vars(r)["deliveryId"], wh.ID)
		}
		if err := deliverable(wh); err != nil {
			return err
		}
		id, err := s.dispatcher.Redeliver(r.Context(), wh, d.ID, d.EventSeq)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, queuedJSON{DeliveryID: id})
		return nil
	}
}

func (s *Server) handlePing() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.ownWebhook(r)
		if err != nil {
			return err
		}
		if err := deliverable(wh); err != nil {
			return err
		}
		id, err := s.dispatcher.Ping(r.Context(), wh)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, queuedJSON{DeliveryID: id})
		return nil
	}
}

// deliverable refuses sending to a subscription its receiver has
// disabled: the dispatcher would drop the delivery, and the 202 promise
// what never comes.
func deliverable(wh domain.Webhook) error {
	if wh.Disabled {
		return domain.Errorf(domain.Conflict, "webhook %s is disabled: its receiver answered 410 Gone; subscribe again to receive deliveries", wh.ID)
	}
	return nil
}

// RenderWebhook is the data of a webhook delivery: the resource as the
// API returns it to the subscribing organisation, and false when that
// organisation may not see it.
func (s *Server) RenderWebhook(rec eventstore.Record, e domain.Event, orgID string) (any, bool) {
	o, ok := s.identity.Organization(orgID)
	if !ok {
		return nil, false
	}
	p := domain.Principal{Subject: "webhook", OrganizationID: o.ID, Role: o.Role, AirlineCode: o.AirlineCode, AWBPrefix: o.AWBPrefix}
	switch rec.Aggregate.Type {
	case domain.AggregateQuote:
		q, ok := s.quotes.Get(p, rec.Aggregate.ID)
		if requested, created := e.(domain.QuoteRequested); created {
			// quote.created shows the quote as its first event made it:
			// the read model may hold its pricing already, as the
			// pricing reactor runs beside the dispatcher.
			q = domain.EvolveQuote(domain.Quote{}, requested)
		}
		return quoteJSON(q, p), ok
	case domain.AggregateBooking:
		b, ok := s.bookings.Get(p, rec.Aggregate.ID)
		return toBookingJSON(b), ok
	case domain.AggregateStockRequest:
		sr, ok := s.stock.Request(p, rec.Aggregate.ID)
		return toStockRequestJSON(sr), ok
	case domain.AggregateShipment:
		return s.renderShipmentEvent(rec, e, p)
	case domain.AggregateWaybill:
		return s.renderWaybill(e, p)
	case domain.AggregateCompliance:
		return s.renderCompliance(e, p)
	case domain.AggregateFlight:
		return s.renderFlightOperation(e, p)
	case domain.AggregateDocument:
		return s.renderDocument(e, p)
	}
	if low, ok := e.(domain.StockLow); ok {
		return low, low.VisibleTo(p)
	}
	return nil, false
}
