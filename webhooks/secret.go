// Package webhooks delivers events to subscribers' URLs: signed per the
// Standard Webhooks specification, first as soon as the event is stored,
// then retried with backoff until delivered or dead-lettered, from a
// durable work queue shared by all replicas. The events and the queue come
// through its Events and Queue interfaces.
package webhooks

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cargostream/cargostream/domain"
)

// NewSecret returns a new signing secret: whsec_ and 32 random bytes in
// base64, the form Standard Webhooks libraries take.
func NewSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// ValidSecret says what is wrong with a secret a subscriber chose, or "".
// A whsec_ secret must carry 24 to 64 bytes; any other string of 16 to
// 128 characters is used as it is (see the README for verifying those).
func ValidSecret(s string) string {
	if rest, ok := strings.CutPrefix(s, "whsec_"); ok {
		b, err := base64.StdEncoding.DecodeString(rest)
		if err != nil || len(b) < 24 || len(b) > 64 {
			return "a whsec_ secret must be whsec_ and 24 to 64 bytes in base64"
		}
		return ""
	}
	// Counted in characters, as the schema's maxLength counts them: its
	// UTF-8 bytes, the key, may be more.
	if n := utf8.RuneCountInString(s); n < 16 || n > 128 {
		return "must be whsec_<base64>, or a plain string of 16 to 128 characters"
	}
	// Sixteen spaces are sixteen characters, and a key anyone guesses.
	if strings.TrimSpace(s) == "" {
		return "must not be white space alone: leave it out for a generated one"
	}
	return ""
}

// key is the HMAC key of a secret: the decoded bytes of a whsec_ secret,
// or the bytes of a plain one.
func key(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if b, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return b
		}
	}
	return []byte(secret)
}

// Sign is the webhook-signature header of a message: v1, and the base64
// HMAC-SHA256 of "id.timestamp.body".
func Sign(secret, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key(secret))
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Sealer encrypts secrets for storage (AES-256-GCM): the service must be
// able to sign with them, so they cannot be hashed. It seals with its key,
// and opens with it or with the key being replaced, if any: the secrets
// are sealed in the events that registered them, which stay as they are.
type Sealer struct {
	aead     cipher.AEAD
	previous cipher.AEAD // nil: none
}

// NewSealer takes a 32-byte key, and the 32-byte key it replaces, if any.
func NewSealer(k, previous []byte) (*Sealer, error) {
	aead, err := newAEAD(k)
	if err != nil {
		return nil, err
	}
	s := &Sealer{aead: aead}
	if len(previous) > 0 {
		if s.previous, err = newAEAD(previous); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func newAEAD(k []byte) (cipher.AEAD, error) {
	if len(k) != 32 {
		return nil, errors.New("webhooks: the secret key must be 32 bytes")
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Seal encrypts a secret.
func (s *Sealer) Seal(secret string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, []byte(secret), nil)
}

// Open decrypts a sealed secret, and says whether it was sealed with the
// key being replaced.
func (s *Sealer) Open(sealed []byte) (secret string, previous bool, err error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", false, errors.New("webhooks: sealed secret too short")
	}
	b, err := s.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil && s.previous != nil {
		if b, perr := s.previous.Open(nil, sealed[:n], sealed[n:], nil); perr == nil {
			return string(b), true, nil
		}
	}
	return string(b), false, err
}

// Check sorts the live subscriptions of subs by the key their secret, and
// the user information of their URL, open with: previous, those that need
// the key being replaced, which cannot go while there are any; unopenable,
// those that open with neither, to which every attempt to deliver fails,
// retried for days with nothing logged above debug, however wrong the key
// given.
func (s *Sealer) Check(subs []domain.Webhook) (previous, unopenable []domain.Webhook) {
	for _, w := range subs {
		if !w.Live() {
			continue
		}
		_, old, err := s.Open(w.SealedSecret)
		if err == nil && len(w.SealedUserInfo) > 0 {
			var oldUserInfo bool
			_, oldUserInfo, err = s.Open(w.SealedUserInfo)
			old = old || oldUserInfo
		}
		switch {
		case err != nil:
			unopenable = append(unopenable, w)
		case old:
			previous = append(previous, w)
		}
	}
	return previous, unopenable
}
