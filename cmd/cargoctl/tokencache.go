package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tokenCache keeps the access tokens cargoctl is given, one per server,
// client and secret, for the commands after: every command needs a
// token, and the token endpoint takes 20 requests a minute of a client
// from one address, so a script of admin commands waited a minute every
// twenty. The tokens are kept in $XDG_RUNTIME_DIR/cargoctl, which only its
// user may read and which is cleared at logout; without XDG_RUNTIME_DIR,
// or with CARGOCTL_TOKEN_CACHE=off, none is kept.
type tokenCache struct {
	dir string // "": none is kept
}

func tokenCacheOf(getenv func(string) string) tokenCache {
	runtime := getenv("XDG_RUNTIME_DIR")
	if runtime == "" || strings.EqualFold(getenv("CARGOCTL_TOKEN_CACHE"), "off") {
		return tokenCache{}
	}
	return tokenCache{dir: filepath.Join(runtime, "cargoctl")}
}

// keptToken is a token as the cache keeps it.
type keptToken struct {
	AccessToken string    `json:"accessToken"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// tokenMargin is how long a kept token must still be good for to be
// used: a command that starts with it should not see it run out.
const tokenMargin = time.Minute

// file is where the token of client id at base, with secret, is kept. Its
// name is a digest: the secret is in no file, and a new secret does not
// find the token of the old.
func (c tokenCache) file(base, id, secret string) string {
	sum := sha256.Sum256([]byte(base + "\x00" + id + "\x00" + secret))
	return filepath.Join(c.dir, "token-"+hex.EncodeToString(sum[:16]))
}

// private reports whether the cache's directory is one that no one but
// its owner may read or write, and no link to elsewhere: a directory others
// may write to could be given a token that is not this client's.
func (c tokenCache) private() bool {
	fi, err := os.Lstat(c.dir)
	return err == nil && fi.IsDir() && fi.Mode().Perm()&0o077 == 0
}

// get returns the token kept in file if it is good for tokenMargin more,
// else "".
func (c tokenCache) get(file string, now time.Time) string {
	if c.dir == "" || !c.private() {
		return ""
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	var t keptToken
	if json.Unmarshal(b, &t) != nil || t.ExpiresAt.Before(now.Add(tokenMargin)) {
		return ""
	}
	return t.AccessToken
}

// put keeps a token in file. A token that cannot be kept is no error: the
// next command gets one of its own.
func (c tokenCache) put(file, token string, expiresAt time.Time) {
	if c.dir == "" {
		return
	}
	b, err := json.Marshal(keptToken{AccessToken: token, ExpiresAt: expiresAt})
	if err != nil || os.MkdirAll(c.dir, 0o700) != nil || !c.private() {
		return
	}
	tmp, err := os.CreateTemp(c.dir, ".token-*") // 0600
	if err != nil {
		return
	}
	_, err = tmp.Write(b)
	if err = errors.Join(err, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), file) != nil {
		os.Remove(tmp.Name())
	}
}

// forget drops the token kept in file: the server refused it (revoked, or
// signed with a key since replaced).
func (c tokenCache) forget(file string) {
	if c.dir != "" {
		os.Remove(file)
	}
}
