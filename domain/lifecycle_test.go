package domain

import (
	"testing"
	"time"
)

func TestCredentialStatusChanges(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	admin := Principal{Subject: "client:ops", OrganizationID: "ops", Role: RoleAdmin}
	client := ClientCreated{ClientID: "tms", OrganizationID: "acme"}
	user := UserCreated{UserID: "u1", Username: "Ana@Acme", OrganizationID: "acme"}
	org := OrganizationCreated{OrganizationID: "acme", Role: RoleForwarder}
	tell := func(status CredentialStatus) string { return string(status) }
	tests := []struct {
		name   string
		decide func() ([]Event, error)
		want   string // the status set, "" for no change, or the error's code
	}{
		{"a client is disabled", func() ([]Event, error) {
			return DecideClientStatus(given(EvolveClient, client), admin, StatusDisabled, at)
		}, "disabled"},
		{"a disabled client is enabled", func() ([]Event, error) {
			return DecideClientStatus(given(EvolveClient, client, ClientStatusChanged{Status: StatusDisabled}), admin, StatusActive, at)
		}, "active"},
		{"an active client enabled changes nothing", func() ([]Event, error) {
			return DecideClientStatus(given(EvolveClient, client), admin, StatusActive, at)
		}, ""},
		{"a deleted client deleted again changes nothing", func() ([]Event, error) {
			return DecideClientStatus(given(EvolveClient, client, ClientStatusChanged{Status: StatusDeleted}), admin, StatusDeleted, at)
		}, ""},
		{"a deleted client is not enabled", func() ([]Event, error) {
			return DecideClientStatus(given(EvolveClient, client, ClientStatusChanged{Status: StatusDeleted}), admin, StatusActive, at)
		}, "conflict"},
		{"a deleted client is not disabled", func() ([]Event, error) {
			return DecideClientStatus(given(EvolveClient, client, ClientStatusChanged{Status: StatusDeleted}), admin, StatusDisabled, at)
		}, "conflict"},
		{"no client", func() ([]Event, error) { return DecideClientStatus(Client{}, admin, StatusDisabled, at) }, "not_found"},
		{"an admin does not disable its own client", func() ([]Event, error) {
			return DecideClientStatus(given(EvolveClient, ClientCreated{ClientID: "ops", OrganizationID: "ops"}), admin, StatusDisabled, at)
		}, "conflict"},
		{"an admin does not delete its own client", func() ([]Event, error) {
			return DecideClientStatus(given(EvolveClient, ClientCreated{ClientID: "ops", OrganizationID: "ops"}), admin, StatusDeleted, at)
		}, "conflict"},
		{"a user is deleted", func() ([]Event, error) {
			return DecideUserStatus(given(EvolveUser, user), admin, StatusDeleted, at)
		}, "deleted"},
		{"a user does not disable itself, whatever the case", func() ([]Event, error) {
			return DecideUserStatus(given(EvolveUser, user), Principal{Subject: "user:ana@acme", OrganizationID: "ops", Role: RoleAdmin}, StatusDisabled, at)
		}, "conflict"},
		{"no user", func() ([]Event, error) { return DecideUserStatus(User{}, admin, StatusDisabled, at) }, "not_found"},
		{"an organisation is disabled", func() ([]Event, error) {
			return DecideOrganizationStatus(given(EvolveOrganization, org), admin, StatusDisabled, at)
		}, "disabled"},
		{"an admin does not disable its own organisation", func() ([]Event, error) {
			return DecideOrganizationStatus(given(EvolveOrganization, OrganizationCreated{OrganizationID: "ops", Role: RoleAdmin}), admin, StatusDisabled, at)
		}, "conflict"},
		{"an admin may enable its own organisation", func() ([]Event, error) {
			return DecideOrganizationStatus(given(EvolveOrganization, OrganizationCreated{OrganizationID: "ops", Role: RoleAdmin},
				OrganizationStatusChanged{Status: StatusDisabled}), admin, StatusActive, at)
		}, "active"},
		{"no organisation", func() ([]Event, error) {
			return DecideOrganizationStatus(Organization{}, admin, StatusDeleted, at)
		}, "not_found"},
	}
	for _, tt := range tests {
		events, err := tt.decide()
		got := outcomeOf(events, err, func(e ClientStatusChanged) string { return tell(e.Status) })
		if len(events) == 1 {
			switch e := events[0].(type) {
			case UserStatusChanged:
				got = tell(e.Status)
			case OrganizationStatusChanged:
				got = tell(e.Status)
			}
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestNewSecretsAndPasswords(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	client := ClientCreated{ClientID: "tms", OrganizationID: "acme", SecretHash: "old"}
	user := UserCreated{UserID: "u1", Username: "ana", OrganizationID: "acme", PasswordHash: "old"}
	tests := []struct {
		name   string
		decide func() ([]Event, error)
		want   string // the new hash, or the error's code
	}{
		{"a client gets a new secret", func() ([]Event, error) {
			return DecideRotateClientSecret(given(EvolveClient, client), "new", at)
		}, "new"},
		{"a disabled client gets a new secret", func() ([]Event, error) {
			return DecideRotateClientSecret(given(EvolveClient, client, ClientStatusChanged{Status: StatusDisabled}), "new", at)
		}, "new"},
		{"a deleted client does not", func() ([]Event, error) {
			return DecideRotateClientSecret(given(EvolveClient, client, ClientStatusChanged{Status: StatusDeleted}), "new", at)
		}, "conflict"},
		{"no client", func() ([]Event, error) { return DecideRotateClientSecret(Client{}, "new", at) }, "not_found"},
		{"a user gets a new password", func() ([]Event, error) { return DecideSetPassword(given(EvolveUser, user), "new", at) }, "new"},
		{"a deleted user does not", func() ([]Event, error) {
			return DecideSetPassword(given(EvolveUser, user, UserStatusChanged{Status: StatusDeleted}), "new", at)
		}, "conflict"},
		{"no user", func() ([]Event, error) { return DecideSetPassword(User{}, "new", at) }, "not_found"},
	}
	for _, tt := range tests {
		events, err := tt.decide()
		got := outcomeOf(events, err, func(e ClientSecretRotated) string { return e.SecretHash })
		if len(events) == 1 {
			if e, ok := events[0].(UserPasswordSet); ok {
				got = e.PasswordHash
			}
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
	if c := given(EvolveClient, client, ClientSecretRotated{SecretHash: "new"}); c.SecretHash != "new" {
		t.Errorf("after a rotation the client's hash is %q", c.SecretHash)
	}
	if u := given(EvolveUser, user, UserPasswordSet{PasswordHash: "new"}); u.PasswordHash != "new" {
		t.Errorf("after a new password the user's hash is %q", u.PasswordHash)
	}
}

func TestDecideRevokeTokens(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		c      RevokeTokens
		exists bool
		want   string // scope and what, or the first problem's code and field
	}{
		{"a token", RevokeTokens{JTI: "01a229af-ccdb-7e6d-934f-9137b3a9b1d4"}, true, "token 01a229af-ccdb-7e6d-934f-9137b3a9b1d4"},
		{"a client's tokens", RevokeTokens{Subject: "client:tms"}, true, "subject client:tms of acme"},
		{"a user's tokens", RevokeTokens{Subject: "user:ana@acme.example"}, true, "subject user:ana@acme.example of acme"},
		{"an organisation's tokens", RevokeTokens{OrganizationID: "acme"}, true, "organization acme"},
		{"nothing named", RevokeTokens{}, true, "REQUIRED jti"},
		{"two named", RevokeTokens{JTI: "x", OrganizationID: "acme"}, true, "INVALID_VALUE jti"},
		{"a jti of another form", RevokeTokens{JTI: "a b"}, true, "INVALID_FORMAT jti"},
		// A token's jti is matched as written: each of these was a 204
		// that left the token it meant working.
		{"a jti in upper case", RevokeTokens{JTI: "01A229AF-CCDB-7E6D-934F-9137B3A9B1D4"}, true, "INVALID_FORMAT jti"},
		{"a jti cut short", RevokeTokens{JTI: "01a229af-ccdb-7e6d-934f"}, true, "INVALID_FORMAT jti"},
		{"a jti without its dashes", RevokeTokens{JTI: "01a229afccdb7e6d934f9137b3a9b1d4"}, true, "INVALID_FORMAT jti"},
		{"a word for a jti", RevokeTokens{JTI: "x"}, true, "INVALID_FORMAT jti"},
		{"a token of an earlier version (a UUIDv4)", RevokeTokens{JTI: "0b5c6a3e-9f4d-4e1a-8b7c-2d3e4f5a6b7c"}, true, "token 0b5c6a3e-9f4d-4e1a-8b7c-2d3e4f5a6b7c"},
		{"a subject that is an API key", RevokeTokens{Subject: "apikey:k1"}, true, "INVALID_FORMAT subject"},
		{"a subject without a name", RevokeTokens{Subject: "user:"}, true, "INVALID_FORMAT subject"},
		{"an unknown subject", RevokeTokens{Subject: "client:nobody"}, false, "INVALID_VALUE subject"},
		{"an unknown organisation", RevokeTokens{OrganizationID: "nobody"}, false, "INVALID_VALUE organizationId"},
	}
	for _, tt := range tests {
		tt.c.At, tt.c.TokenLifetime = at, time.Hour
		events, err := DecideRevokeTokens(tt.c, tt.exists, "acme")
		got := outcomeOf(events, err, func(e TokensRevoked) string {
			if !e.IssuedBefore.Equal(at) {
				return "issued before " + e.IssuedBefore.String()
			}
			if !e.KeepUntil.Equal(at.Add(time.Hour)) {
				return "kept until " + e.KeepUntil.String()
			}
			switch e.Scope {
			case RevokeToken:
				return e.Scope + " " + e.JTI
			case RevokeSubject:
				return e.Scope + " " + e.Subject + " of " + e.OrganizationID
			}
			return e.Scope + " " + e.OrganizationID
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}
