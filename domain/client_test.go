package domain

import (
	"fmt"
	"testing"
	"time"
)

func TestDecideCreateClient(t *testing.T) {
	base := func() CreateClient {
		return CreateClient{ClientID: "f1-erp", OrganizationID: "f1", SecretHash: "$2a$10$x", At: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	}
	tests := []struct {
		name   string
		c      Client
		org    Organization
		change func(c *CreateClient)
		want   string // the client created, or the first problem's code and field, or the error's code
	}{
		{"a client", Client{}, Organization{ID: "f1"}, func(*CreateClient) {}, "f1-erp of f1, hash $2a$10$x, demo false"},
		{"a demo client", Client{}, Organization{ID: "f1"}, func(c *CreateClient) { c.Demo = true }, "f1-erp of f1, hash $2a$10$x, demo true"},
		{"an id starting with a dash", Client{}, Organization{ID: "f1"}, func(c *CreateClient) { c.ClientID = "-erp" }, "INVALID_FORMAT clientId"},
		{"no id", Client{}, Organization{ID: "f1"}, func(c *CreateClient) { c.ClientID = "" }, "INVALID_FORMAT clientId"},
		{"no organisation", Client{}, Organization{}, func(*CreateClient) {}, "INVALID_VALUE organizationId"},
		{"created already", Client{ClientID: "f1-erp"}, Organization{ID: "f1"}, func(*CreateClient) {}, "conflict"},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, err := DecideCreateClient(tt.c, tt.org, c)
		got := outcomeOf(events, err, func(e ClientCreated) string {
			return fmt.Sprintf("%s of %s, hash %s, demo %v", e.ClientID, e.OrganizationID, e.SecretHash, e.Demo)
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}
