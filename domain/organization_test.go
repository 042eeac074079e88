package domain

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDecideCreateOrganization(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	airline := CreateOrganization{OrganizationID: "lh-cargo", Name: " Lufthansa Cargo ", Role: RoleAirline, AWBPrefix: "020", AirlineCode: "lh", At: at}
	forwarder := CreateOrganization{OrganizationID: "f1", Name: "F1 Forwarding", Role: RoleForwarder, Demo: true, At: at}
	nameless, prefixless, chinese, tooLong := forwarder, airline, forwarder, forwarder
	nameless.Name, prefixless.AWBPrefix = " ", ""
	chinese.Name, tooLong.Name = strings.Repeat("货", 100), strings.Repeat("n", 201)
	tests := []struct {
		name string
		o    Organization
		c    CreateOrganization
		want string // the organisation created, or the first problem's code and field, or the error's code
	}{
		{"an airline", Organization{}, airline, `lh-cargo airline "Lufthansa Cargo", prefix "020", code "LH", demo false`},
		{"a demo forwarder", Organization{}, forwarder, `f1 forwarder "F1 Forwarding", prefix "", code "", demo true`},
		{"a name of 100 Chinese characters", Organization{}, chinese, `f1 forwarder "` + chinese.Name + `", prefix "", code "", demo true`},
		{"a name of 201 characters", Organization{}, tooLong, "TOO_LONG name"},
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

func TestOrganizationUsableInDemoMode(t *testing.T) {
	tests := []struct {
		name     string
		o        Organization
		demoMode bool
		want     bool
	}{
		{"a demo organisation, demo mode on", Organization{ID: "demo-forwarder", Role: RoleForwarder, Demo: true}, true, true},
		{"a demo organisation, demo mode off", Organization{ID: "demo-forwarder", Role: RoleForwarder, Demo: true}, false, false},
		{"the demo's admin organisation, demo mode off", Organization{ID: "demo-admin", Role: RoleAdmin, Demo: true}, false, false},
		{"an organisation an admin created, demo mode on", Organization{ID: "f1", Role: RoleForwarder}, true, true},
		{"an organisation an admin created, demo mode off", Organization{ID: "f1", Role: RoleForwarder}, false, true},
		{"the operator, demo mode off", Organization{ID: "operator", Role: RoleAdmin}, false, true},
		// The flag the demo seeding set decides, not the name.
		{"an organisation an admin named demo-x, demo mode off", Organization{ID: "demo-x", Role: RoleForwarder}, false, true},
	}
	for _, tt := range tests {
		if got := tt.o.UsableInDemoMode(tt.demoMode); got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestOrganizationPrincipal(t *testing.T) {
	tests := []struct {
		name    string
		o       Organization
		subject string
		want    Principal
	}{
		{"a forwarder's client acts as a forwarder of it", Organization{ID: "f1", Name: "F1", Role: RoleForwarder}, "client:f1-api",
			Principal{Subject: "client:f1-api", OrganizationID: "f1", Role: RoleForwarder}},
		{"an airline's user carries its IATA code and AWB prefix", Organization{ID: "lh", Role: RoleAirline, AirlineCode: "LH", AWBPrefix: "020", Demo: true},
			"user:ops", Principal{Subject: "user:ops", OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}},
		{"a webhook subscriber is seen as its organisation", Organization{ID: "ops", Role: RoleAdmin}, "webhook",
			Principal{Subject: "webhook", OrganizationID: "ops", Role: RoleAdmin}},
	}
	for _, tt := range tests {
		if got := tt.o.Principal(tt.subject); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
