package commands

import (
	"cmp"
	"context"
	"errors"

	"github.com/cargostream/cargostream/domain"
)

func webhookAggregate(id string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateWebhook, ID: id}
}

// RegisterWebhook subscribes the caller's organisation to events. The
// secret arrives sealed; urlAllowed vets the target.
func (h *Handler) RegisterWebhook(ctx context.Context, m Meta, c domain.RegisterWebhook) (Result[domain.Webhook], error) {
	c.WebhookID = m.DeriveID("webhook")
	c.OrganizationID = m.Principal.OrganizationID
	c.At = h.now().UTC()
	// The quota and the subscription are stored together: of
	// registrations at once past the limit, the last are refused.
	return h.withWebhookQuota(ctx, m, c.OrganizationID, c.WebhookID,
		func(q domain.WebhookQuota) ([]domain.Event, error) {
			return domain.DecideHoldWebhook(q, c.OrganizationID, c.WebhookID, c.At)
		},
		func(w domain.Webhook) ([]domain.Event, error) { return domain.DecideRegisterWebhook(w, c) })
}

func webhookQuotaAggregate(orgID string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateWebhookQuota, ID: orgID}
}

// withWebhookQuota decides m on webhook id together with its part,
// decided by quota, on the webhook quota of organisation orgID, which
// comes first in the transaction (see transact).
func (h *Handler) withWebhookQuota(ctx context.Context, m Meta, orgID, id string,
	quota func(domain.WebhookQuota) ([]domain.Event, error), decide func(domain.Webhook) ([]domain.Event, error)) (Result[domain.Webhook], error) {
	var res *Result[domain.Webhook]
	err := transact(ctx, h, func(t *transaction) error {
		if _, err := decideIn(t, webhookQuotaAggregate(orgID), m.part("quota"), domain.EvolveWebhookQuota, quota); err != nil {
			return err
		}
		var err error
		res, err = decideIn(t, webhookAggregate(id), m, domain.EvolveWebhook, decide)
		return err
	})
	if err != nil || res == nil {
		return Result[domain.Webhook]{}, err
	}
	return *res, nil
}

// DeleteWebhook ends one of the caller's subscriptions (admins: any).
func (h *Handler) DeleteWebhook(ctx context.Context, m Meta, id string) (Result[domain.Webhook], error) {
	if !domain.ValidIdentifier(id) {
		return Result[domain.Webhook]{}, domain.Errorf(domain.NotFound, "no such webhook")
	}
	at := h.now().UTC()
	// The organisation's quota comes first in the transaction, as in
	// RegisterWebhook; a subscription's organisation never changes.
	w, _, _, err := load(ctx, h, webhookAggregate(id), domain.EvolveWebhook, "", loadFresh)
	if err != nil {
		return Result[domain.Webhook]{}, err
	}
	if w.ID == "" || !w.VisibleTo(m.Principal) {
		return Result[domain.Webhook]{}, domain.Errorf(domain.NotFound, "no such webhook")
	}
	return h.withWebhookQuota(ctx, m, w.OrganizationID, id,
		func(q domain.WebhookQuota) ([]domain.Event, error) {
			return domain.DecideReleaseWebhook(q, w.OrganizationID, id, at)
		},
		func(w domain.Webhook) ([]domain.Event, error) { return domain.DecideDeleteWebhook(w, m.Principal, at) })
}

// WebhookRecorder records what webhook delivery learns, as the service.
type WebhookRecorder struct{ H *Handler }

var deliveryActor = domain.Principal{Subject: "reactor:webhooks"}

// RecordDelivery appends an attempt; each delivery is an aggregate. It is
// recorded for the subscriber's organisation, whose audit log shows it,
// as the dispatcher's, or as the doing of whoever asked for a ping or a
// redelivery (e.RequestedBy), under its request's correlationID.
func (r WebhookRecorder) RecordDelivery(ctx context.Context, commandID, correlationID string, e domain.WebhookDeliveryAttempted) error {
	actor := deliveryActor
	actor.Subject, actor.OrganizationID = cmp.Or(e.RequestedBy, actor.Subject), e.OrgID
	agg, m := domain.Aggregate{Type: domain.AggregateDelivery, ID: e.DeliveryID}, NewMeta(actor, commandID, correlationID)
	// Most deliveries succeed at the first attempt, the aggregate's first
	// event: appended as such without reading the aggregate first, which
	// would cost a round trip to the store per delivery. A later attempt
	// conflicts (answered by the store's own cache) and goes the usual way.
	envelopes, err := r.H.envelopes(agg, m, []domain.Event{e})
	if err != nil {
		return err
	}
	if _, err := r.H.store.Append(ctx, agg, 0, envelopes); !errors.Is(err, domain.ErrAggregateChanged) {
		return err
	}
	_, err = execute(ctx, r.H, agg, m,
		func(s struct{}, _ domain.Event) struct{} { return s },
		func(struct{}) ([]domain.Event, error) { return []domain.Event{e}, nil })
	return err
}

// DisableWebhook stops a subscription whose receiver is gone, and returns
// the sequence from which it is disabled.
func (r WebhookRecorder) DisableWebhook(ctx context.Context, commandID, id, reason string) (uint64, error) {
	at := r.H.now().UTC()
	res, err := execute(ctx, r.H, webhookAggregate(id), NewMeta(deliveryActor, commandID, ""), domain.EvolveWebhook,
		func(w domain.Webhook) ([]domain.Event, error) { return domain.DecideDisableWebhook(w, reason, at) })
	return res.Version, err
}
