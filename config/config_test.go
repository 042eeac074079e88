package config

import (
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/tokens"
)

func TestLoad(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "admin")
	os.WriteFile(secretFile, []byte("from-a-file-secret\n"), 0o600)
	signingKeyFile := filepath.Join(t.TempDir(), "signing.pem")
	key, _ := tokens.GenerateSigningKey()
	os.WriteFile(signingKeyFile, key, 0o600)
	// A secret file left empty, as by a failed "openssl rand > file".
	emptyFile := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(emptyFile, []byte("\n"), 0o600)
	// A data directory's secrets.key can be given as CARGO_SECRETS_KEY_FILE.
	keyFile := filepath.Join(t.TempDir(), "secrets.key")
	os.WriteFile(keyFile, []byte("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n"), 0o600)
	// One whose content is no key.
	badKeyFile := filepath.Join(t.TempDir(), "bad.key")
	os.WriteFile(badKeyFile, []byte("not a key\n"), 0o600)
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		check func(t *testing.T, c Config)
		err   string
	}{
		{name: "defaults", check: func(t *testing.T, c Config) {
			if c.Addr != "127.0.0.1:8080" || c.DataDir != "./data" || c.NATSURL != "" || !c.Demo || c.TokenTTL != time.Hour ||
				c.NATSReplicas != 1 || c.NATSStream != "CARGO" || c.LogLevel != slog.LevelInfo || c.PasswordHashCost != 10 ||
				c.MaxBodyBytes != 1<<20 || c.MaxUploadBytes != 20<<20 || c.DocumentQuota != 10<<30 {
				t.Errorf("defaults = %+v", c)
			}
		}},
		{name: "external NATS turns demo off and replicates", env: map[string]string{"CARGO_NATS_URL": "nats://10.0.0.1:4222"},
			check: func(t *testing.T, c Config) {
				if c.Demo || c.NATSReplicas != 3 {
					t.Errorf("demo %v replicas %d", c.Demo, c.NATSReplicas)
				}
			}},
		// The demo credentials are public, an admin's among them: a port
		// others reach (the image's :8080) gets them only when asked.
		{name: "demo is off by default on an address others reach", env: map[string]string{"CARGO_ADDR": ":8080"},
			check: func(t *testing.T, c Config) {
				if c.Demo {
					t.Error("demo on by default on :8080")
				}
			}},
		{name: "demo is on by default on localhost", env: map[string]string{"CARGO_ADDR": "localhost:8080"},
			check: func(t *testing.T, c Config) {
				if !c.Demo {
					t.Error("demo off by default on localhost:8080")
				}
			}},
		{name: "demo can be asked for on an address others reach", env: map[string]string{"CARGO_ADDR": "0.0.0.0:8080", "CARGO_DEMO": "true"},
			check: func(t *testing.T, c Config) {
				if !c.Demo {
					t.Error("demo off on 0.0.0.0:8080 though asked for")
				}
			}},
		{name: "demo can be asked for with external NATS", env: map[string]string{"CARGO_NATS_URL": "nats://x:4222", "CARGO_DEMO": "true", "CARGO_NATS_REPLICAS": "1"},
			check: func(t *testing.T, c Config) {
				if !c.Demo || c.NATSReplicas != 1 {
					t.Errorf("demo %v replicas %d", c.Demo, c.NATSReplicas)
				}
			}},
		{name: "a flag beats the environment", env: map[string]string{"CARGO_ADDR": "127.0.0.1:1"}, args: []string{"--addr", "127.0.0.1:2"},
			check: func(t *testing.T, c Config) {
				if c.Addr != "127.0.0.1:2" {
					t.Errorf("addr = %s", c.Addr)
				}
			}},
		{name: "secrets given as flags are named, for a warning", env: map[string]string{"CARGO_WEBHOOK_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="},
			args: []string{"--admin-secret", "a-secret-on-the-command-line", "--addr", "127.0.0.1:2", "--secrets-key=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="},
			check: func(t *testing.T, c Config) {
				if want := []string{"--admin-secret", "--secrets-key"}; !slices.Equal(c.SecretFlags, want) {
					t.Errorf("secret flags = %v, want %v: not the address, nor the key from the environment", c.SecretFlags, want)
				}
			}},
		{name: "an empty secret flag names nothing", args: []string{"--admin-secret="}, check: func(t *testing.T, c Config) {
			if len(c.SecretFlags) != 0 {
				t.Errorf("secret flags = %v, want none", c.SecretFlags)
			}
		}},
		{name: "secret from a file", env: map[string]string{"CARGO_ADMIN_SECRET_FILE": secretFile},
			check: func(t *testing.T, c Config) {
				if c.AdminSecret != "from-a-file-secret" {
					t.Errorf("secret = %q", c.AdminSecret)
				}
			}},
		{name: "an empty flag leaves the default, as an empty variable does",
			args: []string{"--addr=", "--token-ttl=", "--metering=", "--shutdown-timeout=", "--webhook-retry-schedule=", "--rate-limit-per-minute="},
			check: func(t *testing.T, c Config) {
				if c.Addr != "127.0.0.1:8080" || c.TokenTTL != time.Hour || !c.Metering || c.ShutdownTimeout != 20*time.Second ||
					len(c.WebhookSchedule) != 9 || c.RateLimits.PerMinute != 600 {
					t.Errorf("addr %q, token TTL %s, metering %v, shutdown timeout %s, retry schedule %v, rate limit per minute %d",
						c.Addr, c.TokenTTL, c.Metering, c.ShutdownTimeout, c.WebhookSchedule, c.RateLimits.PerMinute)
				}
			}},
		{name: "an empty secret file", env: map[string]string{"CARGO_ADMIN_SECRET_FILE": emptyFile}, err: "CARGO_ADMIN_SECRET_FILE: " + emptyFile + " is empty"},
		{name: "an empty sealing key file", env: map[string]string{"CARGO_SECRETS_KEY_FILE": emptyFile}, err: "CARGO_SECRETS_KEY_FILE"},
		{name: "a sealing key file that holds no key names the file's variable", env: map[string]string{"CARGO_SECRETS_KEY_FILE": badKeyFile},
			err: "CARGO_SECRETS_KEY_FILE (" + badKeyFile + "): "},
		{name: "NATS credentials without an external server", env: map[string]string{"CARGO_NATS_CREDS": "/run/secrets/nats.creds"},
			err: "CARGO_NATS_CREDS is set without CARGO_NATS_URL"},
		{name: "a port of the embedded server others reach", env: map[string]string{"CARGO_NATS_LISTEN": "0.0.0.0:4222"},
			err: `CARGO_NATS_LISTEN (--nats-listen): "0.0.0.0:4222" is not a loopback host:port`},
		{name: "a port of the embedded server without a port", env: map[string]string{"CARGO_NATS_LISTEN": "127.0.0.1"}, err: "CARGO_NATS_LISTEN (--nats-listen)"},
		{name: "a port of the embedded server out of range", env: map[string]string{"CARGO_NATS_LISTEN": "127.0.0.1:65536"}, err: "CARGO_NATS_LISTEN (--nats-listen)"},
		{name: "a port of the embedded server out of range names the port", env: map[string]string{"CARGO_NATS_LISTEN": "127.0.0.1:-2"},
			err: `CARGO_NATS_LISTEN (--nats-listen): "127.0.0.1:-2" has a port outside 0..65535`},
		{name: "any free port of the embedded server as the NATS server writes it", env: map[string]string{"CARGO_NATS_LISTEN": "127.0.0.1:-1"},
			check: func(t *testing.T, c Config) {
				if c.NATSListen != "127.0.0.1:-1" {
					t.Errorf("listen %q", c.NATSListen)
				}
			}},
		{name: "any free port of the embedded server on localhost", env: map[string]string{"CARGO_NATS_LISTEN": "localhost:0"},
			check: func(t *testing.T, c Config) {
				if c.NATSListen != "localhost:0" {
					t.Errorf("listen %q", c.NATSListen)
				}
			}},
		{name: "stream replicas on the embedded server", env: map[string]string{"CARGO_NATS_REPLICAS": "3"},
			err: "CARGO_NATS_REPLICAS is 3 without CARGO_NATS_URL"},
		{name: "one stream replica on the embedded server, as it keeps", env: map[string]string{"CARGO_NATS_REPLICAS": "1"},
			check: func(t *testing.T, c Config) {
				if c.NATSReplicas != 1 {
					t.Errorf("replicas %d", c.NATSReplicas)
				}
			}},
		{name: "a port of the embedded server with an external one", env: map[string]string{"CARGO_NATS_URL": "nats://10.0.0.1:4222", "CARGO_NATS_LISTEN": "127.0.0.1:4222"},
			err: "CARGO_NATS_LISTEN is set with CARGO_NATS_URL"},
		{name: "the nkey of the embedded server's port with an external server", env: map[string]string{"CARGO_NATS_URL": "nats://10.0.0.1:4222",
			"CARGO_NATS_LISTEN_NKEY": "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"}, err: "CARGO_NATS_LISTEN_NKEY is set with CARGO_NATS_URL"},
		{name: "the nkey of the embedded server's port without the port", env: map[string]string{
			"CARGO_NATS_LISTEN_NKEY": "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"}, err: "CARGO_NATS_LISTEN_NKEY is set without CARGO_NATS_LISTEN"},
		{name: "an admin secret the bootstrap would refuse", env: map[string]string{"CARGO_ADMIN_SECRET": "short"},
			err: "CARGO_ADMIN_SECRET (--admin-secret): must be at least 12 characters"},
		{name: "an admin client id the bootstrap would refuse", env: map[string]string{"CARGO_ADMIN_CLIENT_ID": "ops admin", "CARGO_ADMIN_SECRET": "long-enough-secret"},
			err: "CARGO_ADMIN_CLIENT_ID (--admin-client-id): must be 1 to 64 letters"},
		{name: "NATS URLs as the client takes them", env: map[string]string{"CARGO_NATS_URL": "nats://a.example:4222, tls://u:p@b.example,10.0.0.3"},
			check: func(t *testing.T, c Config) {
				if c.NATSURL != "nats://a.example:4222, tls://u:p@b.example,10.0.0.3" {
					t.Errorf("NATS URL = %q", c.NATSURL)
				}
			}},
		{name: "a NATS URL with a port out of range", env: map[string]string{"CARGO_NATS_URL": "nats://a.example:4222,nats://b.example:422200"},
			err: `CARGO_NATS_URL (--nats-url): "nats://b.example:422200"`},
		{name: "a NATS URL of another protocol", env: map[string]string{"CARGO_NATS_URL": "https://nats.example.com"},
			err: `CARGO_NATS_URL (--nats-url): "https://nats.example.com"`},
		{name: "a NATS URL without a host", env: map[string]string{"CARGO_NATS_URL": "nats://:4222"}, err: "CARGO_NATS_URL"},
		{name: "a NATS URL of a comma alone", env: map[string]string{"CARGO_NATS_URL": " , "}, err: "CARGO_NATS_URL (--nats-url): names no server"},
		{name: "a NATS URL of line breaks alone", env: map[string]string{"CARGO_NATS_URL": "\n,\r\n"}, err: "CARGO_NATS_URL (--nats-url): names no server"},
		{name: "a NATS URL that does not parse", env: map[string]string{"CARGO_NATS_URL": "nats://[::1"}, err: "CARGO_NATS_URL"},
		{name: "a stream name its buckets cannot be named after", env: map[string]string{"CARGO_NATS_STREAM": "CARGO:1"},
			err: `CARGO_NATS_STREAM (--nats-stream): "CARGO:1"`},
		{name: "a stream name that is not one token of a subject", env: map[string]string{"CARGO_NATS_STREAM": "CARGO.1"}, err: "CARGO_NATS_STREAM"},
		{name: "a stream name of letters, digits, - and _", env: map[string]string{"CARGO_NATS_STREAM": "Cargo_test-2"}, check: func(t *testing.T, c Config) {
			if c.NATSStream != "Cargo_test-2" {
				t.Errorf("stream = %q", c.NATSStream)
			}
		}},
		{name: "a signing key that is not PEM", env: map[string]string{"CARGO_SIGNING_KEY": "-----BEGIN PRIVATE KEY-----\nnot a key"},
			err: "CARGO_SIGNING_KEY (--signing-key): signing key: not PEM"},
		{name: "a signing key from a file", env: map[string]string{"CARGO_SIGNING_KEY_FILE": signingKeyFile}, check: func(t *testing.T, c Config) {
			if !strings.HasPrefix(c.SigningKey, "-----BEGIN PRIVATE KEY-----") {
				t.Errorf("signing key = %.30q…", c.SigningKey)
			}
		}},
		{name: "periodic snapshots with snapshots off", env: map[string]string{"CARGO_SNAPSHOTS": "false", "CARGO_SNAPSHOT_EVERY": "100000"},
			err: "CARGO_SNAPSHOT_EVERY is set with CARGO_SNAPSHOTS=false"},
		{name: "the generated webhook key replaced by none", env: map[string]string{"CARGO_WEBHOOK_PREVIOUS_KEY": "generated"},
			err: "CARGO_WEBHOOK_PREVIOUS_KEY is generated without CARGO_WEBHOOK_KEY"},
		{name: "the generated webhook key replaced", env: map[string]string{"CARGO_WEBHOOK_PREVIOUS_KEY": "generated", "CARGO_WEBHOOK_KEY": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="},
			check: func(t *testing.T, c Config) {
				if !c.WebhookPreviousGenerated || len(c.WebhookPrevious) != 0 || len(c.WebhookKey) != 32 {
					t.Errorf("previous generated %t, previous %d bytes, key %d bytes", c.WebhookPreviousGenerated, len(c.WebhookPrevious), len(c.WebhookKey))
				}
			}},
		{name: "a webhook key replaced by itself", env: map[string]string{"CARGO_WEBHOOK_PREVIOUS_KEY": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=",
			"CARGO_WEBHOOK_KEY": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="}, err: "CARGO_WEBHOOK_PREVIOUS_KEY is CARGO_WEBHOOK_KEY"},
		{name: "a previous webhook key that is no key", env: map[string]string{"CARGO_WEBHOOK_PREVIOUS_KEY": "short"}, err: "CARGO_WEBHOOK_PREVIOUS_KEY (--webhook-previous-key)"},
		{name: "secret twice", env: map[string]string{"CARGO_ADMIN_SECRET_FILE": secretFile, "CARGO_ADMIN_SECRET": "x"}, err: "not both"},
		{name: "missing secret file", env: map[string]string{"CARGO_SIGNING_KEY_FILE": "/no/such/file"}, err: "CARGO_SIGNING_KEY_FILE"},
		{name: "bad duration", env: map[string]string{"CARGO_TOKEN_TTL": "soon"}, err: `CARGO_TOKEN_TTL (--token-ttl): "soon" is not a duration`},
		// A number alone is no duration: the value is quoted, to be seen.
		{name: "a duration without its unit", env: map[string]string{"CARGO_SHUTDOWN_TIMEOUT": "30"}, err: `"30" is not a duration such as 30s`},
		{name: "duration out of range", env: map[string]string{"CARGO_TOKEN_TTL": "48h"}, err: "outside"},
		{name: "bad bool", env: map[string]string{"CARGO_DEMO": "maybe"}, err: "CARGO_DEMO"},
		{name: "bad level", env: map[string]string{"CARGO_LOG_LEVEL": "loud"}, err: `CARGO_LOG_LEVEL (--log-level): "loud" is not debug, info, warn or error`},
		// slog reads "info+3" as a level between those named, one that
		// hides the start and stop lines.
		{name: "a level between those named", env: map[string]string{"CARGO_LOG_LEVEL": "info+3"}, err: `CARGO_LOG_LEVEL (--log-level): "info+3" is not debug, info, warn or error`},
		{name: "a level below debug", env: map[string]string{"CARGO_LOG_LEVEL": "debug-2"}, err: `CARGO_LOG_LEVEL (--log-level): "debug-2" is not debug, info, warn or error`},
		{name: "bad cost", env: map[string]string{"CARGO_PASSWORD_HASH_COST": "40"}, err: "CARGO_PASSWORD_HASH_COST"},
		{name: "parsed values", env: map[string]string{"CARGO_WEBHOOK_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
			"CARGO_WEBHOOK_RETRY_SCHEDULE": "5s, 5m,2h", "CARGO_RATE_LIMIT_PER_HOUR": "7"},
			check: func(t *testing.T, c Config) {
				if len(c.WebhookKey) != 32 || c.WebhookKey[31] != 31 || len(c.WebhookSchedule) != 3 || c.WebhookSchedule[1] != 5*time.Minute ||
					c.RateLimits.PerMinute != 600 || c.RateLimits.PerHour != 7 || c.RateLimits.PerDay != 200000 {
					t.Errorf("key %v, schedule %v, limits %+v", c.WebhookKey, c.WebhookSchedule, c.RateLimits)
				}
			}},
		{name: "no webhook key: the one kept in JetStream", check: func(t *testing.T, c Config) {
			if len(c.WebhookKey) != 0 || len(c.WebhookSchedule) != 9 {
				t.Errorf("key %v, schedule %v", c.WebhookKey, c.WebhookSchedule)
			}
		}},
		{name: "a webhook key that is not base64", env: map[string]string{"CARGO_WEBHOOK_KEY": "not base64!"}, err: "CARGO_WEBHOOK_KEY"},
		{name: "a webhook key of 16 bytes", env: map[string]string{"CARGO_WEBHOOK_KEY": "AAECAwQFBgcICQoLDA0ODw=="}, err: "16 bytes, not 32"},
		{name: "sealing keys", env: map[string]string{"CARGO_SECRETS_KEY_FILE": keyFile, "CARGO_SECRETS_PREVIOUS_KEY": "HyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4="},
			check: func(t *testing.T, c Config) {
				if len(c.SecretsKey) != 32 || c.SecretsKey[31] != 31 || len(c.SecretsPrevious) != 32 || c.SecretsPrevious[0] != 31 {
					t.Errorf("sealing key %v, previous %v", c.SecretsKey, c.SecretsPrevious)
				}
			}},
		{name: "no sealing key: the key file", check: func(t *testing.T, c Config) {
			if c.SecretsKey != nil || c.SecretsPrevious != nil {
				t.Errorf("sealing key %v, previous %v", c.SecretsKey, c.SecretsPrevious)
			}
		}},
		{name: "a sealing key of 16 bytes", env: map[string]string{"CARGO_SECRETS_KEY": "AAECAwQFBgcICQoLDA0ODw=="}, err: "CARGO_SECRETS_KEY (--secrets-key): 16 bytes, not 32"},
		{name: "a previous sealing key that is not base64", env: map[string]string{"CARGO_SECRETS_PREVIOUS_KEY": "not base64!"}, err: "CARGO_SECRETS_PREVIOUS_KEY"},
		{name: "a retry schedule with a word in it", env: map[string]string{"CARGO_WEBHOOK_RETRY_SCHEDULE": "5s,soon"}, err: `"soon" is not a positive duration`},
		{name: "a retry schedule that waits nothing", env: map[string]string{"CARGO_WEBHOOK_RETRY_SCHEDULE": "0s"}, err: "CARGO_WEBHOOK_RETRY_SCHEDULE"},
		{name: "upload limit", env: map[string]string{"CARGO_MAX_UPLOAD_BYTES": "1048576"}, check: func(t *testing.T, c Config) {
			if c.MaxUploadBytes != 1<<20 {
				t.Errorf("upload limit = %d", c.MaxUploadBytes)
			}
		}},
		{name: "no document quota", env: map[string]string{"CARGO_DOCUMENT_QUOTA_BYTES": "0"}, check: func(t *testing.T, c Config) {
			if c.DocumentQuota != 0 {
				t.Errorf("document quota = %d", c.DocumentQuota)
			}
		}},
		{name: "a negative document quota", env: map[string]string{"CARGO_DOCUMENT_QUOTA_BYTES": "-1"}, err: "CARGO_DOCUMENT_QUOTA_BYTES"},
		{name: "upload limit too small", env: map[string]string{"CARGO_MAX_UPLOAD_BYTES": "10"}, err: "CARGO_MAX_UPLOAD_BYTES"},
		{name: "public URL", env: map[string]string{"CARGO_PUBLIC_URL": "https://cargo.example.com/api-gw/"}, check: func(t *testing.T, c Config) {
			if c.PublicURL != "https://cargo.example.com/api-gw" {
				t.Errorf("public URL = %q", c.PublicURL)
			}
		}},
		{name: "a public URL without a scheme", env: map[string]string{"CARGO_PUBLIC_URL": "cargo.example.com"}, err: "not an absolute http or https URL"},
		{name: "a public URL with a query", env: map[string]string{"CARGO_PUBLIC_URL": "https://cargo.example.com/?x=1"}, err: "base URL alone"},
		{name: "trusted proxies, an address and a prefix", env: map[string]string{"CARGO_TRUSTED_PROXIES": "10.1.2.3, 192.168.0.0/16,fd00::/8"}, check: func(t *testing.T, c Config) {
			want := []netip.Prefix{netip.MustParsePrefix("10.1.2.3/32"), netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("fd00::/8")}
			if !slices.Equal(c.TrustedProxies, want) {
				t.Errorf("trusted proxies = %v, want %v", c.TrustedProxies, want)
			}
		}},
		{name: "no trusted proxies by default", check: func(t *testing.T, c Config) {
			if len(c.TrustedProxies) != 0 {
				t.Errorf("trusted proxies = %v", c.TrustedProxies)
			}
		}},
		{name: "a trusted proxy by name", env: map[string]string{"CARGO_TRUSTED_PROXIES": "lb.internal"}, err: `"lb.internal" is neither an IP address nor a CIDR prefix`},
		{name: "stray argument", args: []string{"serve"}, err: "unexpected argument"},
		{name: "profiles on loopback", env: map[string]string{"CARGO_PROFILE_ADDR": "127.0.0.1:6060"}, check: func(t *testing.T, c Config) {
			if c.ProfileAddr != "127.0.0.1:6060" {
				t.Errorf("profile address = %q", c.ProfileAddr)
			}
		}},
		{name: "profiles on a public address", env: map[string]string{"CARGO_PROFILE_ADDR": "0.0.0.0:6060"}, err: "not a loopback"},
		{name: "readiness bounds", env: map[string]string{"CARGO_READY_MAX_LAG": "500", "CARGO_READY_STALL": "30s"}, check: func(t *testing.T, c Config) {
			if c.ReadyMaxLag != 500 || c.ReadyStall != 30*time.Second {
				t.Errorf("readiness bounds = %d, %s", c.ReadyMaxLag, c.ReadyStall)
			}
		}},
		{name: "metrics on a listener of their own, and reactors that park after 3 failures",
			env: map[string]string{"CARGO_METRICS_ADDR": "10.0.0.5:9090", "CARGO_REACTOR_ATTEMPTS": "3"}, check: func(t *testing.T, c Config) {
				if c.MetricsAddr != "10.0.0.5:9090" || c.ReactorAttempts != 3 {
					t.Errorf("metrics address %q, reactor attempts %d", c.MetricsAddr, c.ReactorAttempts)
				}
			}},
		{name: "metrics only on the main port, reactors parking after 5 failures, by default", check: func(t *testing.T, c Config) {
			if c.MetricsAddr != "" || c.ReactorAttempts != 5 {
				t.Errorf("metrics address %q, reactor attempts %d", c.MetricsAddr, c.ReactorAttempts)
			}
		}},
		{name: "a metrics address without a port", env: map[string]string{"CARGO_METRICS_ADDR": "10.0.0.5"}, err: "CARGO_METRICS_ADDR"},
		{name: "reactors that never give up", env: map[string]string{"CARGO_REACTOR_ATTEMPTS": "0"}, err: "CARGO_REACTOR_ATTEMPTS"},
		{name: "readiness lag of nothing", env: map[string]string{"CARGO_READY_MAX_LAG": "0"}, err: "CARGO_READY_MAX_LAG"},
		{name: "no drain before a stop, by default", check: func(t *testing.T, c Config) {
			if c.ShutdownDrain != 0 {
				t.Errorf("shutdown drain = %s, want 0s", c.ShutdownDrain)
			}
		}},
		{name: "a drain before a stop", env: map[string]string{"CARGO_SHUTDOWN_DRAIN": "15s"}, check: func(t *testing.T, c Config) {
			if c.ShutdownDrain != 15*time.Second {
				t.Errorf("shutdown drain = %s, want 15s", c.ShutdownDrain)
			}
		}},
		{name: "a drain longer than 5m", env: map[string]string{"CARGO_SHUTDOWN_DRAIN": "6m"}, err: "CARGO_SHUTDOWN_DRAIN"},
		{name: "a negative drain", env: map[string]string{"CARGO_SHUTDOWN_DRAIN": "-1s"}, err: "CARGO_SHUTDOWN_DRAIN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestVariablesThatLookLikeSettingsButAreNoneAreNamed(t *testing.T) {
	for _, tt := range []struct {
		variable string
		want     string // "" when it is known
	}{
		{"CARGO_RATE_LIMIT_PER_MINUTES=0", "CARGO_RATE_LIMIT_PER_MINUTES is not a setting of cargod: it is ignored; did you mean CARGO_RATE_LIMIT_PER_MINUTE?"},
		{"CARGO_NATS_ULR=nats://x", "CARGO_NATS_ULR is not a setting of cargod: it is ignored; did you mean CARGO_NATS_URL?"},
		{"CARGO_WEBHOOK_ALLOW_PRIVATES=true", "CARGO_WEBHOOK_ALLOW_PRIVATES is not a setting of cargod: it is ignored; did you mean CARGO_WEBHOOK_ALLOW_PRIVATE?"},
		// A secret's file misspelt: its file, not the secret in the environment.
		{"CARGO_ADMIN_SECRET_FLE=/run/secrets/admin", "CARGO_ADMIN_SECRET_FLE is not a setting of cargod: it is ignored; did you mean CARGO_ADMIN_SECRET_FILE?"},
		{"CARGO_ADMIN_SECRETS=x", "CARGO_ADMIN_SECRETS is not a setting of cargod: it is ignored; did you mean CARGO_ADMIN_SECRET?"},
		{"CARGO_FAVOURITE_COLOUR=blue", "CARGO_FAVOURITE_COLOUR is not a setting of cargod: it is ignored"},
		{"CARGO_ADDR=:8080", ""},
		{"CARGO_ADMIN_SECRET_FILE=/run/secrets/admin", ""}, // a secret's file
		{"CARGO_ADDR_FILE=/tmp/addr", "CARGO_ADDR_FILE is not a setting of cargod: it is ignored; only secrets are read from a file: set CARGO_ADDR"}, // not a secret
		{"CARGO_NATS_NKEY=/seed", ""},        // cargoctl's
		{"CARGO_TEST_NATS_URL=nats://x", ""}, // the tests'
		{"CARGO_CI_CACHE=/cache", ""},        // CI's
		{"CARGOCTL_URL=http://x", ""},        // cargoctl's own prefix
		// Rust's cargo: set for good in rust images and CI runners.
		{"CARGO_HOME=/usr/local/cargo", ""},
		{"CARGO_TARGET_DIR=/build/target", ""},
		{"CARGO_INCREMENTAL=0", ""},
		{"CARGO_TERM_COLOR=always", ""},
		{"CARGO_NET_RETRY=10", ""},
		{"CARGO_REGISTRIES_CRATES_IO_PROTOCOL=sparse", ""},
		{"CARGO_BUILD_JOBS=2", ""},
		{"PATH=/bin", ""},
	} {
		got := Unknown([]string{tt.variable})
		if (tt.want == "" && len(got) != 0) || (tt.want != "" && (len(got) != 1 || got[0] != tt.want)) {
			t.Errorf("Unknown(%s) = %q, want %q", tt.variable, got, tt.want)
		}
	}
}

func TestTheHelpSaysEachSettingsDefaultOnce(t *testing.T) {
	var help strings.Builder
	usage(&help)
	for _, tt := range []struct {
		flag string
		want string // the end of its description
	}{
		{"nats-replicas", "(default 3 with CARGO_NATS_URL, 1 embedded)"},
		{"demo", "(default true without CARGO_NATS_URL on a loopback CARGO_ADDR for a store with no organisations, or with the demo's (beside others too, with a warning), else false)"},
		{"nats-url", "separated by commas; empty runs an embedded server (default (empty))"},
		{"token-ttl", "(1m-24h) (default 1h)"},
	} {
		_, after, ok := strings.Cut(help.String(), "\n  --"+tt.flag+"  ")
		description, _, _ := strings.Cut(after, "\n  --")
		if !ok || !strings.HasSuffix(strings.TrimSpace(description), tt.want) {
			t.Errorf("--%s is described as %q, want it to end %q", tt.flag, description, tt.want)
		}
	}
	for line := range strings.Lines(help.String()) {
		if strings.Count(line, "(default ") > 1 {
			t.Errorf("a default said twice: %s", line)
		}
	}
}
