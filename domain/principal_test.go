package domain

import "testing"

func TestActsFor(t *testing.T) {
	tests := []struct {
		name         string
		p            Principal
		organization string
		want         bool
	}{
		{"a forwarder acts for its own organisation", Principal{OrganizationID: "f1", Role: RoleForwarder}, "f1", true},
		{"not for another", Principal{OrganizationID: "f1", Role: RoleForwarder}, "f2", false},
		{"nor for no organisation", Principal{OrganizationID: "f1", Role: RoleForwarder}, "", false},
		{"an airline not for the forwarders it carries for", Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}, "f1", false},
		{"an admin acts for any organisation", Principal{OrganizationID: "ops", Role: RoleAdmin}, "f1", true},
	}
	for _, tt := range tests {
		if got := tt.p.ActsFor(tt.organization); got != tt.want {
			t.Errorf("%s: acts for = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestOrganizationScope(t *testing.T) {
	tests := []struct {
		name string
		p    Principal
		want string
	}{
		{"a forwarder is confined to its own organisation", Principal{OrganizationID: "f1", Role: RoleForwarder}, "f1"},
		{"so is an airline", Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}, "lh"},
		{"an admin spans every organisation", Principal{OrganizationID: "ops", Role: RoleAdmin}, ""},
	}
	for _, tt := range tests {
		if got := tt.p.OrganizationScope(); got != tt.want {
			t.Errorf("%s: scope = %q, want %q", tt.name, got, tt.want)
		}
	}
}
