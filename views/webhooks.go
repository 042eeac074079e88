package views

import (
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

// WebhookJSON is the spec's webhook response; the secret only when the
// service generated it, once.
type WebhookJSON struct {
	WebhookID      string    `json:"webhookId"`
	OrganizationID string    `json:"organizationId"`
	URL            string    `json:"url"`
	Events         []string  `json:"events"`
	CreatedAt      time.Time `json:"createdAt"`
	Status         string    `json:"status"` // active, or disabled after a 410 Gone
	Secret         string    `json:"secret,omitempty"`
}

func ToWebhookJSON(w domain.Webhook) WebhookJSON {
	return WebhookJSON{WebhookID: w.ID, OrganizationID: w.OrganizationID, URL: w.ShownURL(), Events: w.Events, CreatedAt: w.CreatedAt, Status: w.Status()}
}

// DeliveryJSON is one delivery of a subscription's log.
type DeliveryJSON struct {
	DeliveryID string        `json:"deliveryId"`
	MessageID  string        `json:"messageId"` // the webhook-id sent
	EventName  string        `json:"eventName"`
	EventID    string        `json:"eventId"`
	Status     string        `json:"status"`
	Attempts   []AttemptJSON `json:"attempts"`
}

// AttemptJSON is one attempt of a delivery: its time, status code,
// latency and error.
type AttemptJSON struct {
	Attempt    int        `json:"attempt"`
	At         time.Time  `json:"at"`
	StatusCode *int       `json:"statusCode"`
	LatencyMs  int64      `json:"latencyMs"`
	Error      *string    `json:"error"`
	Outcome    string     `json:"outcome"`
	NextTryAt  *time.Time `json:"nextTryAt"`
}

// ToDeliveryJSON writes null for what an attempt did not have: no
// answer, no error, no next try.
func ToDeliveryJSON(d projections.Delivery) DeliveryJSON {
	out := DeliveryJSON{DeliveryID: d.ID, MessageID: d.MessageID(), EventName: d.EventName, EventID: d.EventID, Status: d.Status, Attempts: make([]AttemptJSON, len(d.Attempts))}
	for i, a := range d.Attempts {
		aj := AttemptJSON{Attempt: int(a.Attempt), At: a.At, LatencyMs: a.LatencyMs, Outcome: a.Outcome}
		// Below 100 is no HTTP status: an older version recorded 099
		// or 000 as the receiver sent them, which the log shows as no
		// answer, as this one records them (the digits are in the error).
		if a.StatusCode >= 100 {
			code := int(a.StatusCode)
			aj.StatusCode = &code
		}
		if a.Error != "" {
			aj.Error = &a.Error
		}
		if !a.NextTryAt.IsZero() {
			aj.NextTryAt = &a.NextTryAt
		}
		out.Attempts[i] = aj
	}
	return out
}

// QueuedDeliveryJSON names a delivery queued by a ping or a redelivery.
type QueuedDeliveryJSON struct {
	DeliveryID string `json:"deliveryId"`
}
