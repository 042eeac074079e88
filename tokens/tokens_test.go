package tokens

import (
	"errors"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
)

func newTestTokens(t *testing.T) *Authority {
	t.Helper()
	key, err := GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := New(key, "cargostream", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tokens
}

func TestTokensVerifyAndCache(t *testing.T) {
	tokens := newTestTokens(t)
	now := time.Now()
	p := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	raw, ttl, err := tokens.Issue(p, true, now)
	if err != nil || ttl != time.Hour {
		t.Fatal(ttl, err)
	}
	// In this order: the first verification fills the cache, the rest
	// may answer from it.
	for _, c := range []struct {
		name  string
		token string
		at    time.Time
		ok    bool
	}{
		{"a fresh token verifies", raw, now.Add(time.Minute), true},
		{"a cached token verifies", raw, now.Add(time.Minute), true},
		{"a cached token is refused once expired", raw, now.Add(2 * time.Hour), false},
		{"a changed token is refused", raw + "x", now, false},
		{"a token cut short is refused", raw[:len(raw)-1], now, false},
		{"the token still verifies before it expires", raw, now.Add(59 * time.Minute), true},
	} {
		got, err := tokens.Verify(c.token, c.at)
		if c.ok && (err != nil || got.Principal != p || !got.Demo || got.ID == "" || !got.IssuedAt.Equal(now.Truncate(time.Millisecond))) {
			t.Errorf("%s: = %+v %v", c.name, got, err)
		}
		if !c.ok && err == nil {
			t.Errorf("%s: it verified", c.name)
		}
	}
	if _, err := New([]byte("not a key"), "x", time.Hour); err == nil {
		t.Error("a non-PEM key was accepted")
	}
}

// authoritiesOfOneKey are two authorities of one signing key whose tokens
// live long and short: one key's lifetime before and after
// CARGO_TOKEN_TTL was shortened.
func authoritiesOfOneKey(t *testing.T, long, short time.Duration) (*Authority, *Authority) {
	t.Helper()
	key, err := GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	var out []*Authority
	for _, ttl := range []time.Duration{long, short} {
		a, err := New(key, "cargostream", ttl)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out[0], out[1]
}

func TestATokenLivesNoLongerThanTheLifetimeConfiguredNow(t *testing.T) {
	long, short := authoritiesOfOneKey(t, 24*time.Hour, time.Hour)
	now := time.Now()
	raw, _, err := long.Issue(domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}, false, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"within the lifetime configured now", now.Add(59 * time.Minute), true},
		{"within the clock skew past it", now.Add(time.Hour + ClockSkew/2), true},
		{"past it, though its exp is a day", now.Add(2 * time.Hour), false},
	} {
		got, err := short.Verify(raw, c.at)
		if c.ok != (err == nil) {
			t.Errorf("%s: = %+v, %v; want accepted %v", c.name, got, err, c.ok)
		}
		if c.ok && !got.Expires.Equal(now.Truncate(time.Millisecond).Add(time.Hour)) {
			t.Errorf("%s: expires %v, want an hour after it was issued", c.name, got.Expires)
		}
	}
}

func TestTokensCacheIsBounded(t *testing.T) {
	tokens := newTestTokens(t)
	tokens.maxVerified = 3
	now := time.Now()
	var raws []string
	for i := range 10 {
		raw, _, err := tokens.Issue(domain.Principal{Subject: "client:f", OrganizationID: "f", Role: domain.RoleForwarder}, false, now)
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
		if _, err := tokens.Verify(raw, now); err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if n := len(tokens.verified); n > 3 {
			t.Fatalf("after %d tokens the cache holds %d", i+1, n)
		}
	}
	// A token the cache forgot verifies again, the slow way.
	for i, raw := range raws {
		if _, err := tokens.Verify(raw, now); err != nil {
			t.Errorf("token %d again: %v", i, err)
		}
	}
}

func TestIDReadsATokensJTIWithoutVerifying(t *testing.T) {
	a := newTestTokens(t)
	raw, _, err := a.Issue(domain.Principal{Subject: "client:f", OrganizationID: "f", Role: domain.RoleForwarder}, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	verified, err := a.Verify(raw, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if id, err := ID(raw); err != nil || id != verified.ID {
		t.Errorf("ID = %q, %v; want %q", id, err, verified.ID)
	}
	if _, err := ID("not-a-token"); err == nil {
		t.Error("ID of no token succeeded")
	}
}

// A token past its lifetime is refused saying it has expired, which the
// client cures by getting a new one, where "invalid or expired" left it
// to guess; up to the clock skew past it, it is still taken. A token
// that is not authentic is not said to be expired.
func TestAnExpiredTokenIsRefusedSayingItHasExpired(t *testing.T) {
	long, short := authoritiesOfOneKey(t, 24*time.Hour, time.Minute)
	now := time.Now()
	p := domain.Principal{Subject: "client:acme", OrganizationID: "acme", Role: domain.RoleForwarder}
	raw, _, err := short.Issue(p, false, now)
	if err != nil {
		t.Fatal(err)
	}
	outlived, _, err := long.Issue(p, false, now)
	if err != nil {
		t.Fatal(err)
	}
	var expired *domain.Error
	if !errors.As(errExpired, &expired) {
		t.Fatal("errExpired is no refusal")
	}
	for _, c := range []struct {
		name, token string
		at          time.Time
		want        string // the refusal's message, "" for accepted, "-" for another refusal
	}{
		{"just before its exp", raw, now.Add(time.Minute - time.Second), ""},
		{"at its exp, within the clock skew", raw, now.Add(time.Minute), ""},
		{"at its exp and the clock skew", raw, now.Add(time.Minute + ClockSkew), expired.Message},
		{"an hour past its exp", raw, now.Add(time.Hour), expired.Message},
		{"past the lifetime configured now, though its exp is a day", outlived, now.Add(time.Hour), expired.Message},
		{"past its exp, and not authentic", raw[:len(raw)-2] + "AA", now.Add(time.Hour), "-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := short.Verify(c.token, c.at)
			var refusal *domain.Error
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want == "-" && (err == nil || errors.As(err, &refusal) && refusal.Message == expired.Message):
				t.Errorf("= %v, want refused otherwise than as expired", err)
			case c.want != "" && c.want != "-" && !(errors.As(err, &refusal) && refusal.Code == domain.InvalidToken && refusal.Message == c.want):
				t.Errorf("= %v, want invalid_token %q", err, c.want)
			}
		})
	}
}
