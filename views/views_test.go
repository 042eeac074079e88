package views

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

func TestWhatTheSpecTypesAsAStringOrObjectIsNeverNull(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	pending := domain.StockRequest{ID: "s1", Status: domain.StockStatusPending, OrganizationID: "f1", AirlinePrefix: "020", RequestedStock: 10, SubmittedAt: at}
	tests := []struct {
		name    string
		value   any
		absent  []string // left out
		present []string // with their JSON text
	}{
		{"a booking without an AWB number", ToBookingJSON(domain.Booking{ID: "b1", Status: domain.BookingStatusPending}),
			[]string{`"awbNumber"`}, nil},
		{"a booking with one", ToBookingJSON(domain.Booking{ID: "b1", Status: domain.BookingStatusConfirmed, AWBNumber: "020-81140743"}),
			nil, []string{`"awbNumber":"020-81140743"`}},
		{"a pending stock request", ToStockRequestJSON(pending),
			[]string{`"validFrom"`, `"validTo"`, `"startNumber"`, `"endNumber"`}, []string{`"processedAt":null`, `"approvalNotes":null`}},
		{"the audit entry of a create", ToAuditEntryJSON(projections.AuditEntry{ID: "e1", Action: "create", Resource: "quote"}),
			nil, []string{`"details":{"field":"","oldValue":"","newValue":""}`}},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.value)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range tt.absent {
			if strings.Contains(string(b), key) {
				t.Errorf("%s: %s is there: %s", tt.name, key, b)
			}
		}
		for _, text := range tt.present {
			if !strings.Contains(string(b), text) {
				t.Errorf("%s: no %s in %s", tt.name, text, b)
			}
		}
	}
}

func TestABookingSaysWhyItWasRejectedOrCancelled(t *testing.T) {
	tests := []struct {
		name                string
		b                   domain.Booking
		rejected, cancelled string // "" for null
	}{
		{"confirmed", domain.Booking{Status: domain.BookingStatusConfirmed}, "", ""},
		{"rejected", domain.Booking{Status: domain.BookingStatusRejected, Reason: domain.ReasonNoOption}, domain.ReasonNoOption, ""},
		{"cancelled by the forwarder", domain.Booking{Status: domain.BookingStatusCancelled}, "", domain.ReasonForwarderCancelled},
		{"cancelled with its flight", domain.Booking{Status: domain.BookingStatusCancelled, Reason: domain.ReasonFlightCanceled}, "", domain.ReasonFlightCanceled},
	}
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	for _, tt := range tests {
		got := ToBookingJSON(tt.b)
		if deref(got.RejectionReason) != tt.rejected || deref(got.CancellationReason) != tt.cancelled {
			t.Errorf("%s: rejectionReason %q, cancellationReason %q; want %q, %q", tt.name, deref(got.RejectionReason), deref(got.CancellationReason),
				tt.rejected, tt.cancelled)
		}
	}
}

// The flight's airline reads a booking to know who booked it: the agent it
// deals with and invoices. The booking showed no forwarder, though every
// booking records the one that filed it.
func TestABookingNamesTheForwarderThatFiledIt(t *testing.T) {
	tests := []struct {
		name string
		b    domain.Booking
		want string
	}{
		{"pending", domain.Booking{ID: "b1", Status: domain.BookingStatusPending, OrganizationID: "acme"}, `"organizationId":"acme"`},
		{"cancelled with its flight", domain.Booking{ID: "b2", Status: domain.BookingStatusCancelled, Reason: domain.ReasonFlightCanceled,
			OrganizationID: "globex"}, `"organizationId":"globex"`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(ToBookingJSON(tt.b))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: no %s in %s", tt.name, tt.want, b)
		}
	}
}

func TestASubscriptionsURLIsShownWithoutItsUserInformation(t *testing.T) {
	tests := []struct {
		stored string
		sealed []byte // the user information, sealed apart
		shown  string
	}{
		{"https://tms.example.com/cargo-hooks", nil, "https://tms.example.com/cargo-hooks"},
		{"https://tms.example.com/cargo-hooks?x=1", []byte("sealed"), "https://xxxxx@tms.example.com/cargo-hooks?x=1"},
		// Registered before the user information was sealed apart:
		{"https://hooks:s3cret@tms.example.com/cargo-hooks?x=1", nil, "https://xxxxx@tms.example.com/cargo-hooks?x=1"},
		{"https://only-a-token@tms.example.com/cargo-hooks", nil, "https://xxxxx@tms.example.com/cargo-hooks"},
		{"https://:s3cret@tms.example.com:8443/", nil, "https://xxxxx@tms.example.com:8443/"},
	}
	for _, tt := range tests {
		if got := ToWebhookJSON(domain.Webhook{URL: tt.stored, SealedUserInfo: tt.sealed}).URL; got != tt.shown {
			t.Errorf("%s is shown as %s, want %s", tt.stored, got, tt.shown)
		}
	}
}
