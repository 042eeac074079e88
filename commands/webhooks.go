package commands

import (
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
	return create(ctx, h, webhookAggregate(c.WebhookID), m, domain.EvolveWebhook,
		func(w domain.Webhook) ([]domain.Event, error) { return domain.DecideRegisterWebhook(w, c) })
}

// DeleteWebhook ends one of the caller's subscriptions (admins: any).
func (h *Handler) DeleteWebhook(ctx context.Context, m Meta, id string) (Result[domain.Webhook], error) {
	if !domain.ValidIdentifier(id) {
		return Result[domain.Webhook]{}, domain.Errorf(domain.NotFound, "no such webhook")
	}
	at := h.now().UTC()
	return execute(ctx, h, webhookAggregate(id), m, domain.EvolveWebhook,
		func(w domain.Webhook) ([]domain.Event, error) { return domain.DecideDeleteWebhook(w, m.Principal, at) })
}

// WebhookRecorder records what webhook delivery learns, as the service.
type WebhookRecorder struct{ H *Handler }

var deliveryActor = domain.Principal{Subject: "reactor:webhooks"}

// RecordDelivery appends an attempt; each delivery is an aggregate. It is
// recorded for the subscriber's organisation, whose audit log shows it.
func (r WebhookRecorder) RecordDelivery(ctx context.Context, commandID string, e domain.WebhookDeliveryAttempted) error {
	actor := deliveryActor
	actor.OrganizationID = e.OrgID
	agg, m := domain.Aggregate{Type: domain.AggregateDelivery, ID: e.DeliveryID}, NewMeta(actor, commandID, "")
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
