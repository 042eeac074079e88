package domain

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestCheckOrganizationReader(t *testing.T) {
	tests := []struct {
		name         string
		p            Principal
		organization string
		want         string
	}{
		{"an organisation reads its own usage", Principal{OrganizationID: "f1", Role: RoleForwarder}, "f1", ""},
		{"a forwarder does not read another's", Principal{OrganizationID: "f1", Role: RoleForwarder}, "f2",
			"forbidden: only an admin reads another organisation's usage"},
		{"nor does an airline read a forwarder's", Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}, "f1",
			"forbidden: only an admin reads another organisation's usage"},
		{"an admin reads any organisation's", Principal{OrganizationID: "ops", Role: RoleAdmin}, "f1", ""},
	}
	if got, want := errText(CheckOrganizationReader(Principal{OrganizationID: "f1", Role: RoleForwarder}, "f2", "webhooks")),
		"forbidden: only an admin reads another organisation's webhooks"; got != want {
		t.Errorf("a forwarder lists another's webhooks: %q, want %q", got, want)
	}
	for _, tt := range tests {
		if got := errText(CheckOrganizationReader(tt.p, tt.organization, "usage")); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDecideSetRateLimits(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	f1 := []Event{OrganizationCreated{OrganizationID: "f1", Role: RoleForwarder}}
	limited := slices.Concat(f1, []Event{OrganizationRateLimitsSet{OrganizationID: "f1", Limits: RateLimits{PerMinute: 60}}})
	tests := []struct {
		name    string
		history []Event
		by      string // the organisation of the admin asking
		l       RateLimits
		want    string // the limits set, "" for no change, or the first problem's code and field, or the error's code
	}{
		{"limits of its own", f1, "operator", RateLimits{PerMinute: 60, PerHour: 1000, PerDay: 10_000_000}, "f1: 60/min 1000/h 10000000/day"},
		{"other limits", limited, "operator", RateLimits{PerMinute: 120}, "f1: 120/min 0/h 0/day"},
		{"back to the defaults", limited, "operator", RateLimits{}, "f1: 0/min 0/h 0/day"},
		{"the same limits again", limited, "operator", RateLimits{PerMinute: 60}, ""},
		{"the defaults, never changed", f1, "operator", RateLimits{}, ""},
		{"a negative limit", f1, "operator", RateLimits{PerMinute: -1}, "INVALID_RANGE requestsPerMinute"},
		{"too many a day", f1, "operator", RateLimits{PerDay: 10_000_001}, "INVALID_RANGE requestsPerDay"},
		{"no organisation", nil, "operator", RateLimits{PerMinute: 60}, "not_found"},
		// Set low, they would shut its own credential out.
		{"its own, by an admin of it", f1, "f1", RateLimits{PerMinute: 1}, "conflict"},
		{"its own, unchanged", limited, "f1", RateLimits{PerMinute: 60}, ""},
	}
	for _, tt := range tests {
		by := Principal{Subject: "client:admin", OrganizationID: tt.by, Role: RoleAdmin}
		events, err := DecideSetRateLimits(given(EvolveOrganization, tt.history...), by, tt.l, at)
		got := outcomeOf(events, err, func(e OrganizationRateLimitsSet) string {
			return fmt.Sprintf("%s: %d/min %d/h %d/day", e.OrganizationID, e.Limits.PerMinute, e.Limits.PerHour, e.Limits.PerDay)
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestReadinessDetailsAreTheOperators(t *testing.T) {
	for _, tt := range []struct {
		p    Principal
		want bool
	}{
		{Principal{}, false}, // no credential: a load balancer, a probe, anyone
		{Principal{OrganizationID: "f1", Role: RoleForwarder}, false},
		{Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH"}, false},
		{Principal{OrganizationID: "ops", Role: RoleAdmin}, true},
	} {
		if got := ReadinessDetailsVisibleTo(tt.p); got != tt.want {
			t.Errorf("%+v: %v, want %v", tt.p, got, tt.want)
		}
	}
}
