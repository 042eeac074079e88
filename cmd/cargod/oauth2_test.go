package main

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// TestAStandardOAuthClientGetsATokenAndUsesIt runs golang.org/x/oauth2's
// client credentials flow against the server: it reads the RFC 6749 names
// of the token response (§5.1) and of an error (§5.2), and sends the
// client's credentials either way RFC 6749 §2.3.1 allows.
func TestAStandardOAuthClientGetsATokenAndUsesIt(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	for _, style := range []struct {
		name  string
		style oauth2.AuthStyle
	}{{"in a Basic header", oauth2.AuthStyleInHeader}, {"in the form", oauth2.AuthStyleInParams}} {
		t.Run("credentials "+style.name, func(t *testing.T) {
			conf := clientcredentials.Config{ClientID: "demo-forwarder", ClientSecret: "demo-forwarder-secret",
				TokenURL: s.base + "/api/auth/token", AuthStyle: style.style}
			tok, err := conf.Token(t.Context())
			if err != nil {
				t.Fatalf("no token: %v", err)
			}
			if tok.AccessToken == "" || tok.Type() != "Bearer" || time.Until(tok.Expiry) < 59*time.Minute || time.Until(tok.Expiry) > time.Hour {
				t.Errorf("token of type %q, %d characters, expiring %v; want a Bearer token for an hour", tok.Type(), len(tok.AccessToken), tok.Expiry)
			}
			res, err := conf.Client(t.Context()).Get(s.base + "/api/flights")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("GET /api/flights with the token = %d, want 200", res.StatusCode)
			}
		})
	}
	t.Run("a wrong secret", func(t *testing.T) {
		conf := clientcredentials.Config{ClientID: "demo-forwarder", ClientSecret: "wrong-secret-x", TokenURL: s.base + "/api/auth/token",
			AuthStyle: oauth2.AuthStyleInParams}
		_, err := conf.Token(t.Context())
		var refused *oauth2.RetrieveError
		if !errors.As(err, &refused) {
			t.Fatalf("error %v, want a RetrieveError", err)
		}
		if refused.ErrorCode != "invalid_grant" || refused.ErrorDescription == "" || refused.Response.StatusCode != http.StatusUnauthorized {
			t.Errorf("refusal: code %q, description %q, status %d; want invalid_grant with a description, 401",
				refused.ErrorCode, refused.ErrorDescription, refused.Response.StatusCode)
		}
	})
}
