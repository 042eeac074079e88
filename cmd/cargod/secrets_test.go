package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/tokens"
	"github.com/cargostream/cargostream/vault"
)

// testSecretsKey seals the secrets of tests on an external server, where
// replicas share the key through their configuration.
var testSecretsKey = newSecretsKey()

func newSecretsKey() string {
	key := make([]byte, vault.KeySize)
	rand.Read(key)
	return base64.StdEncoding.EncodeToString(key)
}

// withSecrets runs f on the secrets bucket of a stopped cargod's data
// directory.
func withSecrets(t *testing.T, dataDir string, f func(ctx context.Context, bucket *eventstore.Bucket)) {
	t.Helper()
	ctx := context.Background()
	store, err := eventstore.Open(ctx, eventstore.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	bucket, err := store.Bucket(ctx, "secrets", 0)
	if err != nil {
		t.Fatal(err)
	}
	f(ctx, bucket)
}

// storedSecret is a value in the secrets bucket, as stored, and its
// revision.
type storedSecret struct {
	raw      []byte
	revision uint64
}

// storedSecrets reads bucket as anyone who can reach the NATS server
// would.
func storedSecrets(t *testing.T, ctx context.Context, bucket *eventstore.Bucket) map[string]storedSecret {
	t.Helper()
	names, err := bucket.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]storedSecret{}
	for _, name := range names {
		v, revision, _, err := bucket.GetRevision(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		stored[name] = storedSecret{v, revision}
	}
	return stored
}

// rawSecrets reads the secrets bucket of a stopped cargod's data directory
// as anyone who can reach the NATS server would.
func rawSecrets(t *testing.T, dataDir string) map[string][]byte {
	t.Helper()
	raw := map[string][]byte{}
	withSecrets(t, dataDir, func(ctx context.Context, bucket *eventstore.Bucket) {
		for name, s := range storedSecrets(t, ctx, bucket) {
			raw[name] = s.raw
		}
	})
	return raw
}

// openSecrets opens the secrets in the bucket of a stopped cargod's data
// directory with the key in keyFile, as cargod does. A vault seals in
// place a secret it finds in plaintext: the test fails if opening them
// wrote the bucket.
func openSecrets(t *testing.T, dataDir, keyFile string) map[string][]byte {
	t.Helper()
	key, err := vault.ReadKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string][]byte{}
	withSecrets(t, dataDir, func(ctx context.Context, bucket *eventstore.Bucket) {
		before := storedSecrets(t, ctx, bucket)
		v, err := vault.New(bucket, vault.Keys{Current: key}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name := range before {
			secret, err := v.Get(ctx, name, func() ([]byte, error) { return nil, fmt.Errorf("%s is not stored", name) })
			if err != nil {
				t.Fatalf("%s does not open with %s: %v", name, keyFile, err)
			}
			secrets[name] = secret
		}
		after := storedSecrets(t, ctx, bucket)
		var written []string
		for name, s := range after {
			if b, ok := before[name]; !ok || b.revision != s.revision || !bytes.Equal(b.raw, s.raw) {
				written = append(written, name)
			}
		}
		if len(written) > 0 {
			t.Errorf("opening the secrets with %s wrote %v in their bucket: not sealed with that key", keyFile, written)
		}
	})
	return secrets
}

// TestTheSecretsInJetStreamAreSealed: the signing and webhook keys that
// cargod generates are sealed in their bucket with the key file in the
// data directory, and a restart opens them again: tokens issued before
// are still good.
func TestTheSecretsInJetStreamAreSealed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	jwks := s.do(t, request{method: "GET", path: "/.well-known/jwks.json"}).body
	tok := s.demoToken(t, "demo-forwarder")
	s.stop()

	keyFile := filepath.Join(dir, secretsKeyFile)
	if info, err := os.Stat(keyFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want one only its owner may read", err, info)
	}
	raw := rawSecrets(t, dir)
	secrets := openSecrets(t, dir, keyFile)
	for _, name := range []string{"token-signing-key", "webhook-key"} {
		secret := secrets[name]
		if len(secret) < 32 || bytes.Contains(raw[name], secret) || bytes.Contains(raw[name], []byte("PRIVATE KEY")) {
			t.Errorf("%s is stored as %q: the plaintext shows", name, raw[name])
		}
	}

	again := startServer(t, dir, nil)
	if got := again.do(t, request{method: "GET", path: "/.well-known/jwks.json"}).body; !bytes.Equal(got, jwks) {
		t.Errorf("after a restart the JWKS is %s, before %s", got, jwks)
	}
	if r := again.do(t, request{method: "GET", path: "/api/usage", token: tok}); r.status != 200 {
		t.Errorf("a token issued before the restart: %d %s", r.status, r.body)
	}
}

// A stream restored without its secrets bucket has subscriptions whose
// secrets the lost webhook key sealed: the start stops, naming the key,
// where it generated a new one and every delivery failed for days, with
// nothing logged above INFO. Given a key, new or old, it starts.
func TestAStartThatWouldReplaceTheWebhookKeyOfTheStreamsSubscriptionsStops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	s.subscribe(t, s.demoToken(t, "demo-forwarder"), newReceiver(t), []string{"quote.created"}, "")
	s.stop()
	withSecrets(t, dir, func(ctx context.Context, bucket *eventstore.Bucket) {
		for name := range storedSecrets(t, ctx, bucket) {
			if err := bucket.Delete(ctx, name); err != nil {
				t.Fatal(err)
			}
		}
	})

	r := startReplica(dir, nil)
	r.stoppedByItself(t)
	if r.err == nil || !strings.HasPrefix(r.err.Error(), "CARGO_WEBHOOK_KEY: the secrets bucket holds no webhook key, but the event stream holds webhook subscriptions") {
		t.Errorf("the start ended with %v, want the webhook key named", r.err)
	}
	if _, ok := rawSecrets(t, dir)["webhook-key"]; ok {
		t.Error("a webhook key was generated all the same")
	}
	startServer(t, dir, map[string]string{"CARGO_WEBHOOK_KEY": newSecretsKey()}).stop()
}

// TestAMissingOrWrongSealingKeyStopsTheStart: a start without the key the
// secrets were sealed with fails saying what to do, and changes nothing;
// the previous key, given as such, lets the secrets be sealed anew.
func TestAMissingOrWrongSealingKeyStopsTheStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noDemo := map[string]string{"CARGO_DEMO": "false"}
	s := startServer(t, dir, noDemo)
	jwks := s.do(t, request{method: "GET", path: "/.well-known/jwks.json"}).body
	s.stop()
	keyFile := filepath.Join(dir, secretsKeyFile)
	oldKey, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	sealed := rawSecrets(t, dir)
	with := func(kv ...string) map[string]string {
		env := map[string]string{"CARGO_DEMO": "false"}
		for i := 0; i < len(kv); i += 2 {
			env[kv[i]] = kv[i+1]
		}
		return env
	}
	newKey := newSecretsKey()

	if err := os.WriteFile(keyFile, []byte(newKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = startFails(t, dir, noDemo)
	if want := "does not open with the sealing key: token-signing-key was sealed with another key"; !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "restore the key file from a backup") || !strings.Contains(err.Error(), keyFile) {
		t.Errorf("a wrong key file: %v", err)
	}
	err = startFails(t, dir, with("CARGO_SECRETS_KEY", newKey))
	if !strings.Contains(err.Error(), "(the key is CARGO_SECRETS_KEY): set the key the secrets were sealed with") ||
		!strings.Contains(err.Error(), "CARGO_SECRETS_PREVIOUS_KEY") {
		t.Errorf("a wrong CARGO_SECRETS_KEY: %v", err)
	}
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	err = startFails(t, dir, noDemo)
	if want := fmt.Sprintf("token-signing-key is sealed, and the key file %s is missing: restore", keyFile); !strings.Contains(err.Error(), want) {
		t.Errorf("no key file: %v, want %q", err, want)
	}
	if _, err := os.Stat(keyFile); err == nil {
		t.Error("a start without the key file made a new one")
	}
	if got := rawSecrets(t, dir); !equalSecrets(got, sealed) {
		t.Errorf("refused starts changed the bucket: %q, before %q", got, sealed)
	}

	// Rotation as the README says: the new key file, the old one as the
	// previous key, and then the new key alone.
	oldFile := keyFile + ".old"
	if err := os.WriteFile(oldFile, oldKey, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte(newKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A previous key that is not the old one is named as such: the
	// advice to give the old one as the previous key misled an operator
	// who had.
	err = startFails(t, dir, with("CARGO_SECRETS_PREVIOUS_KEY", newSecretsKey()))
	if want := "nor with CARGO_SECRETS_PREVIOUS_KEY): set CARGO_SECRETS_PREVIOUS_KEY to the key the secrets were sealed with"; !strings.Contains(err.Error(), want) {
		t.Errorf("a wrong previous key: %v, want %q", err, want)
	}
	env := with("CARGO_SECRETS_PREVIOUS_KEY_FILE", oldFile)
	for range 2 {
		s := startServer(t, dir, env)
		if got := s.do(t, request{method: "GET", path: "/.well-known/jwks.json"}).body; !bytes.Equal(got, jwks) {
			t.Errorf("JWKS with the new key %s, before %s", got, jwks)
		}
		s.stop()
		env = noDemo
	}
	raw := rawSecrets(t, dir)
	for name := range sealed {
		if bytes.Equal(raw[name], sealed[name]) {
			t.Errorf("%s was not sealed anew", name)
		}
	}
	openSecrets(t, dir, keyFile)
}

// A sealing key is replaced as the README says on an installation that
// sets CARGO_SIGNING_KEY and CARGO_WEBHOOK_KEY, and so reads no secret of
// the bucket: the generated keys it kept from before are sealed again all
// the same (they were left sealed with the old key, lost once the operator
// deleted it), and the log says that the previous key can go.
func TestReplacingTheSealingKeySealsAgainTheSecretsNoSettingReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	startServer(t, dir, nil).stop() // generates the signing and webhook keys
	keyFile := filepath.Join(dir, secretsKeyFile)
	oldFile := keyFile + ".old"
	if err := os.Rename(keyFile, oldFile); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte(newSecretsKey()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	signingKey, err := tokens.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	r := startReplica(dir, map[string]string{"CARGO_SIGNING_KEY": string(signingKey), "CARGO_WEBHOOK_KEY": newSecretsKey(),
		"CARGO_SECRETS_PREVIOUS_KEY_FILE": oldFile, "CARGO_LOG_LEVEL": "info"})
	r.base(t)
	r.stop()
	<-r.done
	if r.err != nil {
		t.Fatalf("cargod ended with %v", r.err)
	}
	if want := `"msg":"vault: every secret kept in JetStream is sealed with the current key: CARGO_SECRETS_PREVIOUS_KEY can be removed","secrets":2`; !strings.Contains(r.stderr.String(), want) {
		t.Errorf("the log does not say %s:\n%s", want, r.stderr.String())
	}
	secrets := openSecrets(t, dir, keyFile)
	if len(secrets) != 2 {
		t.Errorf("the bucket holds %d secrets, want the signing and webhook keys", len(secrets))
	}
}

// A webhook key given with a previous key that is not the one that sealed
// the subscriptions' secrets stops the start, naming the setting: started,
// every delivery to them failed, retried for days with nothing logged above
// debug. Without a previous key (the old one dropped once its subscriptions
// were registered again, or forgotten), it starts, and warns of them.
func TestAWebhookKeyThatOpensNoSubscriptionIsNamedAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oldKey, newKey := newSecretsKey(), newSecretsKey()
	s := startServer(t, dir, map[string]string{"CARGO_WEBHOOK_KEY": oldKey})
	id := s.subscribe(t, s.demoToken(t, "demo-forwarder"), newReceiver(t), []string{"quote.created"}, "")
	s.stop()
	const warning = `"msg":"webhook subscriptions whose secret opens with neither CARGO_WEBHOOK_KEY nor CARGO_WEBHOOK_PREVIOUS_KEY`
	tests := []struct {
		name     string
		previous string // CARGO_WEBHOOK_PREVIOUS_KEY
		refused  bool
		warned   bool
	}{
		{name: "a wrong previous key is refused", previous: newSecretsKey(), refused: true},
		{name: "no previous key starts and warns", warned: true},
		{name: "the key that sealed them as the previous key starts without a warning", previous: oldKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"CARGO_WEBHOOK_KEY": newKey, "CARGO_LOG_LEVEL": "warn"}
			if tt.previous != "" {
				env["CARGO_WEBHOOK_PREVIOUS_KEY"] = tt.previous
			}
			if tt.refused {
				err := startFails(t, dir, env)
				if !strings.HasPrefix(err.Error(), "CARGO_WEBHOOK_PREVIOUS_KEY: the secrets of 1 webhook subscriptions open with neither") ||
					!strings.Contains(err.Error(), id+" (demo-forwarder)") {
					t.Errorf("the start ended with %v, want the previous key and the subscription named", err)
				}
				return
			}
			r := startReplica(dir, env)
			r.base(t)
			r.stop()
			<-r.done
			if r.err != nil {
				t.Fatalf("cargod ended with %v", r.err)
			}
			if warned := strings.Contains(r.stderr.String(), warning) && strings.Contains(r.stderr.String(), id); warned != tt.warned {
				t.Errorf("warned of the subscription: %v, want %v; the log:\n%s", warned, tt.warned, r.stderr.String())
			}
		})
	}
}

// A key file that others may read (restored from a backup store, or
// written by hand, as 0644) is warned of at start: cargod writes them
// 0600, and said nothing of one that is not.
func TestAKeyFileOthersMayReadIsWarnedOfAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const warning = `"msg":"cargod: a key file may be read by others than its owner: chmod 600 it"`
	tests := []struct {
		name string
		mode os.FileMode
		warn bool
	}{
		{"a key file only its owner may read is not warned of", 0o600, false},
		{"a key file the owner's group may read is", 0o640, true},
		{"a key file everyone may read is", 0o644, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			listen := map[string]string{"CARGO_NATS_LISTEN": "127.0.0.1:0", "CARGO_LOG_LEVEL": "warn"}
			startServer(t, dir, listen).stop() // writes both key files
			for _, name := range []string{secretsKeyFile, eventstore.ListenSeedFile} {
				if err := os.Chmod(filepath.Join(dir, name), tt.mode); err != nil {
					t.Fatal(err)
				}
			}
			r := startReplica(dir, listen)
			r.base(t)
			r.stop()
			<-r.done
			for _, name := range []string{secretsKeyFile, eventstore.ListenSeedFile} {
				file := fmt.Sprintf(`"file":%q`, filepath.Join(dir, name))
				if warned := strings.Contains(r.stderr.String(), warning+","+file); warned != tt.warn {
					t.Errorf("%s (mode %#o) warned of: %v, want %v; the log:\n%s", name, tt.mode, warned, tt.warn, r.stderr.String())
				}
			}
		})
	}
}

// A webhook key's rotation as the README says: with the old key as the
// previous one, each start says which live subscriptions still need it,
// and once their owners have registered again and deleted them, that it
// can be removed; where the operator had to tell that from createdAt.
func TestAWebhookKeyRotationSaysWhenThePreviousKeyCanGo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oldKey, newKey := newSecretsKey(), newSecretsKey()
	s := startServer(t, dir, map[string]string{"CARGO_WEBHOOK_KEY": oldKey})
	fwd := s.demoToken(t, "demo-forwarder")
	old := s.subscribe(t, fwd, newReceiver(t), []string{"quote.created"}, "")
	s.stop()
	rotating := map[string]string{"CARGO_WEBHOOK_KEY": newKey, "CARGO_WEBHOOK_PREVIOUS_KEY": oldKey, "CARGO_LOG_LEVEL": "info"}
	const (
		needed    = `"msg":"live webhook subscriptions sealed with CARGO_WEBHOOK_PREVIOUS_KEY, which it must open until they are registered again","subscriptions":1`
		removable = `"msg":"no live webhook subscription is sealed with CARGO_WEBHOOK_PREVIOUS_KEY: it can be removed"`
	)
	r := startReplica(dir, rotating)
	again := &testServer{base: r.base(t), dataDir: dir, doc: s.doc}
	// Lines at info are written out within 0.1 s: wait for "cargod ready".
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(r.stderr.String(), `"msg":"cargod ready"`) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if log := r.stderr.String(); !strings.Contains(log, needed) || !strings.Contains(log, old) || strings.Contains(log, removable) {
		t.Errorf("the start with the old subscription logged:\n%s\nwant %s, naming %s", log, needed, old)
	}
	fwd = again.demoToken(t, "demo-forwarder")
	again.subscribe(t, fwd, newReceiver(t), []string{"quote.created"}, "")
	if r := again.do(t, request{method: "DELETE", path: "/api/webhooks/" + old, token: fwd}); r.status != 204 {
		t.Fatalf("delete = %d %s", r.status, r.body)
	}
	r.stop()
	<-r.done
	r = startReplica(dir, rotating)
	r.base(t)
	r.stop()
	<-r.done
	if log := r.stderr.String(); !strings.Contains(log, removable) || strings.Contains(log, needed) {
		t.Errorf("the start once the old subscription was registered again logged:\n%s\nwant %s", log, removable)
	}
}

func equalSecrets(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestPlaintextSecretsOfAnEarlierVersionAreSealed starts cargod on a data
// directory whose secrets an earlier version stored in plaintext: they are
// sealed in place, and are the same keys.
func TestPlaintextSecretsOfAnEarlierVersionAreSealed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	signingKey, err := tokens.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	webhookKey := make([]byte, 32)
	rand.Read(webhookKey)
	ctx := context.Background()
	store, err := eventstore.Open(ctx, eventstore.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := store.Bucket(ctx, "secrets", 0)
	if err == nil {
		err = bucket.Put(ctx, "token-signing-key", signingKey)
	}
	if err == nil {
		err = bucket.Put(ctx, "webhook-key", webhookKey)
	}
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	authority, err := tokens.New(signingKey, "cargostream", 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(authority.JWKS())

	s := startServer(t, dir, map[string]string{"CARGO_DEMO": "false"})
	if got, _ := json.Marshal(s.jwks(t)); !bytes.Equal(got, want) {
		t.Errorf("JWKS %s, want that of the earlier signing key %s", got, want)
	}
	s.stop()
	raw := rawSecrets(t, dir)
	secrets := openSecrets(t, dir, filepath.Join(dir, secretsKeyFile))
	for name, plain := range map[string][]byte{"token-signing-key": signingKey, "webhook-key": webhookKey} {
		if bytes.Contains(raw[name], plain) {
			t.Errorf("%s is still in plaintext", name)
		}
		if got := secrets[name]; !bytes.Equal(got, plain) {
			t.Errorf("%s opens to %q, want the earlier %q", name, got, plain)
		}
	}
}

// TestAnExternalServerNeedsTheSealingKeyInTheConfiguration: replicas on an
// external server keep no key file, since each has a data directory of
// its own; without CARGO_SECRETS_KEY the start fails, saying so.
func TestAnExternalServerNeedsTheSealingKeyInTheConfiguration(t *testing.T) {
	t.Parallel()
	port := natstest.FreePorts(t, 1)[0]
	natstest.StartServer(t, port)
	dir := t.TempDir()
	err := startFails(t, dir, map[string]string{"CARGO_NATS_URL": fmt.Sprintf("nats://127.0.0.1:%d", port), "CARGO_NATS_REPLICAS": "1"})
	if !strings.Contains(err.Error(), "with an external NATS server, set CARGO_SECRETS_KEY") {
		t.Errorf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, secretsKeyFile)); err == nil {
		t.Error("a key file in the data directory of a replica on an external server")
	}
}
