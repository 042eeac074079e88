package tokens

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// TestVerifyRefusesEverySpellingButTheIssuedOne respells and re-signs a real
// token in each way a lenient parser might accept, and wants every variant
// refused, even after the real token sits in the verified-token cache.
func TestVerifyRefusesEverySpellingButTheIssuedOne(t *testing.T) {
	a := newTestTokens(t)
	now := time.Now()
	p := domain.Principal{Subject: "client:acme", OrganizationID: "acme", Role: domain.RoleForwarder}
	// A token whose signature has a low s and uses - or _, so that both the
	// high-S and the +/ variants differ from it.
	var raw string
	for range 200 {
		tok, _, err := a.Issue(p, false, now)
		if err != nil {
			t.Fatal(err)
		}
		sig := strings.Split(tok, ".")[2]
		if _, s := splitSignature(t, sig); isLowS(s) && strings.ContainsAny(sig, "-_") {
			raw = tok
			break
		}
	}
	if raw == "" {
		t.Fatal("no issued token had a low-S signature with - or _ in 200 tries")
	}
	segments := strings.Split(raw, ".")
	header, payload, sig := segments[0], segments[1], segments[2]
	r, s := splitSignature(t, sig)

	pad := func(seg string) string { return seg + strings.Repeat("=", (4-len(seg)%4)%4) }
	highS := base64.RawURLEncoding.EncodeToString(append(r.FillBytes(make([]byte, 32)),
		new(big.Int).Sub(elliptic.P256().Params().N, s).FillBytes(make([]byte, 32))...))
	// 64 bytes take 86 characters; the last carries 4 unused bits, which a
	// lenient decoder ignores.
	lastBits := sig[:len(sig)-1] + string(base64URLAlphabet[strings.IndexByte(base64URLAlphabet, sig[len(sig)-1])|1])
	jsonForm, _ := json.Marshal(map[string]string{"protected": header, "payload": payload, "signature": sig})

	var claims map[string]any
	decoded, _ := base64.RawURLEncoding.DecodeString(payload)
	if err := json.Unmarshal(decoded, &claims); err != nil {
		t.Fatal(err)
	}
	without := func(name string) map[string]any {
		c := map[string]any{}
		for k, v := range claims {
			if k != name {
				c[k] = v
			}
		}
		return c
	}
	issuedHeader := map[string]any{}
	decoded, _ = base64.RawURLEncoding.DecodeString(header)
	if err := json.Unmarshal(decoded, &issuedHeader); err != nil {
		t.Fatal(err)
	}
	withTyp := func(typ any) map[string]any {
		h := map[string]any{"alg": "ES256", "kid": issuedHeader["kid"]}
		if typ != nil {
			h["typ"] = typ
		}
		return h
	}
	hs256 := segment(t, map[string]any{"alg": "HS256", "kid": issuedHeader["kid"], "typ": "JWT"}) + "." + payload
	mac := hmac.New(sha256.New, []byte(issuedHeader["kid"].(string)))
	mac.Write([]byte(hs256))
	hs256 += "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))

	accepted := map[string]bool{}

	for _, c := range []struct {
		name  string
		token string
		ok    bool
		says  string // what the refusal tells the client, for the refusals that name their reason
	}{
		{"the issued token", raw, true, ""},
		{"a token signed like the issued one", signES256(t, a, issuedHeader, claims), true, ""},
		{"padded base64", pad(header) + "." + pad(payload) + "." + pad(sig), false, "base64url"},
		{"padded signature only", header + "." + payload + "." + pad(sig), false, "base64url"},
		{"+/ alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(raw), false, "base64url"},
		{"unused bits set in the signature's last character", header + "." + payload + "." + lastBits, false, ""},
		{"high-S signature (n - s)", header + "." + payload + "." + highS, false, "low-S"},
		{"JSON serialisation", string(jsonForm), false, "base64url"},
		{"extra empty segment", raw + ".", false, "base64url"},
		{"extra segment", raw + "." + sig, false, "base64url"},
		{"leading space", " " + raw, false, "base64url"},
		{"trailing newline", raw + "\n", false, "base64url"},
		{"newline inside the signature", header + "." + payload + "." + sig[:40] + "\n" + sig[40:], false, "base64url"},
		{"CRLF inside the payload", header + "." + payload[:10] + "\r\n" + payload[10:] + "." + sig, false, "base64url"},
		{"no exp", signES256(t, a, issuedHeader, without("exp")), false, "exp"},
		{"no typ", signES256(t, a, withTyp(nil), claims), false, "typ"},
		{"typ at+jwt", signES256(t, a, withTyp("at+jwt"), claims), false, "typ"},
		{"typ jwt in lower case", signES256(t, a, withTyp("jwt"), claims), false, "typ"},
		{"typ under the key TYP", signES256(t, a, map[string]any{"alg": "ES256", "kid": issuedHeader["kid"], "TYP": "JWT"}, claims), false, "typ"},
		{"alg none", segment(t, map[string]any{"alg": "none", "typ": "JWT"}) + "." + payload + ".", false, ""},
		{"alg HS256", hs256, false, ""},
		{"alg none with the issued header's kid", segment(t, map[string]any{"alg": "none", "kid": issuedHeader["kid"], "typ": "JWT"}) + "." + payload + "." + sig, false, ""},
	} {
		_, err := a.Verify(c.token, now)
		if c.ok {
			accepted[c.token] = true
		}
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case !c.ok && err == nil:
			t.Errorf("%s: it verified", c.name)
		case !c.ok && !strings.Contains(domain.ErrorMessage(err), c.says):
			t.Errorf("%s: refused saying %q, want it to name %q", c.name, domain.ErrorMessage(err), c.says)
		}
	}
	// Only the exact accepted strings were ever cached: a respelling cannot
	// answer from the cache.
	for cached := range a.verified {
		if !accepted[cached] {
			t.Errorf("the cache holds %q", cached)
		}
	}
}

// TestIssueSignsWithLowS: Go's ECDSA signer returns a high s about half the
// time, so Issue must make it low or Verify would refuse its own tokens.
func TestIssueSignsWithLowS(t *testing.T) {
	a := newTestTokens(t)
	now := time.Now()
	for i := range 64 {
		raw, _, err := a.Issue(domain.Principal{Subject: "client:acme", OrganizationID: "acme", Role: domain.RoleForwarder}, false, now)
		if err != nil {
			t.Fatal(err)
		}
		if _, s := splitSignature(t, strings.Split(raw, ".")[2]); !isLowS(s) {
			t.Fatalf("token %d has a high-S signature", i)
		}
		if _, err := a.Verify(raw, now); err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
	}
}

func splitSignature(t *testing.T, sig string) (r, s *big.Int) {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || len(b) != 64 {
		t.Fatalf("signature %q: %d bytes, %v", sig, len(b), err)
	}
	return new(big.Int).SetBytes(b[:32]), new(big.Int).SetBytes(b[32:])
}

func isLowS(s *big.Int) bool {
	return s.Cmp(new(big.Int).Rsh(elliptic.P256().Params().N, 1)) <= 0
}

func segment(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// signES256 signs any header and claims with a's key, low-S, by hand, so
// that the test can make tokens Issue never would.
func signES256(t *testing.T, a *Authority, header, claims map[string]any) string {
	t.Helper()
	var key ecdsa.PrivateKey
	if err := a.private.Raw(&key); err != nil {
		t.Fatal(err)
	}
	input := segment(t, header) + "." + segment(t, claims)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, &key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	if !isLowS(s) {
		s.Sub(key.Curve.Params().N, s)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...))
}
