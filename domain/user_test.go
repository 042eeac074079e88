package domain

import (
	"testing"
	"time"
)

func TestDecideCreateUser(t *testing.T) {
	base := func() CreateUser {
		return CreateUser{UserID: "u1", Username: "ops@f1.example", OrganizationID: "f1", PasswordHash: "$2a$10$y",
			At: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	}
	tests := []struct {
		name   string
		u      User
		org    Organization
		change func(c *CreateUser)
		want   string // the user created, or the first problem's code and field, or the error's code
	}{
		{"a user", User{}, Organization{ID: "f1"}, func(*CreateUser) {}, "u1 ops@f1.example of f1, hash $2a$10$y"},
		{"a username with a space", User{}, Organization{ID: "f1"}, func(c *CreateUser) { c.Username = "ops f1" }, "INVALID_FORMAT username"},
		{"no username", User{}, Organization{ID: "f1"}, func(c *CreateUser) { c.Username = "" }, "INVALID_FORMAT username"},
		{"no organisation", User{}, Organization{}, func(*CreateUser) {}, "INVALID_VALUE organizationId"},
		{"created already", User{UserID: "u1"}, Organization{ID: "f1"}, func(*CreateUser) {}, "conflict"},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, err := DecideCreateUser(tt.u, tt.org, c)
		got := outcomeOf(events, err, func(e UserCreated) string {
			return e.UserID + " " + e.Username + " of " + e.OrganizationID + ", hash " + e.PasswordHash
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}
