// Package tokens issues and verifies the service's access tokens.
//
// A token is a JWT signed with ES256 (ECDSA P-256): a small key and a short
// signature, and a public key that clients and every replica can check
// tokens with, published as a JWKS. It names its caller in its claims (sub,
// org, role, and airline and awbPrefix for airlines) so that a request is
// authenticated without a lookup, and marks demo identities with demo, so
// that their tokens are refused once demo mode is off. Nothing revokes a
// token: it lives for the configured lifetime (an hour by default), and
// that short life is what bounds a stolen one.
package tokens

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// audience of every access token this service issues.
const audience = "cargostream-api"

// An Authority issues access tokens and verifies the ones signed with its
// key.
type Authority struct {
	private jwk.Key
	public  jwk.Set
	issuer  string
	ttl     time.Duration

	// verified remembers tokens whose signature checked out, by the token
	// itself, until they expire: an ECDSA verification costs more than the
	// rest of a read. It holds at most maxVerified tokens.
	mu          sync.Mutex
	verified    map[string]verifiedToken
	maxVerified int
}

type verifiedToken struct {
	principal domain.Principal
	demo      bool
	expires   time.Time
}

// maxVerified bounds the cache of verified tokens: some megabytes.
const maxVerified = 10000

// GenerateSigningKey returns a new P-256 key as PKCS#8 PEM.
func GenerateSigningKey() ([]byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// New loads the PEM signing key. The key id is the key's RFC 7638
// thumbprint, so every replica with the same key names it the same.
func New(keyPEM []byte, issuer string, ttl time.Duration) (*Authority, error) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New("signing key: not PEM")
	}
	raw, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	ec, ok := raw.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errors.New("signing key: must be an ECDSA P-256 key")
	}
	priv, err := jwk.FromRaw(ec)
	if err != nil {
		return nil, err
	}
	thumb, err := priv.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	kid := base64.RawURLEncoding.EncodeToString(thumb)
	priv.Set(jwk.KeyIDKey, kid)
	priv.Set(jwk.AlgorithmKey, jwa.ES256)
	pub, err := priv.PublicKey()
	if err != nil {
		return nil, err
	}
	pub.Set(jwk.KeyUsageKey, "sig")
	set := jwk.NewSet()
	set.AddKey(pub)
	return &Authority{private: priv, public: set, issuer: issuer, ttl: ttl, verified: map[string]verifiedToken{}, maxVerified: maxVerified}, nil
}

// Issue returns a signed token for p and its lifetime.
func (a *Authority) Issue(p domain.Principal, demo bool, now time.Time) (string, time.Duration, error) {
	b := jwt.NewBuilder().
		Issuer(a.issuer).
		Audience([]string{audience}).
		Subject(p.Subject).
		IssuedAt(now).
		NotBefore(now).
		Expiration(now.Add(a.ttl)).
		JwtID(uuid.NewString()).
		Claim("org", p.OrganizationID).
		Claim("role", string(p.Role))
	if p.Role == domain.RoleAirline {
		b = b.Claim("airline", p.AirlineCode).Claim("awbPrefix", p.AWBPrefix)
	}
	if demo {
		b = b.Claim("demo", true)
	}
	tok, err := b.Build()
	if err != nil {
		return "", 0, err
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256, a.private))
	return string(signed), a.ttl, err
}

// Verify checks a token's signature, issuer, audience and times, and
// returns the caller it names and whether it is a demo identity.
func (a *Authority) Verify(raw string, now time.Time) (domain.Principal, bool, error) {
	a.mu.Lock()
	v, ok := a.verified[raw]
	a.mu.Unlock()
	if ok && now.Before(v.expires) {
		return v.principal, v.demo, nil
	}
	p, demo, expires, err := a.verify(raw, now)
	if err != nil {
		return p, demo, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.verified) >= a.maxVerified {
		for k, v := range a.verified {
			if !now.Before(v.expires) {
				delete(a.verified, k)
			}
		}
		if len(a.verified) >= a.maxVerified {
			clear(a.verified)
		}
	}
	a.verified[raw] = verifiedToken{principal: p, demo: demo, expires: expires}
	return p, demo, nil
}

func (a *Authority) verify(raw string, now time.Time) (domain.Principal, bool, time.Time, error) {
	tok, err := jwt.Parse([]byte(raw),
		jwt.WithKeySet(a.public),
		jwt.WithValidate(true),
		jwt.WithIssuer(a.issuer),
		jwt.WithAudience(audience),
		jwt.WithClock(jwt.ClockFunc(func() time.Time { return now })),
		jwt.WithAcceptableSkew(30*time.Second),
		jwt.WithRequiredClaim("org"),
		jwt.WithRequiredClaim("role"),
	)
	if err != nil {
		return domain.Principal{}, false, time.Time{}, err
	}
	claim := func(name string) string {
		v, _ := tok.PrivateClaims()[name].(string)
		return v
	}
	p := domain.Principal{
		Subject:        tok.Subject(),
		OrganizationID: claim("org"),
		Role:           domain.Role(claim("role")),
		AirlineCode:    claim("airline"),
		AWBPrefix:      claim("awbPrefix"),
	}
	if !p.Role.Valid() || p.Subject == "" || p.OrganizationID == "" {
		return domain.Principal{}, false, time.Time{}, errors.New("token lacks a subject, organisation or role")
	}
	demo, _ := tok.PrivateClaims()["demo"].(bool)
	return p, demo, tok.Expiration(), nil
}

// JWKS is the public key set, for clients that verify tokens themselves.
func (a *Authority) JWKS() jwk.Set { return a.public }
