package domain

import (
	"slices"
	"time"
)

// MaxWebhooksPerOrganization bounds an organisation's subscriptions: each
// is a copy of every matching event, and many of them to one URL would be
// a way to flood it.
const MaxWebhooksPerOrganization = 25

// WebhookQuota is the subscriptions an organisation holds, by id, until
// they are deleted: one aggregate per organisation, so that subscriptions
// registered at once cannot all pass a count that none of them is in yet.
type WebhookQuota struct{ IDs []string }

// WebhookQuotaChanged records that an organisation holds a subscription
// (Held) or no longer does.
type WebhookQuotaChanged struct {
	OrganizationID string    `json:"organizationId"`
	WebhookID      string    `json:"webhookId"`
	Held           bool      `json:"held"`
	At             time.Time `json:"at"`
}

func (WebhookQuotaChanged) EventType() string { return "WebhookQuotaChanged" }

// DecideHoldWebhook counts subscription id against the organisation's
// quota, unless it is full; holding it again changes nothing.
func DecideHoldWebhook(q WebhookQuota, orgID, id string, at time.Time) ([]Event, error) {
	switch {
	case slices.Contains(q.IDs, id):
		return nil, nil
	case len(q.IDs) >= MaxWebhooksPerOrganization:
		return nil, Errorf(Conflict, "your organisation has %d webhooks, the most it may have: delete one first", len(q.IDs))
	}
	return []Event{WebhookQuotaChanged{OrganizationID: orgID, WebhookID: id, Held: true, At: at}}, nil
}

// DecideReleaseWebhook takes a deleted subscription off the quota. One
// registered before quotas were recorded was never on it: nothing changes.
func DecideReleaseWebhook(q WebhookQuota, orgID, id string, at time.Time) ([]Event, error) {
	if !slices.Contains(q.IDs, id) {
		return nil, nil
	}
	return []Event{WebhookQuotaChanged{OrganizationID: orgID, WebhookID: id, At: at}}, nil
}

// EvolveWebhookQuota applies an event to a quota.
func EvolveWebhookQuota(q WebhookQuota, e Event) WebhookQuota {
	if e, ok := e.(WebhookQuotaChanged); ok {
		ids := slices.DeleteFunc(slices.Clone(q.IDs), func(id string) bool { return id == e.WebhookID })
		if e.Held {
			ids = append(ids, e.WebhookID)
		}
		q.IDs = ids
	}
	return q
}
