package domain

import (
	"fmt"
	"testing"
	"time"
)

func TestDecideCreateOrganization(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	airline := CreateOrganization{OrganizationID: "lh-cargo", Name: " Lufthansa Cargo ", Role: RoleAirline, AWBPrefix: "020", AirlineCode: "lh", At: at}
	forwarder := CreateOrganization{OrganizationID: "f1", Name: "F1 Forwarding", Role: RoleForwarder, Demo: true, At: at}
	nameless, prefixless := forwarder, airline
	nameless.Name, prefixless.AWBPrefix = " ", ""
	tests := []struct {
		name string
		o    Organization
		c    CreateOrganization
		want string // the organisation created, or the first problem's code and field, or the error's code
	}{
		{"an airline", Organization{}, airline, `lh-cargo airline "Lufthansa Cargo", prefix "020", code "LH", demo false`},
		{"a demo forwarder", Organization{}, forwarder, `f1 forwarder "F1 Forwarding", prefix "", code "", demo true`},
		{"no name", Organization{}, nameless, "REQUIRED name"},
		{"an airline without its prefix", Organization{}, prefixless, "INVALID_FORMAT awbPrefix"},
		{"created already", Organization{ID: "f1"}, forwarder, "conflict"},
	}
	for _, tt := range tests {
		events, err := DecideCreateOrganization(tt.o, tt.c)
		got := outcomeOf(events, err, func(e OrganizationCreated) string {
			return fmt.Sprintf("%s %s %q, prefix %q, code %q, demo %v", e.OrganizationID, e.Role, e.Name, e.AWBPrefix, e.AirlineCode, e.Demo)
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}
