package domain

import "testing"

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
