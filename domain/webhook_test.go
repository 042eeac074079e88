package domain

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The history of forwarder f1's subscription w1 to its bookings: it is
// registered, then deleted, or disabled because its receiver is gone.
var (
	w1Registered = WebhookRegistered{WebhookID: "w1", OrganizationID: "f1", URL: "https://f1.example/hooks", Events: []string{"booking.*"}}
	w1Deleted    = WebhookDeleted{WebhookID: "w1"}
	w1Disabled   = WebhookDisabled{WebhookID: "w1", Reason: "410 Gone"}

	f1Forwarder = Principal{OrganizationID: "f1", Role: RoleForwarder}
	opsAdmin    = Principal{OrganizationID: "ops", Role: RoleAdmin}
)

func TestDecideRegisterWebhook(t *testing.T) {
	c := RegisterWebhook{WebhookID: "w1", OrganizationID: "f1", URL: "https://f1.example/hooks", Events: []string{"booking.*", "stock.low"},
		SealedSecret: []byte("sealed"), At: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	tests := []struct {
		name    string
		history []Event
		want    string // the subscription recorded, or the error's code
	}{
		{"a new one", nil, `w1 of f1 to https://f1.example/hooks for [booking.* stock.low], secret "sealed"`},
		{"registered already", []Event{w1Registered}, "conflict"},
		{"registered, then deleted", []Event{w1Registered, w1Deleted}, "conflict"},
	}
	for _, tt := range tests {
		events, err := DecideRegisterWebhook(given(EvolveWebhook, tt.history...), c)
		got := outcomeOf(events, err, func(e WebhookRegistered) string {
			return fmt.Sprintf("%s of %s to %s for %v, secret %q", e.WebhookID, e.OrganizationID, e.URL, e.Events, e.SealedSecret)
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestWebhookVisibleTo(t *testing.T) {
	live := given(EvolveWebhook, w1Registered)
	tests := []struct {
		name string
		w    Webhook
		p    Principal
		want bool
	}{
		{"its organisation sees its subscription", live, f1Forwarder, true},
		{"an admin sees any organisation's", live, opsAdmin, true},
		{"another forwarder does not", live, Principal{OrganizationID: "f2", Role: RoleForwarder}, false},
		{"an airline does not", live, Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}, false},
		{"its organisation still sees it disabled", given(EvolveWebhook, w1Registered, w1Disabled), f1Forwarder, true},
		{"nobody sees it deleted, not even its organisation", given(EvolveWebhook, w1Registered, w1Deleted), f1Forwarder, false},
		{"nor an admin", given(EvolveWebhook, w1Registered, w1Deleted), opsAdmin, false},
	}
	for _, tt := range tests {
		if got := tt.w.VisibleTo(tt.p); got != tt.want {
			t.Errorf("%s: visible = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestWebhookDeliveriesVisibleTo(t *testing.T) {
	deleted := given(EvolveWebhook, w1Registered, w1Deleted)
	tests := []struct {
		name string
		w    Webhook
		p    Principal
		want bool
	}{
		{"its organisation reads a live subscription's deliveries", given(EvolveWebhook, w1Registered), f1Forwarder, true},
		{"and a deleted one's", deleted, f1Forwarder, true},
		{"so does an admin", deleted, opsAdmin, true},
		{"another forwarder does not", deleted, Principal{OrganizationID: "f2", Role: RoleForwarder}, false},
		{"nor an airline", deleted, Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}, false},
	}
	for _, tt := range tests {
		if got := tt.w.DeliveriesVisibleTo(tt.p); got != tt.want {
			t.Errorf("%s: visible = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDecideDeleteWebhook(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		history []Event
		p       Principal
		want    string // the subscription deleted, or the error's code
	}{
		{"by its organisation", []Event{w1Registered}, f1Forwarder, "w1"},
		{"by an admin", []Event{w1Registered}, opsAdmin, "w1"},
		{"disabled, by its organisation", []Event{w1Registered, w1Disabled}, f1Forwarder, "w1"},
		{"by another organisation", []Event{w1Registered}, Principal{OrganizationID: "f2", Role: RoleForwarder}, "not_found"},
		{"deleted already", []Event{w1Registered, w1Deleted}, f1Forwarder, "not_found"},
		{"no subscription", nil, opsAdmin, "not_found"},
	}
	for _, tt := range tests {
		events, err := DecideDeleteWebhook(given(EvolveWebhook, tt.history...), tt.p, at)
		if got := outcomeOf(events, err, func(e WebhookDeleted) string { return e.WebhookID }); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDecideDisableWebhook(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		history []Event
		want    string // the subscription disabled and why, or "" for no change
	}{
		{"active", []Event{w1Registered}, "w1: 410 Gone"},
		{"disabled already", []Event{w1Registered, w1Disabled}, ""},
		{"deleted", []Event{w1Registered, w1Deleted}, ""},
		{"no subscription", nil, ""},
	}
	for _, tt := range tests {
		events, err := DecideDisableWebhook(given(EvolveWebhook, tt.history...), "410 Gone", at)
		if got := outcomeOf(events, err, func(e WebhookDisabled) string { return e.WebhookID + ": " + e.Reason }); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Every status change of a flight is flight.status, whatever the status:
// a subscription to it, to flight.* or to * takes it, and the dispatcher
// decodes the events of its type.
func TestAFlightStatusChangeIsTheWebhookEventFlightStatus(t *testing.T) {
	for _, status := range []string{FlightStatusDelayed, FlightStatusDeparted, FlightStatusArrived, FlightStatusCancelled} {
		e := FlightStatusChanged{FlightID: "LH8400-2026-11-26", Status: status, Previous: FlightStatusScheduled}
		if got := WebhookEventOf(e); got != "flight.status" {
			t.Errorf("a flight %s is the webhook event %q, want flight.status", status, got)
		}
	}
	if !IsWebhookEvent(FlightStatusChanged{}.EventType()) || IsWebhookEvent(FlightScheduled{}.EventType()) {
		t.Errorf("IsWebhookEvent: a status change %v, a flight scheduled %v; want true, false",
			IsWebhookEvent(FlightStatusChanged{}.EventType()), IsWebhookEvent(FlightScheduled{}.EventType()))
	}
	anyURL := func(*url.URL) string { return "" }
	for _, tt := range []struct {
		pattern string
		wants   bool
	}{{"flight.status", true}, {"flight.*", true}, {"*", true}, {"shipment.*", false}} {
		if err := ValidateWebhook("https://192.0.2.1/", []string{tt.pattern}, anyURL); err != nil {
			t.Errorf("a subscription to %s is refused: %v", tt.pattern, err)
		}
		w := Webhook{ID: "w1", Events: []string{tt.pattern}}
		if got := w.Wants("flight.status"); got != tt.wants {
			t.Errorf("a subscription to %s wants flight.status: %v, want %v", tt.pattern, got, tt.wants)
		}
	}
}

// An event name that is not in the catalogue is refused with the
// catalogue and the patterns, so that the subscriber can correct it
// without looking for where the names are listed.
func TestAnUnknownWebhookEventIsRefusedNamingTheEventsAndPatterns(t *testing.T) {
	anyURL := func(*url.URL) string { return "" }
	for _, name := range []string{"quote.exploded", "booking.confirm", "Booking.*", "stock", "**"} {
		t.Run(name, func(t *testing.T) {
			var e *Error
			if !errors.As(ValidateWebhook("https://192.0.2.1/", []string{"stock.low", name}, anyURL), &e) || len(e.Fields) != 1 {
				t.Fatalf("%q is not refused alone", name)
			}
			f := e.Fields[0]
			if f.Field != "events[1]" || f.Code != CodeInvalidValue || !strings.HasPrefix(f.Message, strconv.Quote(name)+" is not a webhook event") {
				t.Errorf("= %+v, want events[1] INVALID_VALUE quoting %q", f, name)
			}
			for _, want := range append([]string{"booking.*", "* for all"}, WebhookEvents...) {
				if !strings.Contains(f.Message, want) {
					t.Errorf("%q does not name %s", f.Message, want)
				}
			}
		})
	}
}

func TestAWebhookIsRefusedWithAMessageOfMeasure(t *testing.T) {
	anyURL := func(*url.URL) string { return "" }
	long := strings.Repeat("x", 100_000)
	tests := []struct {
		name   string
		url    string
		events []string
		field  string
		code   FieldCode
		says   string
	}{
		{"a URL of a port and no host", "http://:8080/hooks", []string{"*"}, "url", CodeInvalidFormat, "must name a host: :8080 names none"},
		{"a URL of no host nor port", "http://:/hooks", []string{"*"}, "url", CodeInvalidFormat, "must name a host: : names none"},
		{"a URL with a space after it", "https://192.0.2.1/hooks ", []string{"*"}, "url", CodeInvalidFormat, "must not hold white space"},
		{"a URL with a space in its path", "https://192.0.2.1/my hooks", []string{"*"}, "url", CodeInvalidFormat, "must not hold white space"},
		{"a URL with a space in its host", "http://exa mple.com/", []string{"*"}, "url", CodeInvalidFormat, "must not hold white space"},
		{"a URL with a tab in its query", "https://192.0.2.1/hooks?a=\tb", []string{"*"}, "url", CodeInvalidFormat, "must"},
		{"a URL with a fragment", "https://192.0.2.1/hooks#cargo", []string{"*"}, "url", CodeInvalidFormat, "must not have a fragment"},
		{"a URL with an empty fragment", "https://192.0.2.1/hooks#", []string{"*"}, "url", CodeInvalidFormat, "must not have a fragment"},
		{"a pattern named twice", "https://192.0.2.1/", []string{"*", "stock.low", "*"}, "events[2]", CodeDuplicate, `"*" is named already as events[0]`},
		{"an unknown event of 100 000 characters, quoted to its first 40", "https://192.0.2.1/", []string{long}, "events[0]", CodeInvalidValue,
			`"` + long[:40] + `" is not a webhook event`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *Error
			if !errors.As(ValidateWebhook(tt.url, tt.events, anyURL), &e) || len(e.Fields) != 1 {
				t.Fatalf("not refused alone: %v", e)
			}
			f := e.Fields[0]
			if f.Field != tt.field || f.Code != tt.code || !strings.HasPrefix(f.Message, tt.says) || len(f.Message) > 1000 {
				t.Errorf("= %s %s %.200q (%d bytes), want %s %s %q", f.Field, f.Code, f.Message, len(f.Message), tt.field, tt.code, tt.says)
			}
		})
	}
}

// A URL's user information is taken out to be sealed apart, and put back
// as it was, escaped as the URL wrote it, for a delivery.
func TestAURLsUserInformationIsTakenOutAndPutBackAsItWas(t *testing.T) {
	for _, tt := range []struct{ url, without, userInfo string }{
		{"https://tms.example.com/hooks", "https://tms.example.com/hooks", ""},
		{"https://alice:p%40ss%3Aword@tms.example.com:8443/hooks?x=1", "https://tms.example.com:8443/hooks?x=1", "alice:p%40ss%3Aword"},
		{"http://only-a-token@127.0.0.1/", "http://127.0.0.1/", "only-a-token"},
		{"https://:s3cret@tms.example.com/", "https://tms.example.com/", ":s3cret"},
	} {
		without, userInfo := SplitUserInfo(tt.url)
		if without != tt.without || userInfo != tt.userInfo {
			t.Errorf("%s splits into %q and %q, want %q and %q", tt.url, without, userInfo, tt.without, tt.userInfo)
		}
		if userInfo != "" && WithUserInfo(without, userInfo) != tt.url {
			t.Errorf("%s is put back together as %s", tt.url, WithUserInfo(without, userInfo))
		}
	}
}
