package httpapi

import (
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
)

func TestTokensVerifyAndCache(t *testing.T) {
	key, err := GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := NewTokens(key, "cargostream", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	p := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	raw, ttl, err := tokens.Issue(p, true, now)
	if err != nil || ttl != time.Hour {
		t.Fatal(ttl, err)
	}
	for _, when := range []string{"first", "cached"} {
		got, demo, err := tokens.Verify(raw, now.Add(time.Minute))
		if err != nil || got != p || !demo {
			t.Errorf("%s: = %+v %v %v", when, got, demo, err)
		}
	}
	// The cache never outlives the token.
	if _, _, err := tokens.Verify(raw, now.Add(2*time.Hour)); err == nil {
		t.Error("an expired token verified from the cache")
	}
	if _, _, err := tokens.Verify(raw+"x", now); err == nil {
		t.Error("a changed token verified")
	}
	if _, err := NewTokens([]byte("not a key"), "x", time.Hour); err == nil {
		t.Error("a non-PEM key was accepted")
	}
}
