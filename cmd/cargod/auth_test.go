package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/cargostream/cargostream/tokens"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"github.com/nats-io/nats-server/v2/server"
)

func TestTokenEndpoint(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	basic := func(id, secret string) map[string]string {
		return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))}
	}
	tests := []struct {
		name        string
		body        any
		contentType string
		header      map[string]string
		status      int
		error       string
		says        string // in the error's description
		subject     string
	}{
		{name: "client credentials", status: 200, subject: "client:demo-forwarder",
			body: map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder", "clientSecret": "demo-forwarder-secret"}},
		{name: "password", status: 200, subject: "user:forwarder",
			body: map[string]string{"grantType": "password", "username": "forwarder", "password": "forwarder-password"}},
		{name: "form post", status: 200, subject: "client:demo-airline-lh", contentType: "application/x-www-form-urlencoded",
			body: form("grant_type", "client_credentials", "client_id", "demo-airline-lh", "client_secret", "demo-airline-lh-secret")},
		{name: "a form parameter twice", status: 400, error: "invalid_request", contentType: "application/x-www-form-urlencoded",
			body: form("grant_type", "client_credentials", "client_id", "demo-forwarder", "client_id", "demo-airline-lh", "client_secret", "demo-forwarder-secret")},
		{name: "basic authentication", status: 200, subject: "client:demo-admin", contentType: "application/x-www-form-urlencoded",
			body: form("grant_type", "client_credentials"), header: basic("demo-admin", "demo-admin-secret")},
		{name: "a bearer value sent along is ignored", status: 200, subject: "client:demo-forwarder",
			header: map[string]string{"Authorization": "Bearer whatever"},
			body:   map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder", "clientSecret": "demo-forwarder-secret"}},
		{name: "wrong secret", status: 401, error: "invalid_grant",
			body: map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder", "clientSecret": "wrong"}},
		{name: "unknown client", status: 401, error: "invalid_grant",
			body: map[string]string{"grantType": "client_credentials", "clientId": "nobody", "clientSecret": "wrong"}},
		{name: "wrong password", status: 401, error: "invalid_grant",
			body: map[string]string{"grantType": "password", "username": "forwarder", "password": "guess"}},
		{name: "wrong basic secret", status: 401, error: "invalid_grant", contentType: "application/x-www-form-urlencoded",
			body: form("grant_type", "client_credentials"), header: basic("demo-admin", "nope")},
		// Two secrets, one of them wrong: which one was meant? Neither
		// wins silently, as with two client ids.
		{name: "a body secret unlike the basic one", status: 401, error: "invalid_client",
			body:   map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder", "clientSecret": "wrong"},
			header: basic("demo-forwarder", "demo-forwarder-secret")},
		{name: "a body secret unlike the basic one, without the id", status: 401, error: "invalid_client",
			body:   map[string]string{"grantType": "client_credentials", "clientSecret": "wrong"},
			header: basic("demo-forwarder", "demo-forwarder-secret")},
		{name: "the basic credentials repeated in the body", status: 200, subject: "client:demo-forwarder",
			body:   map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder", "clientSecret": "demo-forwarder-secret"},
			header: basic("demo-forwarder", "demo-forwarder-secret")},
		{name: "malformed basic header", status: 401, error: "invalid_client",
			body: map[string]string{"grantType": "client_credentials"}, header: map[string]string{"Authorization": "Basic !!!"}},
		{name: "unsupported grant", status: 400, error: "unsupported_grant_type",
			body: map[string]string{"grantType": "authorization_code"}},
		{name: "no grant", status: 400, error: "invalid_request", body: map[string]string{"clientId": "demo-forwarder"}},
		{name: "no secret", status: 400, error: "invalid_request",
			body: map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder"}},
		{name: "not JSON", status: 400, error: "invalid_request", body: "{grantType"},
		// As curl -d sends it without -H 'Content-Type: application/json'.
		{name: "JSON sent as a form is told to say it is JSON", status: 400, error: "invalid_request", contentType: "application/x-www-form-urlencoded",
			body: `{"grantType":"client_credentials","clientId":"demo-forwarder","clientSecret":"demo-forwarder-secret"}`, says: "send Content-Type: application/json"},
		{name: "other content type", status: 415, error: "unsupported_media_type", contentType: "text/plain", body: "grant"},
	}
	jwks := s.jwks(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "POST", path: "/api/auth/token", body: tt.body, contentType: tt.contentType, header: tt.header})
			if r.status != tt.status {
				t.Fatalf("= %d %s, want %d", r.status, r.body, tt.status)
			}
			if tt.error != "" {
				if e := r.apiError(t); e.Error != tt.error || e.ErrorDescription == "" || e.ErrorURI == "" || !strings.Contains(e.ErrorDescription, tt.says) {
					t.Errorf("error body = %s, want %s saying %q", r.body, tt.error, tt.says)
				}
				return
			}
			var tok struct {
				AccessToken, TokenType string
				ExpiresIn              int
			}
			r.json(t, &tok)
			if tok.TokenType != "Bearer" || tok.ExpiresIn != 3600 {
				t.Errorf("token response = %s", r.body)
			}
			parsed, err := jwt.Parse([]byte(tok.AccessToken), jwt.WithKeySet(jwks), jwt.WithValidate(true),
				jwt.WithAudience("cargostream-api"), jwt.WithIssuer("cargostream"))
			if err != nil {
				t.Fatalf("token does not verify with the published JWKS: %v", err)
			}
			if parsed.Subject() != tt.subject || parsed.JwtID() == "" || parsed.IssuedAt().IsZero() ||
				parsed.Expiration().Sub(parsed.IssuedAt()) != time.Hour {
				t.Errorf("claims: sub %q jti %q iat %v exp %v", parsed.Subject(), parsed.JwtID(), parsed.IssuedAt(), parsed.Expiration())
			}
			for _, c := range []string{"org", "role"} {
				if v, _ := parsed.Get(c); v == "" || v == nil {
					t.Errorf("claim %s missing", c)
				}
			}
		})
	}
}

func (s *testServer) jwks(t *testing.T) jwk.Set {
	t.Helper()
	r := s.do(t, request{method: "GET", path: "/.well-known/jwks.json"})
	set, err := jwk.Parse(r.body)
	if err != nil || set.Len() != 1 {
		t.Fatalf("jwks: %v %s", err, r.body)
	}
	return set
}

func TestUnauthenticatedRequestsAre401(t *testing.T) {
	t.Parallel()
	// A known signing key lets the test forge tokens the way an attacker
	// or a misconfigured client would produce them.
	pemKey, err := tokens.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "signing.pem")
	os.WriteFile(keyFile, pemKey, 0o600)
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_SIGNING_KEY_FILE": keyFile})
	good := s.demoToken(t, "demo-forwarder")

	serverKey := mustKey(t, pemKey, s.jwks(t))
	otherPEM, _ := tokens.GenerateSigningKey()
	otherKey := mustKey(t, otherPEM, nil)
	claims := func(change func(b *jwt.Builder) *jwt.Builder) jwt.Token {
		now := time.Now()
		b := jwt.NewBuilder().Issuer("cargostream").Audience([]string{"cargostream-api"}).Subject("client:demo-forwarder").
			IssuedAt(now).Expiration(now.Add(time.Hour)).JwtID("x").Claim("org", "demo-forwarder").Claim("role", "forwarder")
		tok, err := change(b).Build()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	sign := func(tok jwt.Token, key jwk.Key) string {
		signed, err := tokens.Sign(tok, key)
		if err != nil {
			t.Fatal(err)
		}
		return signed
	}
	same := func(b *jwt.Builder) *jwt.Builder { return b }
	noExpiry := claims(same)
	noExpiry.Remove(jwt.ExpirationKey)
	// alg none: a header and payload with an empty signature.
	payload, _ := json.Marshal(map[string]any{"iss": "cargostream", "aud": "cargostream-api", "sub": "client:demo-forwarder",
		"exp": time.Now().Add(time.Hour).Unix(), "org": "demo-forwarder", "role": "admin"})
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + base64.RawURLEncoding.EncodeToString(payload) + "."

	if r := s.do(t, request{method: "GET", path: "/api/quotes", token: sign(claims(same), serverKey)}); r.status != http.StatusNotFound {
		t.Fatalf("a well-formed forged-with-the-real-key token should pass: %d %s", r.status, r.body)
	}
	tests := []struct {
		name   string
		header map[string]string
		says   string // the start of the description, for refusals that say why
	}{
		{"no credentials", nil, ""},
		{"empty bearer", map[string]string{"Authorization": "Bearer "}, ""},
		{"basic instead of bearer", map[string]string{"Authorization": "Basic ZGVtbzpkZW1v"}, ""},
		{"garbage token", map[string]string{"Authorization": "Bearer not.a.jwt"}, "the access token is invalid or expired"},
		{"truncated token", map[string]string{"Authorization": "Bearer " + good[:len(good)-5]}, "the access token is invalid or expired"},
		{"expired", map[string]string{"Authorization": "Bearer " + sign(claims(func(b *jwt.Builder) *jwt.Builder {
			return b.IssuedAt(time.Now().Add(-3 * time.Hour)).Expiration(time.Now().Add(-2 * time.Hour))
		}), serverKey)}, "the access token has expired"},
		{"wrong issuer", map[string]string{"Authorization": "Bearer " + sign(claims(func(b *jwt.Builder) *jwt.Builder { return b.Issuer("evil") }), serverKey)}, "the access token is invalid or expired"},
		{"wrong audience", map[string]string{"Authorization": "Bearer " + sign(claims(func(b *jwt.Builder) *jwt.Builder { return b.Audience([]string{"other"}) }), serverKey)}, "the access token is invalid or expired"},
		{"signed by another key", map[string]string{"Authorization": "Bearer " + sign(claims(same), otherKey)}, "the access token is invalid or expired"},
		{"alg none", map[string]string{"Authorization": "Bearer " + none}, "the access token is invalid or expired"},
		{"unknown API key", map[string]string{"X-Api-Key": "csk_nothing"}, ""},
		{"padded token", map[string]string{"Authorization": "Bearer " + good + "=="}, "the access token must be three base64url segments"},
		{"no exp", map[string]string{"Authorization": "Bearer " + sign(noExpiry, serverKey)}, "the access token has no expiry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "GET", path: "/api/quotes", header: tt.header})
			if r.status != http.StatusUnauthorized {
				t.Fatalf("= %d %s, want 401", r.status, r.body)
			}
			if e := r.apiError(t); e.Error != "invalid_token" || e.ErrorDescription == "" || !strings.HasPrefix(e.ErrorDescription, tt.says) {
				t.Errorf("body = %s", r.body)
			}
			if h := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer ") || !strings.Contains(h, `error="invalid_token"`) {
				t.Errorf("WWW-Authenticate = %q", h)
			}
		})
	}
}

// TestARequestWithMoreThanOneCredentialIsRefused: two Authorization
// lines, or two API keys, are refused, whichever comes first and however
// many of them are valid, rather than the request run as the first. (An
// API key beside a token takes precedence, as the document says.)
func TestARequestWithMoreThanOneCredentialIsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	forwarder := "Bearer " + s.demoToken(t, "demo-forwarder")
	airline := "Bearer " + s.demoToken(t, "demo-airline-lh")
	var key struct{ APIKey string }
	s.mustCreate(t, admin, "/api/admin/api-keys", map[string]any{"organizationId": "demo-forwarder", "name": "TMS"}).json(t, &key)
	tests := []struct {
		name           string
		authorizations []string
		keys           []string
		status         int
	}{
		{"one token", []string{forwarder}, nil, http.StatusOK},
		{"one API key", nil, []string{key.APIKey}, http.StatusOK},
		{"a token and an empty API key", []string{forwarder}, []string{""}, http.StatusOK},
		{"an empty API key, then a valid one", nil, []string{"", key.APIKey}, http.StatusOK},
		{"a valid token, then a bad one", []string{forwarder, "Bearer x"}, nil, http.StatusUnauthorized},
		{"a bad token, then a valid one", []string{"Bearer x", forwarder}, nil, http.StatusUnauthorized},
		{"the tokens of two organisations", []string{forwarder, airline}, nil, http.StatusUnauthorized},
		{"the same token twice", []string{forwarder, forwarder}, nil, http.StatusUnauthorized},
		{"a valid API key, then a bad one", nil, []string{key.APIKey, "csk_nothing"}, http.StatusUnauthorized},
		{"an API key and a token", []string{airline}, []string{key.APIKey}, http.StatusOK},
		{"an API key and two tokens", []string{forwarder, forwarder}, []string{key.APIKey}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hr, err := http.NewRequest("GET", s.base+"/api/bookings", nil)
			if err != nil {
				t.Fatal(err)
			}
			hr.Header["Authorization"] = tt.authorizations
			hr.Header["X-Api-Key"] = tt.keys
			r := s.send(t, hr, nil)
			if r.status != tt.status {
				t.Fatalf("= %d %s, want %d", r.status, r.body, tt.status)
			}
			if tt.status == http.StatusUnauthorized {
				if e := r.apiError(t); e.Error != "invalid_token" || !strings.HasPrefix(e.ErrorDescription, "send one credential") {
					t.Errorf("body = %s", r.body)
				}
			}
		})
	}
}

// TestATokenRequestWithTwoAuthorizationLinesIsRefused: the token endpoint
// takes client credentials from one Authorization header, as every other
// endpoint takes one credential; of two lines the first was taken, so
// that a request whose second line a proxy in front had checked (or
// added) got a token for the first's client.
func TestATokenRequestWithTwoAuthorizationLinesIsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	basic := func(id string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+id+"-secret"))
	}
	tests := []struct {
		name           string
		authorizations []string
		status         int
	}{
		{"one client's credentials", []string{basic("demo-admin")}, http.StatusOK},
		{"two clients' credentials", []string{basic("demo-forwarder"), basic("demo-admin")}, http.StatusUnauthorized},
		{"one client's credentials twice", []string{basic("demo-admin"), basic("demo-admin")}, http.StatusUnauthorized},
		{"a bearer value, then a client's credentials", []string{"Bearer whatever", basic("demo-admin")}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hr, err := http.NewRequest("POST", s.base+"/api/auth/token", strings.NewReader("grant_type=client_credentials"))
			if err != nil {
				t.Fatal(err)
			}
			hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			hr.Header["Authorization"] = tt.authorizations
			r := s.send(t, hr, nil)
			if r.status != tt.status {
				t.Fatalf("= %d %s, want %d", r.status, r.body, tt.status)
			}
			if tt.status == http.StatusUnauthorized {
				if e := r.apiError(t); e.Error != "invalid_client" || !strings.Contains(e.ErrorDescription, "one Authorization header") {
					t.Errorf("body = %s", r.body)
				}
			}
		})
	}
}

// mustKey parses a PEM key as a jwk with the server's key id (if a set is
// given), ready to sign.
func mustKey(t *testing.T, pemKey []byte, set jwk.Set) jwk.Key {
	t.Helper()
	k, err := jwk.ParseKey(pemKey, jwk.WithPEM(true))
	if err != nil {
		t.Fatal(err)
	}
	kid := "other"
	if set != nil {
		pub, _ := set.Key(0)
		kid = pub.KeyID()
	}
	k.Set(jwk.KeyIDKey, kid)
	k.Set(jwk.AlgorithmKey, jwa.ES256)
	return k
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	var key struct{ ID, APIKey, OrganizationID string }
	s.mustCreate(t, admin, "/api/admin/api-keys", map[string]any{"organizationId": "demo-forwarder", "name": "TMS integration"}).json(t, &key)
	if !strings.HasPrefix(key.APIKey, "csk_") || key.OrganizationID != "demo-forwarder" {
		t.Fatalf("key = %+v", key)
	}
	withKey := request{method: "POST", path: "/api/quotes", body: rfq(), header: map[string]string{"X-Api-Key": key.APIKey}}
	if r := s.do(t, withKey); r.status != http.StatusCreated {
		t.Fatalf("RFQ with API key = %d %s", r.status, r.body)
	}
	var list struct{ APIKeys []struct{ ID, Name string } }
	s.do(t, request{method: "GET", path: "/api/admin/api-keys?organizationId=demo-forwarder", token: admin}).json(t, &list)
	if len(list.APIKeys) != 1 || list.APIKeys[0].Name != "TMS integration" || strings.Contains(s.stdout.String(), key.APIKey) {
		t.Errorf("listed keys = %+v", list)
	}
	// A mistyped organisation is said to be one, not listed as having none.
	if r := s.do(t, request{method: "GET", path: "/api/admin/api-keys?organizationId=demo-forwarderr", token: admin}); r.status != http.StatusNotFound ||
		r.apiError(t).ErrorDescription != "no organisation demo-forwarderr" {
		t.Errorf("the keys of an organisation that is none = %d %s, want 404", r.status, r.body)
	}
	if r := s.do(t, request{method: "DELETE", path: "/api/admin/api-keys/" + key.ID, token: admin}); r.status != http.StatusNoContent {
		t.Fatalf("revoke = %d %s", r.status, r.body)
	}
	if r := s.do(t, withKey); r.status != http.StatusUnauthorized {
		t.Errorf("revoked key = %d", r.status)
	}
	if r := s.do(t, request{method: "DELETE", path: "/api/admin/api-keys/nope", token: admin}); r.status != http.StatusNotFound {
		t.Errorf("revoke unknown = %d", r.status)
	}
}

// An admin's write whose answer was lost, retried with its
// Idempotency-Key, is carried out once: the replay answers the key or
// client secret it generated, where the retry made a second key the
// automation never learned of. A request naming a secret of its own (a
// user's password) does not take its key: the hash kept with the key
// would be a copy of the password quicker to guess than its bcrypt hash.
func TestAnAdminWriteRetriedWithItsIdempotencyKeyIsCarriedOutOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	type created struct {
		ID, APIKey, ClientID, ClientSecret string
	}
	post := func(path, key string, body map[string]any) (response, created) {
		r := s.do(t, request{method: "POST", path: path, token: admin, header: map[string]string{"Idempotency-Key": key}, body: body})
		var c created
		r.json(t, &c)
		return r, c
	}
	for _, tt := range []struct {
		name, path string
		body       map[string]any
		secret     func(created) string
	}{
		{"api-key", "/api/admin/api-keys", map[string]any{"organizationId": "demo-forwarder", "name": "TMS"}, func(c created) string { return c.APIKey }},
		{"client-with-a-generated-secret", "/api/admin/clients", map[string]any{"organizationId": "demo-forwarder", "clientId": "tms-1"}, func(c created) string { return c.ClientSecret }},
	} {
		first, lost := post(tt.path, "admin-"+tt.name, tt.body)
		replay, got := post(tt.path, "admin-"+tt.name, tt.body)
		if first.status != http.StatusCreated || replay.status != http.StatusCreated || replay.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%s: first = %d, replay = %d %v %s", tt.name, first.status, replay.status, replay.header, replay.body)
		}
		if got != lost || tt.secret(got) == "" {
			t.Errorf("%s: the replay answered %+v, the first answer %+v: want the same, secret and all", tt.name, got, lost)
		}
	}
	var keys struct{ APIKeys []struct{ Name string } }
	s.do(t, request{method: "GET", path: "/api/admin/api-keys?organizationId=demo-forwarder", token: admin}).json(t, &keys)
	if len(keys.APIKeys) != 1 {
		t.Errorf("keys after a retried creation = %+v, want one", keys.APIKeys)
	}
	user := map[string]any{"organizationId": "demo-forwarder", "username": "dispatch", "password": "correct horse battery"}
	if r, _ := post("/api/admin/users", "admin-user", user); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("user = %d %v %s", r.status, r.header, r.body)
	}
	if r, _ := post("/api/admin/users", "admin-user", user); r.status != http.StatusConflict {
		t.Errorf("the user created again under the same key = %d %s, want 409 as without one: the key was not taken", r.status, r.body)
	}
}

// TestAdminListsClientsAndUsersWithTheirStatusButNoSecret: an admin sees
// every API client and user, of one organisation or of all, disabled and
// deleted ones too, and never a secret, a password or their hashes.
func TestAdminListsClientsAndUsersWithTheirStatusButNoSecret(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin, forwarder := s.demoToken(t, "demo-admin"), s.demoToken(t, "demo-forwarder")
	const secret, password = "acme-tms-chosen-secret", "ana-long-password"
	s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "acme", "name": "Acme Forwarding", "role": "forwarder"})
	s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "empty", "name": "No credentials", "role": "forwarder"})
	for _, id := range []string{"acme-tms", "acme-erp", "acme-old"} {
		s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "acme", "clientId": id, "clientSecret": secret})
	}
	s.mustCreate(t, admin, "/api/admin/users", map[string]any{"organizationId": "acme", "username": "ana@acme", "password": password})
	s.mustCreate(t, admin, "/api/admin/users", map[string]any{"organizationId": "acme", "username": "Bo@acme", "password": password})
	for _, change := range []request{
		{method: "POST", path: "/api/admin/clients/acme-erp/disable"},
		{method: "DELETE", path: "/api/admin/clients/acme-old"},
		{method: "POST", path: "/api/admin/users/ana@acme/disable"},
	} {
		change.token = admin
		if r := s.do(t, change); r.status != http.StatusOK && r.status != http.StatusNoContent {
			t.Fatalf("%s %s: %d %s", change.method, change.path, r.status, r.body)
		}
	}

	tests := []struct {
		name   string
		path   string
		token  string
		status int
		want   []string // the list as "id status", in order: all of it, or (all false) these among others
		all    bool
	}{
		{name: "an organisation's clients are listed by id with their status", path: "/api/admin/clients?organizationId=acme", token: admin,
			status: http.StatusOK, want: []string{"acme-erp disabled", "acme-old deleted", "acme-tms active"}, all: true},
		{name: "every client is listed without a filter, the demo clients too", path: "/api/admin/clients", token: admin,
			status: http.StatusOK, want: []string{"acme-erp disabled", "acme-old deleted", "acme-tms active", "demo-admin active", "demo-forwarder active"}},
		{name: "an organisation without clients has an empty list", path: "/api/admin/clients?organizationId=empty", token: admin,
			status: http.StatusOK, want: []string{}, all: true},
		{name: "an organisation's users are listed by username with their status", path: "/api/admin/users?organizationId=acme", token: admin,
			status: http.StatusOK, want: []string{"ana@acme disabled", "Bo@acme active"}, all: true},
		{name: "every user is listed without a filter, the demo user too", path: "/api/admin/users", token: admin,
			status: http.StatusOK, want: []string{"ana@acme disabled", "Bo@acme active", "forwarder active"}},
		{name: "the clients of an organisation that is none are 404", path: "/api/admin/clients?organizationId=acmee", token: admin, status: http.StatusNotFound},
		{name: "the users of an organisation that is none are 404", path: "/api/admin/users?organizationId=acmee", token: admin, status: http.StatusNotFound},
		{name: "an organisation id that cannot be one is 400", path: "/api/admin/users?organizationId=acme%2Fx", token: admin, status: http.StatusBadRequest},
		{name: "an organisation given twice is 400", path: "/api/admin/clients?organizationId=acme&organizationId=empty", token: admin, status: http.StatusBadRequest},
		{name: "a forwarder may not list clients", path: "/api/admin/clients", token: forwarder, status: http.StatusForbidden},
		{name: "a forwarder may not list users", path: "/api/admin/users?organizationId=demo-forwarder", token: forwarder, status: http.StatusForbidden},
		{name: "no one may list clients without a credential", path: "/api/admin/clients", status: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "GET", path: tt.path, token: tt.token})
			if r.status != tt.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tt.status)
			}
			for _, leak := range []string{secret, password, "Secret", "password", "Hash", "$2a$"} {
				if strings.Contains(string(r.body), leak) {
					t.Errorf("the answer holds %q: %s", leak, r.body)
				}
			}
			switch tt.status {
			case http.StatusNotFound:
				if got := r.apiError(t).ErrorDescription; got != "no organisation acmee" {
					t.Errorf("errorDescription %q", got)
				}
			case http.StatusBadRequest:
				if e := r.apiError(t); len(e.ValidationErrors) != 1 || e.ValidationErrors[0].Field != "organizationId" {
					t.Errorf("validation errors %+v", e.ValidationErrors)
				}
			}
			if tt.want == nil {
				return
			}
			var list struct {
				Clients []struct{ ClientID, Status string }
				Users   []struct{ Username, Status string }
			}
			r.json(t, &list)
			got := []string{}
			for _, c := range list.Clients {
				got = append(got, c.ClientID+" "+c.Status)
			}
			for _, u := range list.Users {
				got = append(got, u.Username+" "+u.Status)
			}
			if tt.all && !slices.Equal(got, tt.want) || !tt.all && !inOrder(got, tt.want) {
				t.Errorf("listed %q, want %q", got, tt.want)
			}
		})
	}
}

// inOrder reports whether want are among got, in the same order.
func inOrder(got, want []string) bool {
	for _, g := range got {
		if len(want) > 0 && g == want[0] {
			want = want[1:]
		}
	}
	return len(want) == 0
}

func TestDemoCredentialsRefusedWhenDemoIsOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	tok := s.demoToken(t, "demo-forwarder")
	s.stop()

	s = startServer(t, dir, map[string]string{"CARGO_DEMO": "false", "CARGO_ADMIN_SECRET": "operator-secret-123"})
	r := s.do(t, request{method: "POST", path: "/api/auth/token",
		body: map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder", "clientSecret": "demo-forwarder-secret"}})
	if r.status != http.StatusUnauthorized || r.apiError(t).Error != "invalid_grant" {
		t.Errorf("demo token with demo off = %d %s", r.status, r.body)
	}
	if r := s.do(t, request{method: "GET", path: "/api/quotes", token: tok}); r.status != http.StatusUnauthorized {
		t.Errorf("an earlier demo token with demo off = %d", r.status)
	}
	if strings.Contains(s.stdout.String(), "demo-forwarder-secret") {
		t.Error("demo help printed with demo off")
	}
	// The bootstrap admin works.
	s.token(t, "admin", "operator-secret-123")
}

// Demo mode on by default (loopback, the embedded server) does not go
// into a store with organisations of its own and none of the demo's: a
// real store restarted with the defaults got the demo's public
// credentials, an admin's among them. Asked for, it goes in all the same.
func TestADefaultDemoGoesIntoNoStoreWithOrganisationsOfItsOwn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	startServer(t, dir, map[string]string{"CARGO_DEMO": "false", "CARGO_ADMIN_SECRET": "operator-secret-123"}).stop()
	for _, tt := range []struct {
		name   string
		env    map[string]string
		status int
	}{
		{"demo mode by default", nil, http.StatusUnauthorized},
		{"demo mode asked for", map[string]string{"CARGO_DEMO": "true"}, http.StatusOK},
		{"demo mode by default, the demo's organisations in the store", nil, http.StatusOK},
	} {
		s := startServer(t, dir, tt.env)
		r := s.do(t, request{method: "POST", path: "/api/auth/token",
			body: map[string]string{"grantType": "client_credentials", "clientId": "demo-admin", "clientSecret": "demo-admin-secret"}})
		if r.status != tt.status {
			t.Errorf("%s: the demo admin's token = %d %s, want %d", tt.name, r.status, r.body, tt.status)
		}
		s.stop()
	}
}

// Demo mode on by default in a store with organisations of its own beside
// the demo's (a tryout's, or a real one's that began as the demo) gives
// its public credentials, an admin's among them, beside them: the start
// warns, where it said nothing. Asked for, or alone, it does not.
func TestADefaultDemoBesideOrganisationsOfTheStoresOwnIsWarnedOf(t *testing.T) {
	t.Parallel()
	const warning = `"msg":"demo mode is on by default beside organisations of the store's own`
	tests := []struct {
		name string
		env  map[string]string
		warn bool
	}{
		{"the demo alone", nil, false},
		{"the demo beside the bootstrap admin's organisation", map[string]string{"CARGO_ADMIN_SECRET": "operator-secret-123"}, true},
		{"the demo asked for beside it", map[string]string{"CARGO_ADMIN_SECRET": "operator-secret-123", "CARGO_DEMO": "true"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			env := map[string]string{"CARGO_LOG_LEVEL": "warn"}
			for k, v := range tt.env {
				env[k] = v
			}
			for start := range 2 { // the first start into an empty store, and a restart
				r := startReplica(dir, env)
				r.base(t)
				r.stop()
				<-r.done
				if warned := strings.Contains(r.stderr.String(), warning); warned != tt.warn {
					t.Errorf("start %d warned: %v, want %v; the log:\n%s", start+1, warned, tt.warn, r.stderr.String())
				}
			}
		})
	}
}

// TestEveryCredentialOfADemoOrganisationIsRefusedWhenDemoIsOff covers
// credentials an admin added to the demo organisations, which carry no
// demo mark of their own: the organisation closes them.
func TestEveryCredentialOfADemoOrganisationIsRefusedWhenDemoIsOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	admin := s.demoToken(t, "demo-admin")
	var key struct{ ID, APIKey string }
	s.mustCreate(t, admin, "/api/admin/api-keys", map[string]any{"organizationId": "demo-forwarder", "name": "TMS integration"}).json(t, &key)
	s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "demo-forwarder", "clientId": "demo-erp", "clientSecret": "erp-secret-123"})
	s.mustCreate(t, admin, "/api/admin/users", map[string]any{"organizationId": "demo-airline-lh", "username": "ops@lh", "password": "a long enough password"})
	earlier := s.token(t, "demo-erp", "erp-secret-123")
	s.stop()

	s = startServer(t, dir, map[string]string{"CARGO_DEMO": "false", "CARGO_ADMIN_SECRET": "operator-secret-123"})
	const disabled = "the demo organisations are disabled: this service runs with demo mode off (CARGO_DEMO)"
	withKey := request{method: "GET", path: "/api/airports", header: map[string]string{"X-Api-Key": key.APIKey}}
	refused := []struct {
		name string
		req  request
		code string
	}{
		{"an API key an admin created", withKey, "invalid_token"},
		{"a token issued while demo mode was on", request{method: "GET", path: "/api/airports", token: earlier}, "invalid_token"},
		{"a client an admin created", request{method: "POST", path: "/api/auth/token",
			body: map[string]string{"grantType": "client_credentials", "clientId": "demo-erp", "clientSecret": "erp-secret-123"}}, "invalid_grant"},
		{"a user an admin created", request{method: "POST", path: "/api/auth/token",
			body: map[string]string{"grantType": "password", "username": "ops@lh", "password": "a long enough password"}}, "invalid_grant"},
		{"a client the demo seeded", request{method: "POST", path: "/api/auth/token",
			body: map[string]string{"grantType": "client_credentials", "clientId": "demo-admin", "clientSecret": "demo-admin-secret"}}, "invalid_grant"},
		{"a user the demo seeded", request{method: "POST", path: "/api/auth/token",
			body: map[string]string{"grantType": "password", "username": "forwarder", "password": "forwarder-password"}}, "invalid_grant"},
	}
	for _, c := range refused {
		r := s.do(t, c.req)
		if e := r.apiError(t); r.status != http.StatusUnauthorized || e.Error != c.code || e.ErrorDescription != disabled {
			t.Errorf("%s with demo off = %d %s", c.name, r.status, r.body)
		}
	}
	if h := s.do(t, withKey).header.Get("WWW-Authenticate"); !strings.Contains(h, disabled) {
		t.Errorf("WWW-Authenticate = %q", h)
	}
	// Without the secret, nobody learns that a client is of a demo
	// organisation.
	r := s.do(t, request{method: "POST", path: "/api/auth/token",
		body: map[string]string{"grantType": "client_credentials", "clientId": "demo-erp", "clientSecret": "a-wrong-guess"}})
	if e := r.apiError(t); e.Error != "invalid_grant" || e.ErrorDescription != "invalid client credentials" {
		t.Errorf("a wrong secret with demo off = %d %s", r.status, r.body)
	}

	// The operator's admin works, sees the demo organisations and their
	// keys, and finds the refusals in the audit log.
	operator := s.token(t, "admin", "operator-secret-123")
	var orgs struct{ Organizations []struct{ ID string } }
	s.do(t, request{method: "GET", path: "/api/admin/organizations", token: operator}).json(t, &orgs)
	listed := map[string]bool{}
	for _, o := range orgs.Organizations {
		listed[o.ID] = true
	}
	if !listed["demo-forwarder"] || !listed["demo-airline-lh"] || !listed["demo-admin"] || !listed["operator"] {
		t.Errorf("organisations = %+v", orgs)
	}
	var keys struct{ APIKeys []struct{ ID string } }
	s.do(t, request{method: "GET", path: "/api/admin/api-keys?organizationId=demo-forwarder", token: operator}).json(t, &keys)
	if len(keys.APIKeys) != 1 || keys.APIKeys[0].ID != key.ID {
		t.Errorf("the demo forwarder's keys = %+v", keys)
	}
	var log auditLog
	s.do(t, request{method: "GET", path: "/api/audit-logs?action=login.failed", token: operator}).json(t, &log)
	failed := map[string]bool{}
	for _, e := range log.Logs {
		failed[e.ResourceID] = failed[e.ResourceID] || e.Details != nil && strings.Contains(e.Details.NewValue, disabled)
	}
	if !failed["client:demo-erp"] || !failed["user:ops@lh"] || !failed["client:demo-admin"] || !failed["user:forwarder"] {
		t.Errorf("failed logins = %+v", log.Logs)
	}
	// Refused tokens and keys are folded into one entry a minute per
	// address: the first, the API key's, says why.
	s.do(t, request{method: "GET", path: "/api/audit-logs?action=token.rejected", token: operator}).json(t, &log)
	if len(log.Logs) != 1 || log.Logs[0].Details == nil || !strings.Contains(log.Logs[0].Details.NewValue, disabled) {
		t.Errorf("rejected tokens = %+v", log.Logs)
	}
	s.stop()

	// Demo mode on again opens the organisations again.
	s = startServer(t, dir, nil)
	if r := s.do(t, withKey); r.status != http.StatusOK {
		t.Errorf("the API key with demo on again = %d %s", r.status, r.body)
	}
	if r := s.do(t, request{method: "GET", path: "/api/airports", token: earlier}); r.status != http.StatusOK {
		t.Errorf("the earlier token with demo on again = %d %s", r.status, r.body)
	}
	s.token(t, "demo-erp", "erp-secret-123")
	s.passwordToken(t, "ops@lh", "a long enough password")
}

// TestARefusedDemoCredentialSaysDemoModeIsOffNotThatItWasSetSo: demo mode
// is off by default with an external NATS server, where no one set
// CARGO_DEMO=false; the refusal of a demo credential said the service
// "runs with CARGO_DEMO=false" all the same, and an operator who had moved
// the quick start's store to a NATS server looked for a setting no one had
// made. It says that demo mode is off, set so or by default.
func TestARefusedDemoCredentialSaysDemoModeIsOffNotThatItWasSetSo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		demo map[string]string // the second start's CARGO_DEMO, if any
	}{
		{"demo mode left out, off by default with CARGO_NATS_URL", nil},
		{"demo mode set to false", map[string]string{"CARGO_DEMO": "false"}},
	}
	const says = "the demo organisations are disabled: this service runs with demo mode off (CARGO_DEMO)"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nats := natstest.Start(t, &server.Options{Port: server.RANDOM_PORT})
			env := func(more map[string]string) map[string]string {
				e := map[string]string{"CARGO_NATS_URL": nats.ClientURL(), "CARGO_NATS_REPLICAS": "1", "CARGO_SECRETS_KEY": testSecretsKey}
				for k, v := range more {
					e[k] = v
				}
				return e
			}
			first := startReplica(t.TempDir(), env(map[string]string{"CARGO_DEMO": "true"}))
			s := &testServer{base: first.base(t), doc: loadDoc(t)}
			token := s.demoToken(t, "demo-forwarder")
			first.stop()
			<-first.done

			second := startReplica(t.TempDir(), env(tt.demo))
			defer func() { second.stop(); <-second.done }()
			s = &testServer{base: second.base(t), doc: loadDoc(t)}
			for _, c := range []struct {
				name string
				req  request
				code string
			}{
				{"a token issued while demo mode was on", request{method: "GET", path: "/api/airports", token: token}, "invalid_token"},
				{"the demo client's secret", request{method: "POST", path: "/api/auth/token",
					body: map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder", "clientSecret": "demo-forwarder-secret"}}, "invalid_grant"},
			} {
				r := s.do(t, c.req)
				if e := r.apiError(t); r.status != http.StatusUnauthorized || e.Error != c.code || e.ErrorDescription != says {
					t.Errorf("%s = %d %s, want 401 %s saying %q", c.name, r.status, r.body, c.code, says)
				}
			}
		})
	}
}

func TestAdminEndpoints(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	var org struct{ ID, Name, Role, AWBPrefix, IATACode string }
	s.mustCreate(t, admin, "/api/admin/organizations",
		map[string]any{"id": "qr-cargo", "name": "Qatar Airways Cargo", "role": "airline", "awbPrefix": "157", "iataCode": "qr"}).json(t, &org)
	if org.ID != "qr-cargo" || org.IATACode != "QR" || org.AWBPrefix != "157" || org.Role != "airline" {
		t.Errorf("org = %+v", org)
	}
	var client struct{ ClientID, ClientSecret string }
	s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "qr-cargo", "clientId": "qr-api"}).json(t, &client)
	if !strings.HasPrefix(client.ClientSecret, "cs_") {
		t.Fatalf("generated secret = %q", client.ClientSecret)
	}
	s.token(t, "qr-api", client.ClientSecret)
	s.mustCreate(t, admin, "/api/admin/users", map[string]any{"organizationId": "qr-cargo", "username": "ops@qr", "password": "a long enough password"})
	s.passwordToken(t, "OPS@qr", "a long enough password")

	tests := []struct {
		name   string
		token  string
		path   string
		body   any
		status int
		fields []string
	}{
		{"not an admin", s.demoToken(t, "demo-forwarder"), "/api/admin/organizations", map[string]any{"name": "x", "role": "forwarder"}, 403, nil},
		{"bad organisation", admin, "/api/admin/organizations", map[string]any{"id": "a b", "role": "shipper"}, 400, []string{"id", "name", "role"}},
		{"airline without prefix", admin, "/api/admin/organizations", map[string]any{"name": "X", "role": "airline", "iataCode": "X"}, 400, []string{"awbPrefix", "iataCode"}},
		{"existing organisation", admin, "/api/admin/organizations", map[string]any{"id": "qr-cargo", "name": "Again", "role": "forwarder"}, 409, nil},
		{"a second LH, by prefix", admin, "/api/admin/organizations", map[string]any{"name": "Air Dup", "role": "airline", "iataCode": "XD", "awbPrefix": "020"}, 409, nil},
		{"a second LH, by code", admin, "/api/admin/organizations", map[string]any{"name": "Air Dup", "role": "airline", "iataCode": "lh", "awbPrefix": "999"}, 409, nil},
		{"client of no organisation", admin, "/api/admin/clients", map[string]any{"organizationId": "nope", "clientId": "c1", "clientSecret": "long enough secret"}, 400, []string{"organizationId"}},
		{"client with a bad id", admin, "/api/admin/clients", map[string]any{"organizationId": "qr-cargo", "clientId": "has space", "clientSecret": "long enough secret"}, 400, []string{"clientId"}},
		{"existing client", admin, "/api/admin/clients", map[string]any{"organizationId": "qr-cargo", "clientId": "qr-api", "clientSecret": "long enough secret"}, 409, nil},
		{"short password", admin, "/api/admin/users", map[string]any{"organizationId": "qr-cargo", "username": "u", "password": "short"}, 400, []string{"password"}},
		{"existing user", admin, "/api/admin/users", map[string]any{"organizationId": "qr-cargo", "username": "ops@QR", "password": "a long enough password"}, 409, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "POST", path: tt.path, token: tt.token, body: tt.body})
			if r.status != tt.status {
				t.Fatalf("= %d %s, want %d", r.status, r.body, tt.status)
			}
			var fields []string
			for _, f := range r.apiError(t).ValidationErrors {
				fields = append(fields, f.Field)
			}
			if strings.Join(fields, ",") != strings.Join(tt.fields, ",") {
				t.Errorf("fields = %v, want %v", fields, tt.fields)
			}
		})
	}
}

// startFails runs cargod as startServer would and returns why it stopped
// at start; a cargod that starts instead fails the test.
func startFails(t *testing.T, dataDir string, env map[string]string) error {
	t.Helper()
	vars := testEnv(dataDir, env)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr lockedbuf.Buffer
	err := run(ctx, nil, environOf(vars), &stdout, &stderr)
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cargod started (%v):\n%s", err, stdout.String())
	}
	return err
}

// A start with CARGO_ADMIN_SECRET stops, saying why, rather than leave the
// operator without the admin it asked for.
func TestBootstrapAdminMustBeTheOperators(t *testing.T) {
	t.Parallel()
	t.Run("client id taken by a forwarder", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		s := startServer(t, dir, nil)
		s.mustCreate(t, s.demoToken(t, "demo-admin"), "/api/admin/clients", map[string]any{"organizationId": "demo-forwarder", "clientId": "admin"})
		s.stop()
		err := startFails(t, dir, map[string]string{"CARGO_ADMIN_SECRET": "operator-secret-123"})
		if !strings.Contains(err.Error(), `client admin is of organisation "demo-forwarder", not "operator"`) {
			t.Errorf("start = %v", err)
		}
	})
	t.Run("operator organisation taken by a forwarder", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		s := startServer(t, dir, nil)
		s.mustCreate(t, s.demoToken(t, "demo-admin"), "/api/admin/organizations", map[string]any{"id": "operator", "name": "Not the operator", "role": "forwarder"})
		s.stop()
		err := startFails(t, dir, map[string]string{"CARGO_ADMIN_SECRET": "operator-secret-123"})
		if !strings.Contains(err.Error(), `organisation "operator" is a forwarder organisation, not an admin one`) {
			t.Errorf("start = %v", err)
		}
	})
	t.Run("another secret", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		startServer(t, dir, map[string]string{"CARGO_ADMIN_SECRET": "operator-secret-123"}).stop()
		err := startFails(t, dir, map[string]string{"CARGO_ADMIN_SECRET": "operator-secret-456"})
		if !strings.Contains(err.Error(), "has another secret") || !strings.Contains(err.Error(), "CARGO_ADMIN_CLIENT_ID") {
			t.Errorf("start = %v", err)
		}
		// With its own id, the new secret makes a second admin.
		s := startServer(t, dir, map[string]string{"CARGO_ADMIN_SECRET": "operator-secret-456", "CARGO_ADMIN_CLIENT_ID": "admin2"})
		s.token(t, "admin2", "operator-secret-456")
	})
	t.Run("a rotated secret, then disabled", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		s := startServer(t, dir, map[string]string{"CARGO_ADMIN_SECRET": "operator-secret-123"})
		admin := s.demoToken(t, "demo-admin")
		if r := s.do(t, request{method: "POST", path: "/api/admin/clients/admin/secret", token: admin,
			body: map[string]string{"clientSecret": "operator-secret-789"}}); r.status != 200 {
			t.Fatalf("rotating: %d %s", r.status, r.body)
		}
		s.stop()
		// The rotated secret is the one a start expects.
		s = startServer(t, dir, map[string]string{"CARGO_ADMIN_SECRET": "operator-secret-789"})
		s.token(t, "admin", "operator-secret-789")
		if r := s.do(t, request{method: "POST", path: "/api/admin/clients/admin/disable", token: s.demoToken(t, "demo-admin")}); r.status != 200 {
			t.Fatalf("disabling: %d %s", r.status, r.body)
		}
		s.stop()
		err := startFails(t, dir, map[string]string{"CARGO_ADMIN_SECRET": "operator-secret-789"})
		if !strings.Contains(err.Error(), "client admin is disabled") {
			t.Errorf("start = %v", err)
		}
	})
}

// The read model an admin's request checks may not show an airline
// created a moment before, on this replica or another: the prefix and
// code are claimed in the transaction that creates the airline.
func TestAirlinesCreatedAtOnceWithOnePrefixAndCodeAreOneAndConflicts(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	responses := s.doAtOnce(t, 8, func(i int) request {
		return request{method: "POST", path: "/api/admin/organizations", token: admin,
			body: map[string]any{"id": fmt.Sprintf("dup-%d", i), "name": "Dup", "role": "airline", "awbPrefix": "999", "iataCode": "ZZ"}}
	})
	created, statuses := 0, make([]int, len(responses))
	for i, r := range responses {
		statuses[i] = r.status
		switch r.status {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
		default:
			t.Errorf("status %d, want 201 or 409", r.status)
		}
	}
	if created != 1 {
		t.Errorf("%d airlines created with prefix 999 and code ZZ at once (statuses %v), want 1", created, statuses)
	}
	// Each on its own is enough to conflict.
	for _, body := range []map[string]any{
		{"id": "dup-prefix", "name": "Dup", "role": "airline", "awbPrefix": "999", "iataCode": "ZY"},
		{"id": "dup-code", "name": "Dup", "role": "airline", "awbPrefix": "998", "iataCode": "zz"},
	} {
		if r := s.do(t, request{method: "POST", path: "/api/admin/organizations", token: admin, body: body}); r.status != http.StatusConflict {
			t.Errorf("%v: %d %s, want 409", body, r.status, r.body)
		}
	}
}

// The guessing limits count tries per name from one address and per name
// from everywhere; a name that ends in "@" and an address is a name like
// any other, and guesses at it count against neither limit of the name
// before it.
func TestGuessesAtANameEndingInAnAddressDoNotLockOutTheNameBeforeIt(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	for i := range 20 { // the limit per name and address
		r := s.do(t, request{method: "POST", path: "/api/auth/token",
			body: map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder@127.0.0.1", "clientSecret": "guess"}})
		if r.status != http.StatusUnauthorized {
			t.Fatalf("guess %d = %d %s, want 401", i+1, r.status, r.body)
		}
	}
	r := s.do(t, request{method: "POST", path: "/api/auth/token",
		body: map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder", "clientSecret": "demo-forwarder-secret"}})
	if r.status != http.StatusOK {
		t.Errorf("demo-forwarder's own login after guesses at demo-forwarder@127.0.0.1 = %d %s, want 200", r.status, r.body)
	}
}

// A 403 for the caller's role names the roles the operation is open to,
// as the route lists them: an airline filing an RFQ learns that it is a
// forwarder's operation, not only that it is not an airline's.
func TestARefusalByRoleSaysWhomTheOperationIsOpenTo(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	for _, c := range []struct {
		name, token, method, path string
		body                      any
		want                      string
	}{
		{"an airline filing an RFQ", lh, "POST", "/api/quotes", rfq(), "this operation is open to forwarders only, not to the airline role"},
		{"a forwarder scheduling flights", fwd, "POST", "/api/flights", map[string]any{}, "this operation is open to airlines only, not to the forwarder role"},
		{"a forwarder reading rate cards", fwd, "GET", "/api/rates", nil, "this operation is open to airlines and admins only, not to the forwarder role"},
		{"an airline creating an organisation", lh, "POST", "/api/admin/organizations", map[string]any{"name": "x", "role": "forwarder"}, "this operation is open to admins only, not to the airline role"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, request{method: c.method, path: c.path, token: c.token, body: c.body})
			if e := r.apiError(t); r.status != 403 || e.Error != "forbidden" || e.ErrorDescription != c.want {
				t.Errorf("= %d %s, want 403 %q", r.status, r.body, c.want)
			}
		})
	}
}

// A long poll's credential is checked as it begins and again when a
// change ends its wait: a token revoked while it waited (up to 30 s) is
// answered 401, not with what changed.
func TestALongPollWhoseTokenIsRevokedWhileItWaitsIsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh, admin := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh"), s.demoToken(t, "demo-admin")
	path := "/api/flights/" + raceFlight(t, s)["id"].(string)
	seen := s.read(t, fwd, path)
	answered := make(chan response, 1)
	go func() {
		answered <- s.do(t, request{method: "GET", path: path, token: fwd,
			header: map[string]string{"If-None-Match": seen.etag, "Prefer": "wait=30"}})
	}()
	// The revocation comes once the poll waits, as the server's metrics
	// tell (the test's server serves no other poll): a revocation stored
	// before the poll came is a 401 too, and would not test the check
	// made again after the wait.
	eventually(t, "the long polls waiting", func() float64 {
		n, _ := metricValue(parseMetrics(t, s.do(t, request{method: "GET", path: "/metrics", token: admin}).body), "cargo_http_long_polls_waiting")
		return n
	}, func(n float64) bool { return n == 1 })
	jti, err := tokens.ID(fwd)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.do(t, request{method: "POST", path: "/api/admin/token-revocations", token: admin, body: map[string]string{"jti": jti}}); r.status != http.StatusNoContent {
		t.Fatalf("revocation = %d %s", r.status, r.body)
	}
	if r := s.do(t, request{method: "PATCH", path: path, token: lh, body: map[string]any{"status": "delayed"}}); r.status != http.StatusOK {
		t.Fatalf("PATCH = %d %s", r.status, r.body)
	}
	select {
	case r := <-answered:
		if e := r.apiError(t); r.status != http.StatusUnauthorized || e.ErrorDescription != "the access token has been revoked" ||
			!strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("the long poll of a token revoked while it waited = %d %s, WWW-Authenticate %q", r.status, r.body, r.header.Get("WWW-Authenticate"))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the long poll did not end with the flight's change")
	}
}

// A long poll ends with the 401 as soon as its credential is withdrawn,
// though its resource does not change: it waited on until its time ran
// out, and was then answered a 304, as if the credential still held.
func TestALongPollEndsWhenItsCredentialIsWithdrawn(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	path := "/api/flights/" + raceFlight(t, s)["id"].(string)
	for _, org := range []string{"acme", "beta", "gamma"} {
		s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": org, "name": org, "role": "forwarder"})
	}
	clientToken := func(org, id string) map[string]string {
		s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": org, "clientId": id, "clientSecret": id + "-secret-1234"})
		return map[string]string{"Authorization": "Bearer " + s.token(t, id, id+"-secret-1234")}
	}
	var key struct{ ID, APIKey string }
	s.mustCreate(t, admin, "/api/admin/api-keys", map[string]any{"organizationId": "acme", "name": "ci"}).json(t, &key)
	byJTI, bySubject, disabled, ofBeta, ofGamma := clientToken("acme", "a-jti"), clientToken("acme", "a-subject"),
		clientToken("acme", "a-disabled"), clientToken("beta", "b"), clientToken("gamma", "g")
	jti, err := tokens.ID(strings.TrimPrefix(byJTI["Authorization"], "Bearer "))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		credential map[string]string
		withdraw   request
		want       string
	}{
		{"a token revoked", byJTI, request{method: "POST", path: "/api/admin/token-revocations", body: map[string]string{"jti": jti}},
			"the access token has been revoked"},
		{"a client's tokens revoked", bySubject, request{method: "POST", path: "/api/admin/token-revocations", body: map[string]string{"subject": "client:a-subject"}},
			"the access token has been revoked: request a new one"},
		{"a client disabled", disabled, request{method: "POST", path: "/api/admin/clients/a-disabled/disable"}, ""},
		{"an API key revoked", map[string]string{"x-api-key": key.APIKey}, request{method: "DELETE", path: "/api/admin/api-keys/" + key.ID},
			"the API key is not valid"},
		{"an organisation disabled", ofBeta, request{method: "POST", path: "/api/admin/organizations/beta/disable"}, ""},
		{"an organisation's tokens revoked", ofGamma, request{method: "POST", path: "/api/admin/token-revocations", body: map[string]string{"organizationId": "gamma"}},
			"the access token has been revoked: request a new one"},
	}
	answered := make([]chan response, len(cases))
	for i, c := range cases {
		answered[i] = make(chan response, 1)
		header := map[string]string{"If-None-Match": s.do(t, request{method: "GET", path: path, header: c.credential}).header.Get("ETag"), "Prefer": "wait=30"}
		for k, v := range c.credential {
			header[k] = v
		}
		go func() { answered[i] <- s.do(t, request{method: "GET", path: path, header: header}) }()
	}
	// The withdrawals come once every poll waits, as the server's metrics
	// tell: one stored before its poll came would be refused as the poll
	// began.
	eventually(t, "the long polls waiting", func() float64 {
		n, _ := metricValue(parseMetrics(t, s.do(t, request{method: "GET", path: "/metrics", token: admin}).body), "cargo_http_long_polls_waiting")
		return n
	}, func(n float64) bool { return n == float64(len(cases)) })
	for i, c := range cases {
		c.withdraw.token = admin
		if r := s.do(t, c.withdraw); r.status >= 300 {
			t.Fatalf("%s: %s %s = %d %s", c.name, c.withdraw.method, c.withdraw.path, r.status, r.body)
		}
		r := <-answered[i]
		if r.status != http.StatusUnauthorized {
			t.Errorf("%s while it waited: the long poll = %d %s, want 401", c.name, r.status, r.body)
			continue
		}
		if e := r.apiError(t); e.Error != "invalid_token" || (c.want != "" && e.ErrorDescription != c.want) {
			t.Errorf("%s while it waited: the long poll = %d %s, want 401 %q", c.name, r.status, r.body, c.want)
		}
	}
}

// Each credential an admin lists says when it was created, and when its
// secret or password was last changed or it was revoked, left out while
// that has not happened: what an operator looks for among credentials
// due for rotation.
func TestAdminSeesWhenEachCredentialWasCreatedAndLastChanged(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin := s.demoToken(t, "demo-admin")
	before := time.Now().Truncate(time.Second)
	s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "acme", "name": "Acme Forwarding", "role": "forwarder"})
	for _, id := range []string{"acme-tms", "acme-erp"} {
		s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "acme", "clientId": id, "clientSecret": "acme-chosen-secret"})
	}
	for _, name := range []string{"ana@acme", "bo@acme"} {
		s.mustCreate(t, admin, "/api/admin/users", map[string]any{"organizationId": "acme", "username": name, "password": "a long enough password"})
	}
	var kept, revoked struct{ ID string }
	s.mustCreate(t, admin, "/api/admin/api-keys", map[string]any{"organizationId": "acme", "name": "scanner"}).json(t, &kept)
	s.mustCreate(t, admin, "/api/admin/api-keys", map[string]any{"organizationId": "acme", "name": "old scanner"}).json(t, &revoked)
	for _, change := range []request{
		{method: "POST", path: "/api/admin/clients/acme-erp/secret", body: map[string]any{}},
		{method: "PUT", path: "/api/admin/users/bo@acme/password", body: map[string]any{"password": "another long password"}},
		{method: "DELETE", path: "/api/admin/api-keys/" + revoked.ID},
	} {
		change.token = admin
		if r := s.do(t, change); r.status != http.StatusOK && r.status != http.StatusNoContent {
			t.Fatalf("%s %s: %d %s", change.method, change.path, r.status, r.body)
		}
	}
	after := time.Now()

	type credential struct {
		ClientID, Username, Name                                 string
		CreatedAt, SecretRotatedAt, PasswordChangedAt, RevokedAt *time.Time
	}
	var lists struct{ Clients, Users, APIKeys []credential }
	for _, path := range []string{"/api/admin/clients", "/api/admin/users", "/api/admin/api-keys"} {
		r := s.do(t, request{method: "GET", path: path + "?organizationId=acme", token: admin})
		if r.status != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, r.status, r.body)
		}
		r.json(t, &lists)
	}
	within := func(at *time.Time) bool { return at != nil && !at.Before(before) && !at.After(after) }
	changed := map[string]*time.Time{}
	for _, c := range append(append(lists.Clients, lists.Users...), lists.APIKeys...) {
		id := c.ClientID + c.Username + c.Name
		if !within(c.CreatedAt) {
			t.Errorf("%s was created at %v, want from %s to %s", id, c.CreatedAt, before, after)
		}
		for _, at := range []*time.Time{c.SecretRotatedAt, c.PasswordChangedAt, c.RevokedAt} {
			if at != nil {
				changed[id] = at
			}
		}
	}
	if len(lists.Clients)+len(lists.Users)+len(lists.APIKeys) != 6 || len(changed) != 3 ||
		!within(changed["acme-erp"]) || !within(changed["bo@acme"]) || !within(changed["old scanner"]) ||
		!changed["acme-erp"].After(*lists.Clients[0].CreatedAt) {
		t.Errorf("credentials = %+v, changed = %v: want six, and the rotated secret, the changed password and the revoked key alone dated", lists, changed)
	}
}
