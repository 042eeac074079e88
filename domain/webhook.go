package domain

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// CodeURLNotAllowed: a webhook target the service will not call.
const CodeURLNotAllowed FieldCode = "URL_NOT_ALLOWED"

// WebhookEvents is the catalogue of webhook event names.
var WebhookEvents = []string{
	"quote.created", "quote.priced", "quote.rejected", "quote.accepted",
	"booking.created", "booking.confirmed", "booking.rejected", "booking.cancelled",
	"stock.requested", "stock.replied", "stock.low",
	"mawb.created", "hawb.created", "dgd.submitted", "csd.submitted", "placi.submitted",
	"document.uploaded", "manifest.submitted", "shipment.status", "shipment.offloaded", "flight.status",
	"flight.aircraft",
}

// WebhookEventOf names the webhook event of a stored event, or "".
func WebhookEventOf(e Event) string {
	switch e.(type) {
	case QuoteRequested:
		return "quote.created"
	case QuotePriced:
		return "quote.priced"
	case QuoteRejected:
		return "quote.rejected"
	case QuoteAccepted:
		return "quote.accepted"
	case BookingRequested:
		return "booking.created"
	case BookingConfirmed:
		return "booking.confirmed"
	case BookingRejected:
		return "booking.rejected"
	case BookingCancelled:
		return "booking.cancelled"
	case StockRequested:
		return "stock.requested"
	case StockReplied:
		return "stock.replied"
	case StockLow:
		return "stock.low"
	case MAWBCreated:
		return "mawb.created"
	case PLACISubmitted:
		return "placi.submitted"
	case CSDSubmitted:
		return "csd.submitted"
	case DGDSubmitted:
		return "dgd.submitted"
	case ManifestSubmitted:
		return "manifest.submitted"
	case HAWBCreated:
		return "hawb.created"
	case DocumentUploaded:
		return "document.uploaded"
	case ShipmentStatusRecorded:
		if e := e.(ShipmentStatusRecorded); e.StatusCode == "DIS" && e.DiscrepancyCode == "OFLD" {
			return "shipment.offloaded"
		}
		return "shipment.status"
	case FlightStatusChanged:
		return "flight.status"
	case FlightAircraftChanged:
		return "flight.aircraft"
	}
	return ""
}

// IsWebhookEvent reports whether events of the type named (see
// EventType) are webhook events, whatever their fields: the webhook
// dispatcher passes the others by without waiting for or decoding them.
func IsWebhookEvent(eventType string) bool { return webhookEventTypes[eventType] }

// webhookEventTypes are the event types WebhookEventOf names, found by
// asking it of each type's empty event, so that the two never disagree.
var webhookEventTypes = func() map[string]bool {
	types := map[string]bool{}
	for name, decode := range decoders {
		if e, err := decode([]byte("{}")); err == nil && WebhookEventOf(e) != "" {
			types[name] = true
		}
	}
	return types
}()

// MatchesPattern reports whether an event name matches a subscription
// pattern: the name itself, "<group>.*", or "*".
func MatchesPattern(pattern, name string) bool {
	if pattern == "*" || pattern == name {
		return true
	}
	group, ok := strings.CutSuffix(pattern, ".*")
	return ok && strings.HasPrefix(name, group+".")
}

// validPattern reports whether a pattern can match a catalogue name.
func validPattern(p string) bool {
	return slices.ContainsFunc(WebhookEvents, func(name string) bool { return MatchesPattern(p, name) }) &&
		(p == "*" || slices.Contains(WebhookEvents, p) || strings.HasSuffix(p, ".*"))
}

// Webhook is a subscription of an organisation to events.
type Webhook struct {
	ID             string
	OrganizationID string
	// URL is the receiver's, without the user information (user and
	// password for basic authentication) of a URL that had some, which
	// is sealed apart, as the secret is (of a subscription registered
	// before this was so, it is in the URL).
	URL            string
	SealedUserInfo []byte
	Events         []string
	SealedSecret   []byte // encrypted: the secret is needed to sign
	CreatedAt      time.Time
	Deleted        bool
	Disabled       bool // the receiver answered 410 Gone
}

// ShownURL is the subscription's URL as its organisation is shown it, in
// answers and in the delivery log: with xxxxx for its user information,
// if it has any (https://user:password@…), a credential of the receiver's
// which, like the signing secret, is not shown again.
func (w Webhook) ShownURL() string {
	u, err := url.Parse(w.URL)
	if err != nil || (u.User == nil && len(w.SealedUserInfo) == 0) {
		return w.URL
	}
	u.User = url.User("xxxxx")
	return u.String()
}

// WithUserInfo is a URL without user information with userInfo (as a URL
// writes it, escaped: user:password) put in.
func WithUserInfo(rawURL, userInfo string) string {
	scheme, rest, _ := strings.Cut(rawURL, "://")
	return scheme + "://" + userInfo + "@" + rest
}

// SplitUserInfo is a URL without its user information, and that (as the
// URL writes it, escaped), "" when it has none; a URL that does not parse
// is returned as it is.
func SplitUserInfo(rawURL string) (withoutUserInfo, userInfo string) {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL, ""
	}
	userInfo = u.User.String()
	u.User = nil
	return u.String(), userInfo
}

// VisibleTo: a live subscription is its organisation's to see and
// manage, and admins' (see Principal.ActsFor); to anyone else, and once
// deleted, it does not exist.
func (w Webhook) VisibleTo(p Principal) bool {
	return !w.Deleted && p.ActsFor(w.OrganizationID)
}

// DeliveriesVisibleTo: a subscription's delivery log is its
// organisation's and admins' to read, once it is deleted too. It records
// what was sent where, which an investigation of a shipment asks after
// whether the subscription still exists or not.
func (w Webhook) DeliveriesVisibleTo(p Principal) bool {
	return p.ActsFor(w.OrganizationID)
}

// Live reports whether the subscription takes events at all: neither
// deleted nor disabled.
func (w Webhook) Live() bool { return !w.Deleted && !w.Disabled }

// A subscription's statuses. The API shows active or disabled; deleted
// only the audit log shows, as the API no longer finds the subscription.
const (
	WebhookStatusActive   = "active"
	WebhookStatusDisabled = "disabled"
	WebhookStatusDeleted  = "deleted"
)

// Status is the subscription's status (see WebhookStatusActive).
func (w Webhook) Status() string {
	switch {
	case w.Deleted:
		return WebhookStatusDeleted
	case w.Disabled:
		return WebhookStatusDisabled
	}
	return WebhookStatusActive
}

// Wants reports whether the subscription takes an event name.
func (w Webhook) Wants(name string) bool {
	return w.Live() && slices.ContainsFunc(w.Events, func(p string) bool { return MatchesPattern(p, name) })
}

// WebhookRegistered records a new subscription.
type WebhookRegistered struct {
	WebhookID      string    `json:"webhookId"`
	OrganizationID string    `json:"organizationId"`
	URL            string    `json:"url"` // without its user information, sealed apart
	SealedUserInfo []byte    `json:"sealedUserInfo,omitempty"`
	Events         []string  `json:"events"`
	SealedSecret   []byte    `json:"sealedSecret"`
	CreatedAt      time.Time `json:"createdAt"`
}

func (WebhookRegistered) EventType() string  { return "WebhookRegistered" }
func (WebhookRegistered) SetsStatus() string { return WebhookStatusActive }

// WebhookDeleted records a subscription ended by its organisation.
type WebhookDeleted struct {
	WebhookID string    `json:"webhookId"`
	DeletedAt time.Time `json:"deletedAt"`
}

func (WebhookDeleted) EventType() string  { return "WebhookDeleted" }
func (WebhookDeleted) SetsStatus() string { return WebhookStatusDeleted }

// WebhookDisabled records a subscription stopped because its receiver
// answered 410 Gone.
type WebhookDisabled struct {
	WebhookID  string    `json:"webhookId"`
	Reason     string    `json:"reason"`
	DisabledAt time.Time `json:"disabledAt"`
}

func (WebhookDisabled) EventType() string  { return "WebhookDisabled" }
func (WebhookDisabled) SetsStatus() string { return WebhookStatusDisabled }

// RegisterWebhook asks for a subscription; urlAllowed vets the target.
type RegisterWebhook struct {
	WebhookID      string
	OrganizationID string
	URL            string // without its user information
	SealedUserInfo []byte
	Events         []string
	SealedSecret   []byte
	At             time.Time
}

// ValidateWebhook checks a registration's url and events; urlAllowed says
// why a target is refused ("" when it is fine).
func ValidateWebhook(rawURL string, events []string, urlAllowed func(*url.URL) string) error {
	var p Problems
	u, err := url.Parse(rawURL)
	switch {
	case rawURL == "":
		p.Add("url", CodeRequired, "is required")
	case strings.ContainsFunc(rawURL, unicode.IsSpace):
		// A URL holds no white space (RFC 3986); Go's parser lets a
		// space in the path pass, and deliveries would go to another
		// path ("/hooks " is sent as "/hooks%20").
		p.Add("url", CodeInvalidFormat, "must not hold white space: write a space in a path as %%20")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		p.Add("url", CodeInvalidFormat, "must be an absolute http or https URL")
	case strings.Contains(rawURL, "#"):
		// A client never sends a fragment: the receiver would see
		// another URL than the one registered.
		p.Add("url", CodeInvalidFormat, "must not have a fragment (#…): it is never sent to the receiver")
	case u.Hostname() == "":
		// http://:8080/ names a port and no host: a client dials it
		// on the machine it runs on, the service's own.
		p.Add("url", CodeInvalidFormat, "must name a host: %s names none", u.Host)
	case len(rawURL) > 2000:
		p.Add("url", CodeTooLong, "must be at most 2000 characters")
	case !ValidPort(u.Port()):
		p.Add("url", CodeInvalidFormat, "the port must be from 1 to 65535")
	default:
		if why := urlAllowed(u); why != "" {
			p.Add("url", CodeURLNotAllowed, "%s", why)
		}
	}
	if len(events) == 0 {
		p.Add("events", CodeRequired, "name at least one event, a pattern such as booking.*, or *")
	} else if len(events) > 50 {
		p.Add("events", CodeTooMany, "must have at most 50 items")
	}
	for i, e := range events {
		// The refusal lists the catalogue: no endpoint serves it, and
		// the subscriber needs it to correct the name.
		if first := slices.Index(events[:i], e); first >= 0 {
			p.Add("events["+strconv.Itoa(i)+"]", CodeDuplicate, "%.40q is named already as events[%d]", e, first)
		} else if !validPattern(e) {
			p.Add("events["+strconv.Itoa(i)+"]", CodeInvalidValue, "%.40q is not a webhook event nor a pattern of one: name an event (%s), "+
				"every event of a group (booking.* for booking.created, booking.confirmed, …) or * for all", e, strings.Join(WebhookEvents, ", "))
		}
	}
	return p.Err()
}

// ValidPort reports whether a URL's port can be dialled: none (the
// scheme's), or 1 to 65535.
func ValidPort(port string) bool {
	n, err := strconv.Atoi(port)
	return port == "" || (err == nil && n >= 1 && n <= 65535)
}

// DecideRegisterWebhook records the subscription once.
func DecideRegisterWebhook(w Webhook, c RegisterWebhook) ([]Event, error) {
	if w.ID != "" {
		return nil, Errorf(Conflict, "webhook %s already exists", c.WebhookID)
	}
	return []Event{WebhookRegistered{WebhookID: c.WebhookID, OrganizationID: c.OrganizationID, URL: c.URL,
		SealedUserInfo: c.SealedUserInfo, Events: c.Events, SealedSecret: c.SealedSecret, CreatedAt: c.At}}, nil
}

// DecideDeleteWebhook ends a subscription p sees (see VisibleTo).
func DecideDeleteWebhook(w Webhook, p Principal, at time.Time) ([]Event, error) {
	if w.ID == "" || !w.VisibleTo(p) {
		return nil, Errorf(NotFound, "no such webhook")
	}
	return []Event{WebhookDeleted{WebhookID: w.ID, DeletedAt: at}}, nil
}

// DecideDisableWebhook stops a subscription whose receiver is gone.
func DecideDisableWebhook(w Webhook, reason string, at time.Time) ([]Event, error) {
	if w.ID == "" || !w.Live() {
		return nil, nil
	}
	return []Event{WebhookDisabled{WebhookID: w.ID, Reason: reason, DisabledAt: at}}, nil
}

// EvolveWebhook applies an event to a subscription.
func EvolveWebhook(w Webhook, e Event) Webhook {
	switch e := e.(type) {
	case WebhookRegistered:
		return Webhook{ID: e.WebhookID, OrganizationID: e.OrganizationID, URL: e.URL, SealedUserInfo: e.SealedUserInfo,
			Events: e.Events, SealedSecret: e.SealedSecret, CreatedAt: e.CreatedAt}
	case WebhookDeleted:
		w.Deleted = true
	case WebhookDisabled:
		w.Disabled = true
	}
	return w
}

// Delivery outcomes.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryRetrying  = "retrying"
	DeliveryDead      = "dead"
)

// WebhookDeliveryAttempted records one attempt to deliver an event to a
// subscription: the message exchange of the audit log.
type WebhookDeliveryAttempted struct {
	DeliveryID string `json:"deliveryId"`
	WebhookID  string `json:"webhookId"`
	OrgID      string `json:"organizationId"` // the subscriber's: whose audit log it belongs in
	EventName  string `json:"eventName"`
	EventID    string `json:"eventId"`
	EventSeq   uint64 `json:"eventSequence"` // for redelivery
	// MessageID is the webhook-id the receiver was sent when it is not
	// MessageIDOf(DeliveryID): a redelivery's is its original's.
	MessageID string `json:"messageId,omitempty"`
	// RequestedBy is the subject of the credential that asked for a ping
	// or a redelivery, whose attempts are its events' actor; empty for
	// the delivery of an event, the dispatcher's.
	RequestedBy string    `json:"requestedBy,omitempty"`
	Attempt     int       `json:"attempt"`
	StatusCode  int       `json:"statusCode,omitempty"`
	LatencyMs   int64     `json:"latencyMs"`
	Error       string    `json:"error,omitempty"`
	Outcome     string    `json:"outcome"` // delivered, retrying, dead
	NextTryAt   time.Time `json:"nextTryAt,omitzero"`
	At          time.Time `json:"at"`
}

func (WebhookDeliveryAttempted) EventType() string { return "WebhookDeliveryAttempted" }

// MessageIDOf is the webhook-id of a delivery's attempts: the same on
// every retry, and on a redelivery by hand, which is the same message
// again (Standard Webhooks: a receiver deduplicates on it).
func MessageIDOf(deliveryID string) string { return "msg_" + deliveryID }
