package domain

import (
	"strings"
	"testing"
	"time"
)

func TestDecideCreateAPIKey(t *testing.T) {
	base := func() CreateAPIKey {
		return CreateAPIKey{KeyID: "k1", OrganizationID: "f1", Name: " CI pipeline ", KeyHash: "5e88",
			At: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	}
	tests := []struct {
		name   string
		k      APIKey
		org    Organization
		change func(c *CreateAPIKey)
		want   string // the key created, or the first problem's code and field, or the error's code
	}{
		{"a key", APIKey{}, Organization{ID: "f1"}, func(*CreateAPIKey) {}, `k1 of f1 named "CI pipeline", hash 5e88`},
		{"without a name", APIKey{}, Organization{ID: "f1"}, func(c *CreateAPIKey) { c.Name = "" }, `k1 of f1 named "", hash 5e88`},
		{"a name of 200 characters", APIKey{}, Organization{ID: "f1"}, func(c *CreateAPIKey) { c.Name = strings.Repeat("n", 200) },
			`k1 of f1 named "` + strings.Repeat("n", 200) + `", hash 5e88`},
		{"a name of 100 Chinese characters", APIKey{}, Organization{ID: "f1"}, func(c *CreateAPIKey) { c.Name = strings.Repeat("机", 100) },
			`k1 of f1 named "` + strings.Repeat("机", 100) + `", hash 5e88`},
		{"a name of 201 characters", APIKey{}, Organization{ID: "f1"}, func(c *CreateAPIKey) { c.Name = strings.Repeat("n", 201) }, "TOO_LONG name"},
		{"no organisation", APIKey{}, Organization{}, func(*CreateAPIKey) {}, "INVALID_VALUE organizationId"},
		{"created already", APIKey{KeyID: "k1"}, Organization{ID: "f1"}, func(*CreateAPIKey) {}, "conflict"},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, err := DecideCreateAPIKey(tt.k, tt.org, c)
		got := outcomeOf(events, err, func(e APIKeyCreated) string {
			return e.KeyID + " of " + e.OrganizationID + ` named "` + e.Name + `", hash ` + e.KeyHash
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDecideRevokeAPIKey(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	created := APIKeyCreated{KeyID: "k1", OrganizationID: "f1", KeyHash: "5e88"}
	admin := Principal{Subject: "client:ops", OrganizationID: "operator", Role: RoleAdmin}
	tests := []struct {
		name    string
		history []Event
		by      Principal
		want    string // the key revoked, "" for no change, or the error's code
	}{
		{"in use", []Event{created}, admin, "k1"},
		{"by another key", []Event{created}, Principal{Subject: "apikey:k2", OrganizationID: "f1", Role: RoleAdmin}, "k1"},
		// No lock-out by accident, as with clients and users.
		{"by the key itself", []Event{created}, Principal{Subject: "apikey:k1", OrganizationID: "f1", Role: RoleAdmin}, "conflict"},
		{"revoked already", []Event{created, APIKeyRevoked{KeyID: "k1"}}, admin, ""},
		{"no key", nil, admin, "not_found"},
	}
	for _, tt := range tests {
		events, err := DecideRevokeAPIKey(given(EvolveAPIKey, tt.history...), tt.by, at)
		if got := outcomeOf(events, err, func(e APIKeyRevoked) string { return e.KeyID }); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}
