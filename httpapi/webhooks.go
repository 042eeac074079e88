package httpapi

import (
	"net/http"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/views"
	"github.com/cargostream/cargostream/webhooks"
)

type webhookRequest struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Secret string   `json:"secret"`
}

func (s *Server) handleCreateWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req webhookRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		// The command counts the subscriptions against the quota; this
		// finds those registered before quotas were recorded, which are
		// not on it.
		if n := len(s.webhooks.List(principal(r.Context()).OrganizationID)); n >= domain.MaxWebhooksPerOrganization {
			return domain.Errorf(domain.Conflict, "your organisation has %d webhooks, the most it may have: delete one first", n)
		}
		c, generated, err := s.dispatcher.Registration(req.URL, req.Events, req.Secret)
		if err != nil {
			return err
		}
		res, err := s.commands.RegisterWebhook(r.Context(), meta(r), c)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		out := views.ToWebhookJSON(res.State)
		out.Secret = generated
		w.Header().Set("Location", "/api/webhooks/"+res.State.ID)
		writeJSON(w, http.StatusCreated, out)
		return nil
	}
}

// visibleWebhook is the subscription of the path, if the caller sees it
// (see domain.Webhook.VisibleTo); others are not found.
func (s *Server) visibleWebhook(r *http.Request) (domain.Webhook, error) {
	return s.webhookOfPath(r, domain.Webhook.VisibleTo)
}

// webhookOfPath is the subscription the path names, if visible says the
// caller may see it; else it does not exist.
func (s *Server) webhookOfPath(r *http.Request, visible func(domain.Webhook, domain.Principal) bool) (domain.Webhook, error) {
	id := r.PathValue("id")
	wh, ok := s.webhooks.Webhook(id)
	if !ok || !visible(wh, principal(r.Context())) {
		return domain.Webhook{}, domain.Errorf(domain.NotFound, "no webhook %s", id)
	}
	return wh, nil
}

// handleListWebhooks lists the subscriptions of the caller's organisation,
// or an admin's of every one or of the organizationId filter's (which an
// admin needs to tell whose they are, re-registering them after a change
// of the webhook key).
func (s *Server) handleListWebhooks() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var p domain.Problems
		org := idParam(r.URL.Query(), &p, "organizationId")
		if err := p.Err(); err != nil {
			return err
		}
		who := principal(r.Context())
		if org == "" {
			org = who.OrganizationScope()
		} else if err := domain.CheckOrganizationReader(who, org, "webhooks"); err != nil {
			return err
		} else if _, known := s.identity.Organization(org); !known {
			return domain.Errorf(domain.NotFound, "no organisation %s", org)
		}
		writeList(w, "webhooks", s.webhooks.List(org), views.ToWebhookJSON)
		return nil
	}
}

func (s *Server) handleGetWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.visibleWebhook(r)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, views.ToWebhookJSON(wh))
		return nil
	}
}

func (s *Server) handleDeleteWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.visibleWebhook(r)
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

// maxDeliveryEventIDs bounds the events one request for deliveries may
// name: a shipment's life is a few dozen.
const maxDeliveryEventIDs = 100

// handleDeliveries is a subscription's delivery log: each attempt's time,
// status code, latency and error; of some events only, with eventId.
func (s *Server) handleDeliveries() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.webhookOfPath(r, domain.Webhook.DeliveriesVisibleTo)
		if err != nil {
			return err
		}
		var p domain.Problems
		q := r.URL.Query()
		page, limit := pageParams(q, &p)
		eventIDs := idsParam(q, &p, "eventId", maxDeliveryEventIDs)
		if err := p.Err(); err != nil {
			return err
		}
		ds, total := s.webhooks.Deliveries(wh.ID, eventIDs, page, limit)
		writePage(w, "deliveries", ds, views.ToDeliveryJSON, page, limit, total)
		return nil
	}
}

func (s *Server) handleRedeliver() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.visibleWebhook(r)
		if err != nil {
			return err
		}
		d, ok := s.webhooks.Delivery(wh.ID, r.PathValue("deliveryId"))
		if !ok {
			return domain.Errorf(domain.NotFound, "no delivery %s of webhook %s", r.PathValue("deliveryId"), wh.ID)
		}
		if err := s.deliverable(wh); err != nil {
			return err
		}
		id, err := s.dispatcher.Redeliver(r.Context(), wh, d.ID, d.MessageID(), d.EventSeq, requester(r))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, views.QueuedDeliveryJSON{DeliveryID: id})
		return nil
	}
}

// requester is who asks, by r, for a ping or a redelivery.
func requester(r *http.Request) webhooks.Requester {
	m := meta(r)
	return webhooks.Requester{Subject: m.Principal.Subject, RequestID: m.CorrelationID}
}

func (s *Server) handlePing() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wh, err := s.visibleWebhook(r)
		if err != nil {
			return err
		}
		if err := s.deliverable(wh); err != nil {
			return err
		}
		id, err := s.dispatcher.Ping(r.Context(), wh, requester(r))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, views.QueuedDeliveryJSON{DeliveryID: id})
		return nil
	}
}

// deliverable refuses sending to a subscription its receiver has
// disabled, or of an organisation that receives nothing now (disabled or
// deleted, or a demo one outside demo mode; an admin still reaches its
// subscriptions): the dispatcher would drop the delivery untried, which
// no delivery log shows, and the 202 promise what never comes.
func (s *Server) deliverable(wh domain.Webhook) error {
	if wh.Disabled {
		return domain.Errorf(domain.Conflict, "webhook %s is disabled: its receiver answered 410 Gone; subscribe again to receive deliveries", wh.ID)
	}
	if !s.dispatcher.Receives(wh.OrganizationID) {
		return domain.Errorf(domain.Conflict, "organisation %s receives no deliveries now: it is disabled or deleted (or a demo organisation outside demo mode), and its webhooks are sent nothing while it is", wh.OrganizationID)
	}
	return nil
}
