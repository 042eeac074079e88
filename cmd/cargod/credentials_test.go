package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/tokens"
)

// TestCredentialLifeCycleAcrossReplicas runs two replicas on one NATS
// server: what an admin does to credentials through one, the other
// enforces once it has applied the events, and the audit log shows.
func TestCredentialLifeCycleAcrossReplicas(t *testing.T) {
	t.Parallel()
	port := natstest.FreePorts(t, 1)[0]
	natstest.StartServer(t, port)
	env := map[string]string{"CARGO_NATS_URL": fmt.Sprintf("nats://127.0.0.1:%d", port), "CARGO_NATS_REPLICAS": "1",
		"CARGO_DEMO": "true", "CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey}
	a := startServer(t, t.TempDir(), env)
	b := startServer(t, t.TempDir(), env)
	admin := a.demoToken(t, "demo-admin")
	a.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "acme", "name": "Acme Forwarding", "role": "forwarder"})
	var client struct{ ClientSecret string }
	a.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "acme", "clientId": "acme-tms"}).json(t, &client)
	secret := client.ClientSecret

	// grant is the status of a token request on s, and the token.
	grant := func(s *testServer, secret string) (int, string) {
		r := s.do(t, request{method: "POST", path: "/api/auth/token",
			body: map[string]string{"grantType": "client_credentials", "clientId": "acme-tms", "clientSecret": secret}})
		var tok struct{ AccessToken string }
		if r.status == http.StatusOK {
			r.json(t, &tok)
		}
		return r.status, tok.AccessToken
	}
	// tokenOn waits for s to know the client's secret.
	tokenOn := func(s *testServer, secret string) string {
		var token string
		eventually(t, "a token on "+s.base, func() int {
			status, tok := grant(s, secret)
			token = tok
			return status
		}, func(status int) bool { return status == http.StatusOK })
		return token
	}
	use := func(s *testServer, header map[string]string) response {
		return s.do(t, request{method: "GET", path: "/api/airlines", header: header})
	}
	bearer := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	// refusedOn waits for s to refuse the credential, and returns why.
	refusedOn := func(s *testServer, what string, header map[string]string) string {
		r := eventually(t, what+" on "+s.base, func() response { return use(s, header) },
			func(r response) bool { return r.status != http.StatusOK })
		if r.status != http.StatusUnauthorized {
			t.Fatalf("%s: %d %s", what, r.status, r.body)
		}
		return r.apiError(t).ErrorDescription
	}
	post := func(s *testServer, path string, body any, want int) response {
		t.Helper()
		r := s.do(t, request{method: "POST", path: path, token: admin, body: body})
		if r.status != want {
			t.Fatalf("POST %s: %d %s, want %d", path, r.status, r.body, want)
		}
		return r
	}

	t.Run("a token revoked through one replica is refused by the other", func(t *testing.T) {
		revoked, kept := tokenOn(b, secret), tokenOn(b, secret)
		if r := use(b, bearer(revoked)); r.status != http.StatusOK {
			t.Fatalf("before: %d %s", r.status, r.body)
		}
		jti, err := tokens.ID(revoked)
		if err != nil {
			t.Fatal(err)
		}
		post(a, "/api/admin/token-revocations", map[string]string{"jti": jti}, http.StatusNoContent)
		if why := refusedOn(b, "the revoked token", bearer(revoked)); why != "the access token has been revoked" {
			t.Errorf("refused: %q", why)
		}
		if r := use(a, bearer(revoked)); r.status != http.StatusUnauthorized {
			t.Errorf("on the replica that revoked it: %d", r.status)
		}
		if r := use(b, bearer(kept)); r.status != http.StatusOK {
			t.Errorf("another token of the client: %d %s", r.status, r.body)
		}

		// Every token of the client, then of its organisation.
		for _, body := range []map[string]string{{"subject": "client:acme-tms"}, {"organizationId": "acme"}} {
			before := tokenOn(a, secret)
			post(b, "/api/admin/token-revocations", body, http.StatusNoContent)
			refusedOn(a, fmt.Sprintf("a token revoked by %v", body), bearer(before))
			if after := tokenOn(a, secret); use(a, bearer(after)).status != http.StatusOK {
				t.Errorf("a token issued after revoking %v is refused", body)
			}
		}
	})

	t.Run("a disabled client gets no token, on either replica", func(t *testing.T) {
		before := tokenOn(b, secret)
		var c struct{ ClientID, Status string }
		post(a, "/api/admin/clients/acme-tms/disable", nil, http.StatusOK).json(t, &c)
		if c.Status != "disabled" {
			t.Errorf("client %+v", c)
		}
		// At once, on the other replica too: a grant waits until the
		// replica holds what the stream holds.
		if status, _ := grant(b, secret); status != http.StatusUnauthorized {
			t.Errorf("token of the disabled client: %d", status)
		}
		refusedOn(b, "a token from before the client was disabled", bearer(before))
		post(a, "/api/admin/clients/acme-tms/enable", nil, http.StatusOK)
		tokenOn(b, secret)
		if r := use(b, bearer(before)); r.status != http.StatusUnauthorized {
			t.Errorf("a token from before the client was disabled, once enabled: %d", r.status)
		}
	})

	t.Run("a rotated secret: the old one is refused, the new one works", func(t *testing.T) {
		var rotated struct{ ClientID, ClientSecret, Status string }
		post(a, "/api/admin/clients/acme-tms/secret", nil, http.StatusOK).json(t, &rotated)
		if !strings.HasPrefix(rotated.ClientSecret, "cs_") || rotated.ClientSecret == secret || rotated.Status != "active" {
			t.Fatalf("rotated %+v", rotated)
		}
		if status, _ := grant(b, secret); status != http.StatusUnauthorized {
			t.Errorf("the old secret on the other replica, right after the rotation: %d", status)
		}
		tokenOn(b, rotated.ClientSecret)
		secret = rotated.ClientSecret
	})

	t.Run("a disabled organisation's API key and tokens are refused", func(t *testing.T) {
		var key struct{ APIKey string }
		a.mustCreate(t, admin, "/api/admin/api-keys", map[string]any{"organizationId": "acme", "name": "scanner"}).json(t, &key)
		withKey := map[string]string{"X-Api-Key": key.APIKey}
		eventually(t, "the API key on the other replica", func() int { return use(b, withKey).status },
			func(s int) bool { return s == http.StatusOK })
		token := tokenOn(b, secret)
		post(a, "/api/admin/organizations/acme/disable", nil, http.StatusOK)
		if why := refusedOn(b, "the disabled organisation's API key", withKey); why != "the credential's organisation is disabled" {
			t.Errorf("refused: %q", why)
		}
		refusedOn(b, "the disabled organisation's token", bearer(token))
		if status, _ := grant(b, secret); status != http.StatusUnauthorized {
			t.Errorf("a token for a client of the disabled organisation: %d", status)
		}
		post(a, "/api/admin/organizations/acme/enable", nil, http.StatusOK)
		eventually(t, "the API key once the organisation is enabled", func() int { return use(b, withKey).status },
			func(s int) bool { return s == http.StatusOK })
	})

	t.Run("an admin cannot disable its own organisation or client", func(t *testing.T) {
		for _, path := range []string{"/api/admin/organizations/demo-admin/disable", "/api/admin/clients/demo-admin/disable"} {
			if e := post(a, path, nil, http.StatusConflict).apiError(t); !strings.Contains(e.ErrorDescription, "what this request authenticates with") {
				t.Errorf("%s: %+v", path, e)
			}
		}
		if r := a.do(t, request{method: "DELETE", path: "/api/admin/organizations/demo-admin", token: admin}); r.status != http.StatusConflict {
			t.Errorf("deleting its own organisation: %d %s", r.status, r.body)
		}
	})

	t.Run("the audit log shows each change, without hashes", func(t *testing.T) {
		var log auditLog
		a.do(t, request{method: "GET", path: "/api/audit-logs?resource=client&limit=100", token: admin}).json(t, &log)
		var got []string
		for _, e := range log.Logs {
			if e.ResourceID == "acme-tms" && e.Details != nil && e.Details.Field != "" {
				got = append(got, e.UserID+" "+e.Details.Field+": "+e.Details.OldValue+" → "+e.Details.NewValue)
			}
		}
		for _, want := range []string{
			"client:demo-admin status: active → disabled", "client:demo-admin status: disabled → active",
			"client:demo-admin secretHash: [redacted] → [redacted]", "client:demo-admin scope:  → subject",
		} {
			if !strings.Contains(strings.Join(got, "\n"), want) {
				t.Errorf("no entry %q in\n%s", want, strings.Join(got, "\n"))
			}
		}
		a.do(t, request{method: "GET", path: "/api/audit-logs?resource=tokenrevocation", token: admin}).json(t, &log)
		if len(log.Logs) != 1 || log.Logs[0].Action != "create" {
			t.Errorf("revoked tokens in the log: %+v", log.Logs)
		}
		a.do(t, request{method: "GET", path: "/api/audit-logs?resource=org", token: admin}).json(t, &log)
		var statuses []string
		for _, e := range log.Logs {
			if e.ResourceID == "acme" && e.Details != nil && e.Details.Field == "status" {
				statuses = append(statuses, e.Details.NewValue)
			}
		}
		if strings.Join(statuses, ",") != "active,disabled" { // newest first
			t.Errorf("organisation's status changes: %v", statuses)
		}
	})
}

// A token granted with a secret or password while it is changed is stamped
// as of when the credential was read: once the change is answered, every
// token the old credential got is refused, however long its check took.
func TestATokenGrantedWithACredentialWhileItChangesStopsWithIt(t *testing.T) {
	t.Parallel()
	// The default cost: a check of some tens of milliseconds.
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_PASSWORD_HASH_COST": "10"})
	admin := s.demoToken(t, "demo-admin")
	s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "acme", "name": "Acme Forwarding", "role": "forwarder"})
	s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "acme", "clientId": "acme-tms", "clientSecret": "old-secret-123456"})
	s.mustCreate(t, admin, "/api/admin/users", map[string]any{"organizationId": "acme", "username": "ana@acme", "password": "old-password-1"})
	for _, tt := range []struct {
		name   string
		grant  map[string]string
		change request
	}{
		{"a client's secret rotated", map[string]string{"grantType": "client_credentials", "clientId": "acme-tms", "clientSecret": "old-secret-123456"},
			request{method: "POST", path: "/api/admin/clients/acme-tms/secret", token: admin, body: map[string]string{"clientSecret": "new-secret-654321"}}},
		{"a user's password changed", map[string]string{"grantType": "password", "username": "ana@acme", "password": "old-password-1"},
			request{method: "PUT", path: "/api/admin/users/ana@acme/password", token: admin, body: map[string]string{"password": "new-password-2"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Grants one after another, a few milliseconds apart, and the
			// change once the first is answered: the next are being
			// checked when it comes.
			var granted []string
			var mu sync.Mutex
			var wg sync.WaitGroup
			first := make(chan struct{})
			var once sync.Once
			for i := range 14 {
				wg.Go(func() {
					time.Sleep(time.Duration(i) * 6 * time.Millisecond)
					r := s.do(t, request{method: "POST", path: "/api/auth/token", body: tt.grant})
					var tok struct{ AccessToken string }
					if r.status == http.StatusOK {
						r.json(t, &tok)
						mu.Lock()
						granted = append(granted, tok.AccessToken)
						mu.Unlock()
						once.Do(func() { close(first) })
					}
				})
			}
			select {
			case <-first:
			case <-time.After(time.Minute):
				t.Fatal("no token granted within a minute")
			}
			if r := s.do(t, tt.change); r.status/100 != 2 {
				t.Fatalf("%s %s: %d %s", tt.change.method, tt.change.path, r.status, r.body)
			}
			wg.Wait()
			working := 0
			for _, token := range granted {
				if r := s.do(t, request{method: "GET", path: "/api/airlines", token: token}); r.status != http.StatusUnauthorized {
					working++
				}
			}
			if working > 0 {
				t.Errorf("%d of the %d tokens the old credential got still work", working, len(granted))
			}
		})
	}
}
