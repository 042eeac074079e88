package projections

import (
	"slices"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// TestRevokedTokensAreRefused applies the life cycle's events to the
// identity read model and asks it about tokens issued before and after.
func TestRevokedTokensAreRefused(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 500_400_000, time.UTC) // mid-millisecond, as revocations are
	m := NewIdentity()
	for _, e := range []domain.Event{
		domain.OrganizationCreated{OrganizationID: "acme", Role: domain.RoleForwarder},
		domain.OrganizationCreated{OrganizationID: "globex", Role: domain.RoleForwarder},
		domain.ClientCreated{ClientID: "tms", OrganizationID: "acme"},
		domain.ClientCreated{ClientID: "erp", OrganizationID: "acme"},
		domain.ClientCreated{ClientID: "gx", OrganizationID: "globex"},
		domain.UserCreated{UserID: "u1", Username: "Ana", OrganizationID: "globex"},
		domain.TokensRevoked{Scope: domain.RevokeToken, JTI: "j1", KeepUntil: t0.Add(time.Hour), RevokedAt: t0},
		domain.TokensRevoked{Scope: domain.RevokeSubject, Subject: "client:tms", OrganizationID: "acme", IssuedBefore: t0, RevokedAt: t0},
		domain.ClientSecretRotated{ClientID: "erp", OrganizationID: "acme", SecretHash: "h", SetAt: t0.Add(time.Minute)},
		domain.UserStatusChanged{UserID: "u1", Username: "Ana", OrganizationID: "globex", Status: domain.StatusDisabled, ChangedAt: t0},
		domain.UserStatusChanged{UserID: "u1", Username: "Ana", OrganizationID: "globex", Status: domain.StatusActive, ChangedAt: t0.Add(time.Minute)},
		domain.TokensRevoked{Scope: domain.RevokeOrganization, OrganizationID: "globex", IssuedBefore: t0.Add(2 * time.Minute), RevokedAt: t0.Add(2 * time.Minute)},
	} {
		m.Apply(domain.Record{}, e)
	}
	issued := func(d time.Duration) time.Time { return t0.Add(d).Truncate(time.Millisecond) } // as a jti tells it
	tests := []struct {
		name, subject, org, jti string
		issued                  time.Time
		refused                 bool
	}{
		{"a token by its revoked jti", "client:gx", "globex", "j1", issued(time.Hour), true},
		{"another token", "client:gx", "globex", "j2", issued(3 * time.Minute), false},
		{"a client's token issued before its revocation", "client:tms", "acme", "a", issued(-time.Second), true},
		{"a client's token issued in the millisecond of its revocation", "client:tms", "acme", "b", issued(0), true},
		{"a client's token issued the millisecond after", "client:tms", "acme", "c", issued(time.Millisecond), false},
		{"a token from before jtis told the millisecond, of the second of the revocation", "client:tms", "acme", "c", t0.Truncate(time.Second), true},
		{"a token issued before the client's new secret", "client:erp", "acme", "d", issued(0), true},
		{"a token issued after the client's new secret", "client:erp", "acme", "e", issued(2 * time.Minute), false},
		{"a user's token from before it was disabled, once enabled", "user:Ana", "globex", "f", issued(-time.Second), true},
		{"an organisation's token issued before its revocation", "client:gx", "globex", "g", issued(time.Minute), true},
		{"a token of another organisation", "client:erp", "acme", "h", issued(time.Hour), false},
	}
	for _, tt := range tests {
		if got := m.TokenRefusal(tt.subject, tt.org, tt.jti, tt.issued) != ""; got != tt.refused {
			t.Errorf("%s: refused = %v, want %v", tt.name, got, tt.refused)
		}
	}

	m.Apply(domain.Record{}, domain.ClientStatusChanged{ClientID: "gx", OrganizationID: "globex", Status: domain.StatusDisabled, ChangedAt: t0.Add(time.Hour)})
	if why := m.TokenRefusal("client:gx", "globex", "k", issued(2*time.Hour)); why != "the access token's client is disabled" {
		t.Errorf("a disabled client's token issued later: %q", why)
	}

	// A token issued in the millisecond of a revocation, or before it by a
	// replica whose clock is behind, says it was issued the millisecond
	// after, so that it is not refused.
	for _, now := range []time.Time{t0.Add(100 * time.Microsecond), t0.Add(-time.Second)} {
		if at := m.IssueTime("client:tms", "acme", now); !at.Equal(issued(time.Millisecond)) {
			t.Errorf("issue time at %v = %v", now, at)
		}
	}
	if now := t0.Add(time.Hour); !m.IssueTime("client:tms", "acme", now).Equal(now) {
		t.Error("the issue time of a token long after the revocation is not now")
	}
}

// TestACredentialChangeStopsTheTokensGrantedBeforeItWasStored covers a
// token request that read a secret or password, and checked it, while a
// change decided just before the read waited to be stored: the token it
// was granted is stamped after the change was decided, and before it was
// stored, and must be refused all the same.
func TestACredentialChangeStopsTheTokensGrantedBeforeItWasStored(t *testing.T) {
	decided := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	stored := decided.Add(200 * time.Millisecond) // a busy store
	readMeanwhile := decided.Add(50 * time.Millisecond)
	for _, tt := range []struct {
		name, subject string
		change        domain.Event
	}{
		{"a new client secret", "client:tms", domain.ClientSecretRotated{ClientID: "tms", OrganizationID: "acme", SecretHash: "h2", SetAt: decided}},
		{"a new password", "user:Ana", domain.UserPasswordSet{UserID: "u1", Username: "Ana", OrganizationID: "acme", PasswordHash: "h2", SetAt: decided}},
		{"a disabled client", "client:tms", domain.ClientStatusChanged{ClientID: "tms", OrganizationID: "acme", Status: domain.StatusDisabled, ChangedAt: decided}},
		{"a disabled organisation", "client:tms", domain.OrganizationStatusChanged{OrganizationID: "acme", Status: domain.StatusDisabled, ChangedAt: decided}},
		{"the client's tokens revoked", "client:tms", domain.TokensRevoked{Scope: domain.RevokeSubject, Subject: "client:tms", OrganizationID: "acme", IssuedBefore: decided, RevokedAt: decided}},
		{"the organisation's tokens revoked", "user:Ana", domain.TokensRevoked{Scope: domain.RevokeOrganization, OrganizationID: "acme", IssuedBefore: decided, RevokedAt: decided}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := NewIdentity()
			for _, e := range []domain.Event{
				domain.OrganizationCreated{OrganizationID: "acme", Role: domain.RoleForwarder},
				domain.ClientCreated{ClientID: "tms", OrganizationID: "acme"},
				domain.UserCreated{UserID: "u1", Username: "Ana", OrganizationID: "acme"},
			} {
				m.Apply(domain.Record{}, e)
			}
			m.Apply(domain.Record{StoredAt: stored}, tt.change)
			if m.TokenRefusal(tt.subject, "acme", "j1", readMeanwhile) == "" {
				t.Error("a token stamped between the change's decision and its storing is good")
			}
			// A token granted on what the replica holds once the change is
			// applied is stamped after its storing, and good.
			if at := m.IssueTime(tt.subject, "acme", readMeanwhile); !at.After(stored) {
				t.Errorf("a token issued now says it was issued at %v, not after the change was stored", at)
			}
		})
	}
}

// TestRevokedTokenIDsAreForgottenOnceExpired checks that the revoked ids
// held are only those that a token can still carry.
func TestRevokedTokenIDsAreForgottenOnceExpired(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	m := NewIdentity()
	for i, jti := range []string{"j1", "j2", "j3"} {
		at := t0.Add(time.Duration(i) * time.Hour)
		m.Apply(domain.Record{}, domain.TokensRevoked{Scope: domain.RevokeToken, JTI: jti, KeepUntil: at.Add(90 * time.Minute), RevokedAt: at})
	}
	if len(m.revokedIDs) != 2 {
		t.Errorf("revoked ids held: %v, want j2 and j3", m.revokedIDs)
	}
	if m.TokenRefusal("client:x", "acme", "j3", t0) == "" {
		t.Error("the last revoked id is not refused")
	}
}

// TestATokenIssuedWhileDisabledStaysRefusedOnceEnabled covers a replica
// that issued a token before it applied the disable (its grant checked
// a state that was already stale): enabling the credential again must
// not make that token good.
func TestATokenIssuedWhileDisabledStaysRefusedOnceEnabled(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	whileDisabled := t0.Add(time.Second)
	for _, tt := range []struct {
		name            string
		disable, enable domain.Event
	}{
		{"a client", domain.ClientStatusChanged{ClientID: "tms", OrganizationID: "acme", Status: domain.StatusDisabled, ChangedAt: t0},
			domain.ClientStatusChanged{ClientID: "tms", OrganizationID: "acme", Status: domain.StatusActive, ChangedAt: t0.Add(time.Minute)}},
		{"its organisation", domain.OrganizationStatusChanged{OrganizationID: "acme", Status: domain.StatusDisabled, ChangedAt: t0},
			domain.OrganizationStatusChanged{OrganizationID: "acme", Status: domain.StatusActive, ChangedAt: t0.Add(time.Minute)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := NewIdentity()
			for _, e := range []domain.Event{
				domain.OrganizationCreated{OrganizationID: "acme", Role: domain.RoleForwarder},
				domain.ClientCreated{ClientID: "tms", OrganizationID: "acme"},
				tt.disable, tt.enable,
			} {
				m.Apply(domain.Record{}, e)
			}
			if m.TokenRefusal("client:tms", "acme", "j", whileDisabled) == "" {
				t.Error("a token issued while disabled is good again after the enable")
			}
			if why := m.TokenRefusal("client:tms", "acme", "k", t0.Add(2*time.Minute)); why != "" {
				t.Errorf("a token issued after the enable is refused: %s", why)
			}
		})
	}
}

// TestCredentialsAreListedByOrganisationInOrderWithTheirStatus: the lists
// of clients and users hold every status, only the organisation's when
// one is asked, in the order of their ids (usernames ignoring case).
func TestCredentialsAreListedByOrganisationInOrderWithTheirStatus(t *testing.T) {
	m := NewIdentity()
	for _, e := range []domain.Event{
		domain.OrganizationCreated{OrganizationID: "acme", Role: domain.RoleForwarder},
		domain.OrganizationCreated{OrganizationID: "globex", Role: domain.RoleForwarder},
		domain.ClientCreated{ClientID: "tms", OrganizationID: "acme", SecretHash: "h1"},
		domain.ClientCreated{ClientID: "gx", OrganizationID: "globex", SecretHash: "h2"},
		domain.ClientCreated{ClientID: "erp", OrganizationID: "acme", SecretHash: "h3"},
		domain.ClientStatusChanged{ClientID: "erp", OrganizationID: "acme", Status: domain.StatusDeleted},
		domain.UserCreated{UserID: "u1", Username: "zoe", OrganizationID: "acme"},
		domain.UserCreated{UserID: "u2", Username: "Ana", OrganizationID: "acme"},
		domain.UserCreated{UserID: "u3", Username: "bo", OrganizationID: "globex"},
		domain.UserStatusChanged{UserID: "u2", Username: "Ana", OrganizationID: "acme", Status: domain.StatusDisabled},
	} {
		m.Apply(domain.Record{}, e)
	}
	clientsOf := func(org string) []string {
		var out []string
		for _, c := range m.Clients(org) {
			out = append(out, c.ClientID+":"+string(c.Status.Shown()))
		}
		return out
	}
	usersOf := func(org string) []string {
		var out []string
		for _, u := range m.Users(org) {
			out = append(out, u.Username+":"+string(u.Status.Shown()))
		}
		return out
	}
	for _, tt := range []struct {
		name string
		got  []string
		want []string
	}{
		{"every client", clientsOf(""), []string{"erp:deleted", "gx:active", "tms:active"}},
		{"an organisation's clients", clientsOf("acme"), []string{"erp:deleted", "tms:active"}},
		{"the clients of an organisation without any", clientsOf("initech"), nil},
		{"every user", usersOf(""), []string{"Ana:disabled", "bo:active", "zoe:active"}},
		{"an organisation's users", usersOf("globex"), []string{"bo:active"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.got, tt.want) {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}
