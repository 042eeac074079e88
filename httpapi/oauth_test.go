package httpapi

import (
	"encoding/base64"
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/cargostream/cargostream/domain"
)

func TestTokenRequestsRefuseControlCharactersHoweverTheyAreSent(t *testing.T) {
	form := func(v url.Values) (string, string) { return "application/x-www-form-urlencoded", v.Encode() }
	basic := func(id, secret string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
	}
	clean := url.Values{"grant_type": {"client_credentials"}}
	tests := []struct {
		name          string
		contentType   string
		body          string
		authorization string
		want          string // the first problem's field, or "" for none
	}{
		{"a clean form", "application/x-www-form-urlencoded", clean.Encode(), basic("acme", "secret-long"), ""},
		{"a bell in a form's client id", "", "", "", "client_id"},
		{"an escape in a form's password", "", "", "", "password"},
		{"a bell in a Basic client id", "application/x-www-form-urlencoded", clean.Encode(), basic("acme\x07", "secret-long"), "Authorization"},
		{"a right-to-left override in a Basic secret", "application/x-www-form-urlencoded", clean.Encode(), basic("acme", "se\u202ecret"), "Authorization"},
		{"a bell in JSON, as before", "application/json", `{"grantType":"client_credentials","clientId":"ac\u0007me"}`, "", "clientId"},
	}
	tests[1].contentType, tests[1].body = form(url.Values{"grant_type": {"client_credentials"}, "client_id": {"ac\x07me"}})
	tests[2].contentType, tests[2].body = form(url.Values{"grant_type": {"password"}, "username": {"ops"}, "password": {"pass\x1bword"}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/auth/token", strings.NewReader(tt.body))
			r.Header.Set("Content-Type", tt.contentType)
			if tt.authorization != "" {
				r.Header.Set("Authorization", tt.authorization)
			}
			_, err := readTokenRequest(r)
			got := ""
			var invalid *domain.Error
			if errors.As(err, &invalid) && len(invalid.Fields) > 0 {
				got = invalid.Fields[0].Field
			} else if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("= %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTheActorAFailedLoginIsRecordedAsIsOneTheAuditLogCanBeFilteredBy(t *testing.T) {
	long := strings.Repeat("é", 1000) // runes are what the filter counts
	for _, req := range []tokenRequest{
		{GrantType: "client_credentials", ClientID: long},
		{GrantType: "password", Username: long},
		{GrantType: "client_credentials", ClientID: "acme-tms"},
	} {
		actor := claimedSubject(req)
		if err := checkQuery(url.Values{"userId": {actor}}, true); err != nil {
			t.Errorf("the actor %.20s… (%d characters) as the userId filter: %v", actor, len([]rune(actor)), err)
		}
	}
}
