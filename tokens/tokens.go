// Package tokens issues and verifies the service's access tokens.
//
// A token is a JWT signed with ES256 (ECDSA P-256): a small key and a short
// signature, and a public key that clients and every replica can check
// tokens with, published as a JWKS. It names its caller in its claims (sub,
// org, role, and airline and awbPrefix for airlines) so that a request is
// authenticated without a lookup, and marks demo identities with demo, so
// that their tokens are refused once demo mode is off. A token lives for
// the configured lifetime (an hour by default) unless it is revoked: Verify
// returns its id (jti) and issue time, which the caller checks against the
// revocations every replica shares.
//
// A token has exactly one spelling, the one Issue writes (RFC 8725): the
// compact serialisation, three base64url segments without padding; a header
// with alg ES256 and typ JWT; a low-S signature (Go's ECDSA signer returns s
// or n−s at random, and Sign keeps the lower); and an exp claim. Verify
// refuses every other spelling before the JWT library sees it, because the
// library also takes padding, the +/ alphabet, line breaks and the JSON
// serialisation, and ECDSA verification takes either s. One spelling keeps a
// token's identity its exact string, for the verified-token cache and for
// anything that ever counts or remembers tokens. Tokens issued before this
// check have a high s about half the time: after an upgrade they are refused,
// saying so, and their clients get a new token.
package tokens

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
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

// tokenType is the typ header of every token: the JWT library writes JWT,
// and tokens issued before Verify checked typ carry it too, so requiring it
// refuses none of them.
const tokenType = "JWT"

// ClockSkew is how far the clocks of the replicas may be apart: a token is
// accepted this long past its exp and before its iat and nbf.
const ClockSkew = 30 * time.Second

// An ES256 signature is r and s, 32 bytes each (RFC 7518 §3.4).
const signatureSize = 64

// p256HalfOrder is the largest s of a low-S signature: s and n−s both
// verify, and only the lower is the token's spelling.
var (
	p256Order     = elliptic.P256().Params().N
	p256HalfOrder = new(big.Int).Rsh(p256Order, 1)
)

// The refusals that tell the client why, beyond "invalid or expired": the
// token is not in the form Issue writes, and a client that respells or
// builds tokens can fix that.
var (
	errNotCompact = domain.Errorf(domain.InvalidToken, "the access token must be three base64url segments without padding or whitespace, as issued")
	errWrongType  = domain.Errorf(domain.InvalidToken, "the access token's typ must be JWT, as issued")
	errHighS      = domain.Errorf(domain.InvalidToken, "the access token's signature must be in low-S form, as issued: request a new token")
	errNoExpiry   = domain.Errorf(domain.InvalidToken, "the access token has no expiry (exp)")
	// An expired token is the commonest refusal, and the one a client
	// cures by itself: "invalid or expired" left it to guess whether its
	// credentials, the signing key or the clock were wrong. Only a token
	// whose signature checked out is said to be expired.
	errExpired = domain.Errorf(domain.InvalidToken, "the access token has expired: get a new one (POST /api/auth/token)")
)

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
	verified    map[string]Claims
	maxVerified int
}

// Claims are what a verified token says.
type Claims struct {
	Principal domain.Principal
	Demo      bool // issued to a demo identity
	ID        string
	IssuedAt  time.Time
	Expires   time.Time
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

// ParseSigningKey reads a signing key: an ECDSA P-256 key in PEM
// (PKCS#8).
func ParseSigningKey(keyPEM []byte) (*ecdsa.PrivateKey, error) {
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
	return ec, nil
}

// New loads the PEM signing key. The key id is the key's RFC 7638
// thumbprint, so every replica with the same key names it the same.
func New(keyPEM []byte, issuer string, ttl time.Duration) (*Authority, error) {
	ec, err := ParseSigningKey(keyPEM)
	if err != nil {
		return nil, err
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
	return &Authority{private: priv, public: set, issuer: issuer, ttl: ttl, verified: map[string]Claims{}, maxVerified: maxVerified}, nil
}

// TTL is the lifetime of the tokens Issue issues.
func (a *Authority) TTL() time.Duration { return a.ttl }

// Issue returns a signed token for p and its lifetime.
func (a *Authority) Issue(p domain.Principal, demo bool, now time.Time) (string, time.Duration, error) {
	b := jwt.NewBuilder().
		Issuer(a.issuer).
		Audience([]string{audience}).
		Subject(p.Subject).
		IssuedAt(now).
		NotBefore(now).
		Expiration(now.Add(a.ttl)).
		JwtID(tokenID(now)).
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
	signed, err := Sign(tok, a.private)
	return signed, a.ttl, err
}

// Sign signs tok with key in the one spelling Verify accepts: compact,
// ES256, typ JWT, with the low s of the two that verify.
func Sign(tok jwt.Token, key jwk.Key) (string, error) {
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256, key))
	if err != nil {
		return "", err
	}
	dot := strings.LastIndexByte(string(signed), '.')
	signingInput, encoded := string(signed[:dot]), string(signed[dot+1:])
	sig, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil || len(sig) != signatureSize {
		return "", fmt.Errorf("signing: unexpected ES256 signature %q", encoded)
	}
	if s := new(big.Int).SetBytes(sig[32:]); s.Cmp(p256HalfOrder) > 0 {
		s.Sub(p256Order, s).FillBytes(sig[32:])
	}
	return signingInput + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// Verify checks a token's spelling, signature, issuer, audience and times,
// and returns what it says. An error that is a *domain.Error tells the
// client why; any other means the token is invalid or expired. Whether it
// was revoked is the caller's to check.
func (a *Authority) Verify(raw string, now time.Time) (Claims, error) {
	a.mu.Lock()
	v, ok := a.verified[raw]
	a.mu.Unlock()
	if ok && now.Before(v.Expires) {
		return v, nil
	}
	c, err := a.verify(raw, now)
	if err != nil {
		return Claims{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.verified) >= a.maxVerified {
		for k, v := range a.verified {
			if !now.Before(v.Expires) {
				delete(a.verified, k)
			}
		}
		if len(a.verified) >= a.maxVerified {
			clear(a.verified)
		}
	}
	a.verified[raw] = c
	return c, nil
}

func (a *Authority) verify(raw string, now time.Time) (Claims, error) {
	if err := checkSpelling(raw); err != nil {
		return Claims{}, err
	}
	tok, err := jwt.Parse([]byte(raw),
		jwt.WithKeySet(a.public),
		jwt.WithValidate(true),
		jwt.WithIssuer(a.issuer),
		jwt.WithAudience(audience),
		jwt.WithClock(jwt.ClockFunc(func() time.Time { return now })),
		jwt.WithAcceptableSkew(ClockSkew),
		jwt.WithRequiredClaim("org"),
		jwt.WithRequiredClaim("role"),
	)
	if errors.Is(err, jwt.ErrTokenExpired()) {
		return Claims{}, errExpired
	}
	if err != nil {
		return Claims{}, err
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
		return Claims{}, errors.New("token lacks a subject, organisation or role")
	}
	if tok.Expiration().IsZero() {
		return Claims{}, errNoExpiry
	}
	// A token lives no longer than the lifetime configured now, whatever
	// its exp says: one issued before CARGO_TOKEN_TTL was shortened would
	// otherwise outlive the revocation of its jti, which is remembered
	// only for the lifetime configured now.
	iat := issuedAt(tok)
	expires := tok.Expiration()
	if end := iat.Add(a.ttl); end.Before(expires) {
		expires = end
	}
	if !now.Before(expires.Add(ClockSkew)) {
		return Claims{}, errExpired
	}
	demo, _ := tok.PrivateClaims()["demo"].(bool)
	return Claims{Principal: p, Demo: demo, ID: tok.JwtID(), IssuedAt: iat, Expires: expires}, nil
}

// tokenID is a token's jti: a UUIDv7 (RFC 9562), whose first 48 bits are
// the millisecond it was issued. Revocations compare issue times, and
// iat has only whole seconds: a token issued in the second of a
// revocation, before it or after, could not be told apart.
func tokenID(now time.Time) string {
	var id uuid.UUID
	binary.BigEndian.PutUint64(id[:8], uint64(now.UnixMilli())<<16)
	rand.Read(id[6:])
	id[6] = 0x70 | id[6]&0x0f // version 7
	id[8] = 0x80 | id[8]&0x3f // the RFC's variant
	return id.String()
}

// issuedAt is when tok was issued: the millisecond of its jti, or for a
// token issued before jtis told it, its iat.
func issuedAt(tok jwt.Token) time.Time {
	if id, err := uuid.Parse(tok.JwtID()); err == nil && id.Version() == 7 {
		sec, nsec := id.Time().UnixTime()
		return time.Unix(sec, nsec)
	}
	return tok.IssuedAt()
}

// checkSpelling refuses raw unless it is spelled as Sign spells tokens. It
// reads the raw string itself: the JWT library decodes leniently.
func checkSpelling(raw string) error {
	segments := strings.Split(raw, ".")
	if len(segments) != 3 {
		return errNotCompact
	}
	var decoded [3][]byte
	for i, segment := range segments {
		if strings.TrimLeft(segment, base64URLAlphabet) != "" {
			return errNotCompact
		}
		// Strict refuses non-zero unused bits in the last character, a
		// second spelling of the same bytes; the alphabet check above has
		// already refused the line breaks that Go's decoder skips.
		b, err := base64.RawURLEncoding.Strict().DecodeString(segment)
		if err != nil {
			return fmt.Errorf("segment %d: %w", i+1, err)
		}
		decoded[i] = b
	}
	// A map, not a struct: encoding/json would match "TYP" to a Typ field,
	// and the JWT library would not.
	var header map[string]any
	if err := json.Unmarshal(decoded[0], &header); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	if header["alg"] != string(jwa.ES256) {
		return fmt.Errorf("alg %v", header["alg"])
	}
	if header["typ"] != tokenType {
		return errWrongType
	}
	if len(decoded[2]) != signatureSize {
		return fmt.Errorf("signature of %d bytes", len(decoded[2]))
	}
	if new(big.Int).SetBytes(decoded[2][32:]).Cmp(p256HalfOrder) > 0 {
		return errHighS
	}
	return nil
}

const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// ID is the id (jti) a token names, read without verifying it: for tools
// that revoke a token given whole, which the service checks no further
// than that it is an id.
func ID(raw string) (string, error) {
	tok, err := jwt.ParseInsecure([]byte(raw))
	if err != nil {
		return "", fmt.Errorf("not a token: %w", err)
	}
	if tok.JwtID() == "" {
		return "", errors.New("the token has no id (jti)")
	}
	return tok.JwtID(), nil
}

// JWKS is the public key set, for clients that verify tokens themselves.
func (a *Authority) JWKS() jwk.Set { return a.public }
