// Package config reads cargod's settings from environment variables and
// flags. Every setting is declared once, in the table in options, so the
// environment name, the flag, the default and the help text cannot drift.
package config

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/closest"
	"github.com/cargostream/cargostream/internal/version"
	"github.com/cargostream/cargostream/tokens"
	"github.com/cargostream/cargostream/vault"
)

// Config is the typed configuration of cargod.
type Config struct {
	Addr             string
	DataDir          string
	NATSURL          string
	NATSCreds        string
	NATSListen       string
	NATSListenNkey   string // public key of the nkey user NATSListen accepts; empty: the seed in DataDir
	NATSStream       string
	NATSReplicas     int
	Demo             bool
	DemoByDefault    bool // Demo not set: on for the embedded server on loopback, and only for a store the demo may go into
	DemoDays         int
	TokenTTL         time.Duration
	TokenIssuer      string
	PublicURL        string         // base URL clients reach the service at, without a trailing slash; empty: each request's scheme and host
	TrustedProxies   []netip.Prefix // proxies whose X-Forwarded-For names the client
	SigningKey       string
	AdminClientID    string
	AdminSecret      string
	PasswordHashCost int
	MaxBodyBytes     int64
	MaxUploadBytes   int64
	DocumentQuota    int64             // bytes of document files per organisation; 0 = no quota
	RateLimits       domain.RateLimits // per organisation; 0 = none
	Metering         bool
	WebhookKey       []byte // decoded; empty = the one kept in JetStream
	WebhookPrevious  []byte // decoded; the webhook key being replaced, which still opens the secrets sealed with it
	// CARGO_WEBHOOK_PREVIOUS_KEY=generated: the key being replaced is the
	// one generated and kept in JetStream.
	WebhookPreviousGenerated bool
	SecretsKey               []byte // decoded; seals the secrets kept in JetStream; empty = the key file in DataDir
	SecretsPrevious          []byte // decoded; the sealing key being replaced
	WebhookPrivate           bool
	WebhookSchedule          []time.Duration
	ShutdownTimeout          time.Duration
	ShutdownDrain            time.Duration // after a stop signal: /readyz 503 while the API still serves
	ReadyMaxLag              int           // events the read models may be behind and stay ready
	ReadyStall               time.Duration // how long they may apply nothing while events wait
	Snapshots                bool          // keep snapshots of the read models in JetStream
	SnapshotEvery            int           // events between snapshots; 0: only on a clean stop
	LogLevel                 slog.Level
	ProfileAddr              string // loopback host:port serving net/http/pprof; empty: none
	MetricsAddr              string // host:port serving /metrics without authentication; empty: only the main port, to admins
	ReactorAttempts          int    // failures in a row after which a reactor parks an event
	EventCacheBytes          int64  // memory for the events read by sequence (audit log pages); 0 = none
	// SecretFlags names the secrets given as flags, "--admin-secret": a
	// process's command line is every local user's to read (ps), where
	// its environment and a _FILE are its user's alone.
	SecretFlags []string
}

// option is one row of the configuration table.
type option struct {
	env    string
	flag   string
	def    string
	usage  string
	secret bool   // also read from <env>_FILE, never printed
	shown  string // the default as --help says it, where def is empty but means more than nothing
	set    func(c *Config, v string) error
}

var options = []option{
	{env: "CARGO_ADDR", flag: "addr", def: "127.0.0.1:8080", usage: "HTTP listen address",
		set: func(c *Config, v string) error { c.Addr = v; return nil }},
	{env: "CARGO_DATA_DIR", flag: "data-dir", def: "./data", usage: "directory of the embedded NATS server's JetStream files and of the key files secrets.key and nats-listen.nk",
		set: func(c *Config, v string) error { c.DataDir = v; return nil }},
	{env: "CARGO_NATS_URL", flag: "nats-url", def: "", usage: "URLs of the nodes of an external NATS server or cluster with JetStream (nats://, tls://, ws:// or wss://), separated by commas; empty runs an embedded server",
		set: setNATSURL},
	{env: "CARGO_NATS_CREDS", flag: "nats-creds", def: "", usage: "path of a NATS credentials file for the external server",
		set: func(c *Config, v string) error { c.NATSCreds = v; return nil }},
	{env: "CARGO_NATS_LISTEN", flag: "nats-listen", def: "", usage: "loopback host:port (port 0: any free one, logged) on which the embedded NATS server also accepts clients (for the nats CLI and cargoctl) that prove the nkey seed in <data dir>/nats-listen.nk; empty = in-process only",
		set: func(c *Config, v string) error {
			// Checked now, naming the setting: the store refuses it only
			// as it opens, after the start is logged, without the name.
			_, port, _ := net.SplitHostPort(v)
			n, err := strconv.Atoi(port)
			switch {
			case !loopback(v):
				return fmt.Errorf("%q is not a loopback host:port such as 127.0.0.1:4222: the port has no TLS", v)
			// -1 is the NATS server's own "any free one", which the
			// store took before this check: refusing it would stop a
			// deployment that started.
			case err != nil || n < -1 || n > 65535:
				return fmt.Errorf("%q has a port outside 0..65535", v)
			}
			c.NATSListen = v
			return nil
		}},
	{env: "CARGO_NATS_LISTEN_NKEY", flag: "nats-listen-nkey", def: "", usage: "public key (U…) of the nkey user whom CARGO_NATS_LISTEN accepts; empty = the one whose seed cargod writes to <data dir>/nats-listen.nk on first start",
		set: func(c *Config, v string) error { c.NATSListenNkey = v; return nil }},
	{env: "CARGO_NATS_STREAM", flag: "nats-stream", def: "CARGO", usage: "JetStream stream name; its subjects are <lower-case name>.evt.>",
		set: func(c *Config, v string) error {
			if err := CheckStreamName(v); err != nil {
				return err
			}
			c.NATSStream = v
			return nil
		}},
	{env: "CARGO_NATS_REPLICAS", flag: "nats-replicas", def: "", usage: "stream replicas: 1 for a single external server (which refuses more); more than 1 is refused with the embedded server, which keeps one copy", shown: "3 with CARGO_NATS_URL, 1 embedded",
		set: func(c *Config, v string) error { return setInt(&c.NATSReplicas, v, 1, 5) }},
	{env: "CARGO_DEMO", flag: "demo", def: "", usage: "create demo organisations and credentials (public, an admin's among them) at every start", shown: "true without CARGO_NATS_URL on a loopback CARGO_ADDR for a store with no organisations, or with the demo's (beside others too, with a warning), else false",
		set: func(c *Config, v string) error { return setBool(&c.Demo, v) }},
	{env: "CARGO_DEMO_DAYS", flag: "demo-days", def: "30", usage: "days ahead (1-90) for which demo mode keeps a timetable of the demo airlines",
		set: func(c *Config, v string) error { return setInt(&c.DemoDays, v, 1, 90) }},
	{env: "CARGO_TOKEN_TTL", flag: "token-ttl", def: "1h", usage: "lifetime of issued access tokens (1m-24h)",
		set: func(c *Config, v string) error { return setDuration(&c.TokenTTL, v, time.Minute, 24*time.Hour) }},
	{env: "CARGO_TOKEN_ISSUER", flag: "token-issuer", def: "cargostream", usage: "iss claim of issued tokens (usually the public base URL)",
		set: func(c *Config, v string) error { c.TokenIssuer = v; return nil }},
	{env: "CARGO_PUBLIC_URL", flag: "public-url", def: "", usage: "base URL clients reach the service at, such as https://cargo.example.com, for absolute links (errorUri); empty: the scheme and host each request came to",
		set: setPublicURL},
	{env: "CARGO_TRUSTED_PROXIES", flag: "trusted-proxies", def: "", usage: "comma-separated addresses or CIDR prefixes of the reverse proxies or load balancers in front of cargod, such as 10.0.0.0/8: from them, the client is the rightmost X-Forwarded-For address that is not one of them; empty: the peer is the client",
		set: setTrustedProxies},
	{env: "CARGO_SIGNING_KEY", flag: "signing-key", def: "", secret: true, usage: "PEM (PKCS#8) ECDSA P-256 key that signs tokens; empty = a key generated once and kept in JetStream",
		set: func(c *Config, v string) error {
			// Checked now: the key is loaded only once NATS is reached,
			// which may be long after the start.
			if _, err := tokens.ParseSigningKey([]byte(v)); err != nil {
				return err
			}
			c.SigningKey = v
			return nil
		}},
	{env: "CARGO_ADMIN_CLIENT_ID", flag: "admin-client-id", def: "admin", usage: "client id of the bootstrap admin created when CARGO_ADMIN_SECRET is set",
		set: func(c *Config, v string) error {
			if !domain.ValidIdentifier(v) {
				return errors.New("must be 1 to 64 letters, digits, '-' or '_', starting with a letter or digit")
			}
			c.AdminClientID = v
			return nil
		}},
	{env: "CARGO_ADMIN_SECRET", flag: "admin-secret", def: "", secret: true, usage: "secret of a bootstrap admin client, created on start if it does not exist",
		set: func(c *Config, v string) error {
			// Checked now, as the bootstrap would: there it fails only
			// after NATS is reached and the stream replayed.
			var invalid *domain.Error
			if errors.As(domain.ValidateSecret("secret", v), &invalid) {
				return errors.New(invalid.Fields[0].Message)
			}
			c.AdminSecret = v
			return nil
		}},
	{env: "CARGO_PASSWORD_HASH_COST", flag: "password-hash-cost", def: "10", usage: "bcrypt cost for client secrets and passwords (4-15)",
		set: func(c *Config, v string) error { return setInt(&c.PasswordHashCost, v, 4, 15) }},
	{env: "CARGO_MAX_BODY_BYTES", flag: "max-body-bytes", def: "1048576", usage: "largest JSON request body accepted (413 above)",
		set: func(c *Config, v string) error { return setBytes(&c.MaxBodyBytes, v, 1024, 1<<30) }},
	{env: "CARGO_MAX_UPLOAD_BYTES", flag: "max-upload-bytes", def: "20971520", usage: "largest document file accepted by POST /api/documents (413 above)",
		set: func(c *Config, v string) error { return setBytes(&c.MaxUploadBytes, v, 1024, 1<<32) }},
	{env: "CARGO_DOCUMENT_QUOTA_BYTES", flag: "document-quota-bytes", def: "10737418240", usage: "bytes of document files each organisation may store (413 quota_exceeded beyond; 0: no quota)",
		set: func(c *Config, v string) error { return setBytes(&c.DocumentQuota, v, 0, 1<<50) }},
	{env: "CARGO_RATE_LIMIT_PER_MINUTE", flag: "rate-limit-per-minute", def: "600", usage: "requests per minute an organisation may make (0: no limit); admins set other limits per organisation",
		set: func(c *Config, v string) error { return setInt(&c.RateLimits.PerMinute, v, 0, 10_000_000) }},
	{env: "CARGO_RATE_LIMIT_PER_HOUR", flag: "rate-limit-per-hour", def: "20000", usage: "requests per hour an organisation may make (0: no limit)",
		set: func(c *Config, v string) error { return setInt(&c.RateLimits.PerHour, v, 0, 10_000_000) }},
	{env: "CARGO_RATE_LIMIT_PER_DAY", flag: "rate-limit-per-day", def: "200000", usage: "requests per day an organisation may make (0: no limit)",
		set: func(c *Config, v string) error { return setInt(&c.RateLimits.PerDay, v, 0, 10_000_000) }},
	{env: "CARGO_METERING", flag: "metering", def: "true", usage: "count requests for GET /api/usage and enforce rate limits",
		set: func(c *Config, v string) error { return setBool(&c.Metering, v) }},
	{env: "CARGO_WEBHOOK_KEY", flag: "webhook-key", def: "", secret: true, usage: "32 bytes in base64 that encrypt webhook secrets at rest; empty = a key generated once and kept in JetStream",
		set: func(c *Config, v string) error { return setKey(&c.WebhookKey, v) }},
	{env: "CARGO_WEBHOOK_PREVIOUS_KEY", flag: "webhook-previous-key", def: "", secret: true, usage: "the webhook key being replaced (32 bytes in base64, or generated: the key kept in JetStream): " +
		"the secrets sealed with it are still opened, new ones are sealed with CARGO_WEBHOOK_KEY",
		set: func(c *Config, v string) error {
			if c.WebhookPreviousGenerated = v == "generated"; c.WebhookPreviousGenerated {
				return nil
			}
			return setKey(&c.WebhookPrevious, v)
		}},
	{env: "CARGO_SECRETS_KEY", flag: "secrets-key", def: "", secret: true, usage: "32 bytes in base64 that seal the secrets kept in JetStream (the generated signing and webhook keys), the same on every replica; " +
		"empty = <data dir>/secrets.key with the embedded server (generated on first start); needed with CARGO_NATS_URL unless CARGO_SIGNING_KEY and CARGO_WEBHOOK_KEY are set",
		set: func(c *Config, v string) error { return setKey(&c.SecretsKey, v) }},
	{env: "CARGO_SECRETS_PREVIOUS_KEY", flag: "secrets-previous-key", def: "", secret: true, usage: "the sealing key being replaced (32 bytes in base64): secrets sealed with it are sealed again with the current one on start",
		set: func(c *Config, v string) error { return setKey(&c.SecretsPrevious, v) }},
	{env: "CARGO_WEBHOOK_ALLOW_PRIVATE", flag: "webhook-allow-private", def: "false", usage: "allow webhook URLs on loopback, private and link-local addresses (tests, closed networks)",
		set: func(c *Config, v string) error { return setBool(&c.WebhookPrivate, v) }},
	{env: "CARGO_WEBHOOK_RETRY_SCHEDULE", flag: "webhook-retry-schedule", def: "5s,5m,30m,2h,5h,10h,14h,20h,24h", usage: "waits before each webhook retry; after the last a delivery is dead-lettered",
		set: func(c *Config, v string) error { return setDurations(&c.WebhookSchedule, v) }},
	{env: "CARGO_READY_MAX_LAG", flag: "ready-max-lag", def: "10000", usage: "/readyz answers 503 when the read models are more events than this behind the stream",
		set: func(c *Config, v string) error { return setInt(&c.ReadyMaxLag, v, 1, 100_000_000) }},
	{env: "CARGO_READY_STALL", flag: "ready-stall", def: "10s", usage: "/readyz answers 503 when the read models apply nothing this long while events wait, or the stream does not answer this long",
		set: func(c *Config, v string) error { return setDuration(&c.ReadyStall, v, time.Second, time.Hour) }},
	{env: "CARGO_SNAPSHOTS", flag: "snapshots", def: "true", usage: "start from the newest snapshot of the read models kept in JetStream, and write one on a clean stop and every CARGO_SNAPSHOT_EVERY events; false neither reads nor writes them",
		set: func(c *Config, v string) error { return setBool(&c.Snapshots, v) }},
	{env: "CARGO_SNAPSHOT_EVERY", flag: "snapshot-every", def: "0", usage: "also write a snapshot of the read models after this many events (0: only on a clean stop); they apply nothing while it is written",
		set: func(c *Config, v string) error { return setInt(&c.SnapshotEvery, v, 0, 1_000_000_000) }},
	{env: "CARGO_SHUTDOWN_TIMEOUT", flag: "shutdown-timeout", def: "20s", usage: "how long shutdown waits for in-flight requests",
		set: func(c *Config, v string) error {
			return setDuration(&c.ShutdownTimeout, v, time.Second, 10*time.Minute)
		}},
	{env: "CARGO_SHUTDOWN_DRAIN", flag: "shutdown-drain", def: "0s", usage: "after a stop signal, how long the replica goes on serving while /readyz answers 503 and no connection is kept alive, so that a load balancer probing readiness stops sending it requests before its listener closes (at most 5m); 0s: close at once",
		set: func(c *Config, v string) error { return setDuration(&c.ShutdownDrain, v, 0, 5*time.Minute) }},
	{env: "CARGO_LOG_LEVEL", flag: "log-level", def: "info", usage: "debug, info, warn or error",
		set: func(c *Config, v string) error {
			// slog's own reading takes "info+3" too, a level between
			// those named that hides the start and stop lines; and its
			// refusal ("level string …: unknown name") names none.
			levels := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
			level, ok := levels[strings.ToLower(v)]
			if !ok {
				return fmt.Errorf("%q is not debug, info, warn or error", v)
			}
			c.LogLevel = level
			return nil
		}},
	{env: "CARGO_METRICS_ADDR", flag: "metrics-addr", def: "", usage: "host:port of a separate listener serving GET /metrics to anyone, without a token (bind it to an address only Prometheus reaches); empty: /metrics only on the main port, to admins",
		set: func(c *Config, v string) error {
			if _, _, err := net.SplitHostPort(v); err != nil {
				return fmt.Errorf("%q is not a host:port such as 10.0.0.5:9090", v)
			}
			c.MetricsAddr = v
			return nil
		}},
	{env: "CARGO_REACTOR_ATTEMPTS", flag: "reactor-attempts", def: "5", usage: "failures in a row (1-100) after which a reactor or the webhook dispatcher parks an event and goes on with the next (cargoctl parked lists and retries them)",
		set: func(c *Config, v string) error { return setInt(&c.ReactorAttempts, v, 1, 100) }},
	{env: "CARGO_EVENT_CACHE_BYTES", flag: "event-cache-bytes", def: "33554432", usage: "memory that the events read for pages of the audit log (and webhook redeliveries) may take, kept to be read again; 0 keeps none",
		set: func(c *Config, v string) error { return setBytes(&c.EventCacheBytes, v, 0, 1<<40) }},
	{env: "CARGO_PROFILE_ADDR", flag: "profile-addr", def: "", usage: "loopback host:port that serves Go's profiles (net/http/pprof); empty serves none",
		set: func(c *Config, v string) error {
			if v != "" && !loopback(v) {
				return fmt.Errorf("%q is not a loopback host:port: profiles reveal the process's memory", v)
			}
			c.ProfileAddr = v
			return nil
		}},
}

// CheckStreamName refuses a stream name cargod would not take, for
// cargoctl's --stream too. The buckets and object stores are named
// <stream>_<name>, and NATS takes only these in a bucket's name: anything
// else would fail cargod's start after the stream was created.
func CheckStreamName(v string) error {
	if v == "" || strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
		return fmt.Errorf("%q is not made of letters, digits, '-' and '_' only", v)
	}
	return nil
}

// loopback reports whether addr is a host:port on this machine only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && (host == "localhost" || (ip != nil && ip.IsLoopback()))
}

// ErrHelp is returned by Load when --help was asked for; the usage has been
// written to the output.
var ErrHelp = flag.ErrHelp

// ErrVersion is returned by Load when --version was asked for; the version
// has been written to the output.
var ErrVersion = errors.New("config: --version asked for")

// Load reads the configuration: defaults, then environment variables (and
// their _FILE variants for secrets), then flags.
func Load(args []string, getenv func(string) string, output io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("cargod", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() { usage(output) }
	values := make([]*string, len(options))
	fromFile := make([]string, len(options)) // the _FILE variable a secret was read from, and its path
	for i, o := range options {
		v, file, err := fromEnv(o, getenv)
		if err != nil {
			return c, err
		}
		fromFile[i] = file
		if v == "" {
			v = o.def
		}
		values[i] = fs.String(o.flag, v, o.usage)
	}
	showVersion := fs.Bool("version", false, "print the version of this build and exit")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if *showVersion {
		fmt.Fprintln(output, "cargod", version.String(), runtime.Version())
		return c, ErrVersion
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	flagged := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { flagged[f.Name] = true })
	for i, o := range options {
		// An empty flag, like an empty variable, leaves the default:
		// else --token-ttl= would skip the setting's check and leave it
		// zero (tokens that expire at once, metering off, no retries).
		if *values[i] == "" {
			*values[i] = o.def
		}
		if *values[i] == "" {
			continue
		}
		if o.secret && flagged[o.flag] {
			c.SecretFlags = append(c.SecretFlags, "--"+o.flag)
		}
		if err := o.set(&c, *values[i]); err != nil {
			// A value read from a file names the file's variable: the
			// operator looks there (before, CARGO_SECRETS_KEY was named
			// for a CARGO_SECRETS_KEY_FILE whose content was no key).
			if fromFile[i] != "" && !flagged[o.flag] {
				return c, fmt.Errorf("%s: %w", fromFile[i], err)
			}
			return c, fmt.Errorf("%s (--%s): %w", o.env, o.flag, err)
		}
	}
	// A setting that another one makes void is a mistake that would
	// otherwise pass unseen: credentials meant for a cluster with
	// CARGO_NATS_URL forgotten start an embedded server, with the demo's
	// public credentials.
	switch {
	case c.NATSCreds != "" && c.NATSURL == "":
		return c, errors.New("CARGO_NATS_CREDS is set without CARGO_NATS_URL: it is for an external server; set CARGO_NATS_URL, or leave it out")
	case c.NATSListen != "" && c.NATSURL != "":
		return c, errors.New("CARGO_NATS_LISTEN is set with CARGO_NATS_URL: it opens a port of the embedded server; leave it out")
	case c.NATSListenNkey != "" && c.NATSURL != "":
		return c, errors.New("CARGO_NATS_LISTEN_NKEY is set with CARGO_NATS_URL: it is the user of the embedded server's port; leave it out")
	case c.NATSListenNkey != "" && c.NATSListen == "":
		return c, errors.New("CARGO_NATS_LISTEN_NKEY is set without CARGO_NATS_LISTEN: it is the user of the embedded server's port, which is not opened; set CARGO_NATS_LISTEN, or leave it out")
	case c.NATSReplicas > 1 && c.NATSURL == "":
		return c, fmt.Errorf("CARGO_NATS_REPLICAS is %d without CARGO_NATS_URL: the embedded server keeps one copy; set CARGO_NATS_URL, or leave it out", c.NATSReplicas)
	case c.SnapshotEvery > 0 && !c.Snapshots:
		return c, errors.New("CARGO_SNAPSHOT_EVERY is set with CARGO_SNAPSHOTS=false, which writes no snapshots; leave one of them out")
	case c.WebhookPreviousGenerated && len(c.WebhookKey) == 0:
		return c, errors.New("CARGO_WEBHOOK_PREVIOUS_KEY is generated without CARGO_WEBHOOK_KEY: the generated key is the one in use; set CARGO_WEBHOOK_KEY to the new key")
	case len(c.WebhookPrevious) > 0 && bytes.Equal(c.WebhookPrevious, c.WebhookKey):
		return c, errors.New("CARGO_WEBHOOK_PREVIOUS_KEY is CARGO_WEBHOOK_KEY: give the key being replaced, or leave it out")
	}
	if *values[indexOf("CARGO_DEMO")] == "" {
		// Only on loopback: the demo credentials are public, an admin's
		// among them, and anyone who reaches the port would use them (the
		// image listens on :8080, which docker run -p publishes).
		c.Demo = c.NATSURL == "" && loopback(c.Addr)
		c.DemoByDefault = c.Demo
	}
	switch {
	case c.NATSURL == "":
		c.NATSReplicas = 1
	case c.NATSReplicas == 0:
		c.NATSReplicas = 3
	}
	return c, nil
}

// notCargods are the CARGO_ variables of the other programs sharing an
// operator's environment: cargoctl's, and the tests' and CI's (by prefix);
// and Rust's cargo's that stay set in an environment (rust images and CI
// runners set CARGO_HOME), which would be warned of at every start. Not
// its CARGO_LOG, more likely a CARGO_LOG_LEVEL mistyped, nor its
// CARGO_PROFILE_…, which would hide a misspelt CARGO_PROFILE_ADDR.
var notCargods = []string{"CARGO_NATS_NKEY", "CARGO_CI_", "CARGO_TEST_",
	"CARGO_HOME", "CARGO_TARGET_DIR", "CARGO_INCREMENTAL", "CARGO_TERM_", "CARGO_NET_", "CARGO_REGISTRIES_",
	"CARGO_REGISTRY_", "CARGO_BUILD_", "CARGO_HTTP_", "CARGO_CACHE_RUSTC_INFO", "CARGO_ENCODED_RUSTFLAGS"}

// Unknown names the variables of environ (as os.Environ gives them) that
// look like cargod's, CARGO_…, but set nothing: a misspelt setting that
// would otherwise leave its default unseen. Each comes with the setting
// it is nearest to, if one is near.
func Unknown(environ []string) []string {
	var unknown []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "CARGO_") || known(name) {
			continue
		}
		msg := name + " is not a setting of cargod: it is ignored"
		if setting, ok := strings.CutSuffix(name, "_FILE"); ok && known(setting) {
			msg += "; only secrets are read from a file: set " + setting
		} else if near := nearest(name); near != "" {
			msg += "; did you mean " + near + "?"
		}
		unknown = append(unknown, msg)
	}
	return unknown
}

// names are the variables that set o: a secret's _FILE too.
func (o option) names() []string {
	if o.secret {
		return []string{o.env, o.env + "_FILE"}
	}
	return []string{o.env}
}

func known(name string) bool {
	for _, o := range options {
		if slices.Contains(o.names(), name) {
			return true
		}
	}
	for _, other := range notCargods {
		if name == other || (strings.HasSuffix(other, "_") && strings.HasPrefix(name, other)) {
			return true
		}
	}
	return false
}

// nearest is the setting whose name is fewest edits from name, if at most
// a quarter of its letters are (a typo, a plural, a word left out). A
// secret's _FILE name is one too: else a misspelt CARGO_ADMIN_SECRET_FLE
// was pointed to CARGO_ADMIN_SECRET, the secret itself in the environment.
func nearest(name string) string {
	var names []string
	for _, o := range options {
		names = append(names, o.names()...)
	}
	return closest.Word(name, names)
}

// fromEnv is the value of o's variable, or of a secret's _FILE variable
// read from its file, which file names ("CARGO_SECRETS_KEY_FILE
// (/run/secrets/key)"; "" for a value not read from a file).
func fromEnv(o option, getenv func(string) string) (value, file string, err error) {
	v := getenv(o.env)
	if !o.secret {
		return v, "", nil
	}
	path := getenv(o.env + "_FILE")
	if path == "" {
		return v, "", nil
	}
	if v != "" {
		return "", "", fmt.Errorf("set either %s or %s_FILE, not both", o.env, o.env)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("%s_FILE: %w", o.env, err)
	}
	v = strings.TrimRight(string(b), "\r\n")
	if v == "" {
		// An empty value is the default (no admin, a generated key): a
		// file left empty by a failed "openssl rand > file" must not
		// quietly turn into that.
		return "", "", fmt.Errorf("%s_FILE: %s is empty", o.env, path)
	}
	return v, fmt.Sprintf("%s_FILE (%s)", o.env, path), nil
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: cargod [flags]\n\nEvery flag can also be set by its environment variable; a flag wins.\n\n")
	for _, o := range options {
		def := cmp.Or(o.def, o.shown, "(empty)")
		env := o.env
		if o.secret {
			env += " or " + o.env + "_FILE"
		}
		fmt.Fprintf(w, "  --%s  %s\n      %s (default %s)\n", o.flag, env, o.usage, def)
	}
	fmt.Fprintf(w, "  --version\n      print the version of this build and exit\n")
}

func indexOf(env string) int {
	for i, o := range options {
		if o.env == env {
			return i
		}
	}
	panic("config: no option " + env)
}

func setInt(dst *int, v string, min, max int) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", v)
	}
	if n < min || n > max {
		return fmt.Errorf("%d is outside %d..%d", n, min, max)
	}
	*dst = n
	return nil
}

func setBytes(dst *int64, v string, min, max int) error {
	var n int
	err := setInt(&n, v, min, max)
	*dst = int64(n)
	return err
}

func setBool(dst *bool, v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not true or false", v)
	}
	*dst = b
	return nil
}

// setKey decodes a 32-byte key written in base64.
func setKey(dst *[]byte, v string) error {
	key, err := vault.ParseKey(v)
	*dst = key
	return err
}

// setPublicURL reads the service's public base URL: absolute, http or
// https, without query, fragment or credentials; a trailing slash is
// dropped, as paths are appended to it.
func setPublicURL(c *Config, v string) error {
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return fmt.Errorf("%q is not an absolute http or https URL such as https://cargo.example.com", v)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("%q has a query, fragment or credentials: give the base URL alone", v)
	}
	c.PublicURL = strings.TrimRight(u.String(), "/")
	return nil
}

// setNATSURL reads the comma-separated URLs of an external NATS server's
// nodes.
func setNATSURL(c *Config, v string) error {
	if err := CheckNATSURL(v); err != nil {
		return err
	}
	c.NATSURL = v
	return nil
}

// CheckNATSURL refuses a list of NATS URLs cargod would not take, for
// cargoctl's --nats-url too: comma-separated, as the NATS client reads
// them (nats:// when no scheme is given). The client would take a port out
// of range, or https:// for tls://, and then wait for ever for a server it
// cannot reach: they are refused here.
func CheckNATSURL(v string) error {
	named := false
	for item := range strings.SplitSeq(v, ",") {
		// Blank items are dropped, as the client drops them.
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		named = true
		raw := item
		if !strings.Contains(raw, "://") {
			raw = "nats://" + raw
		}
		u, err := url.Parse(raw)
		if err != nil {
			return fmt.Errorf("%q is not a URL", item)
		}
		switch {
		case u.Scheme != "nats" && u.Scheme != "tls" && u.Scheme != "ws" && u.Scheme != "wss":
			return fmt.Errorf("%q is not a nats://, tls://, ws:// or wss:// URL", item)
		case u.Hostname() == "":
			return fmt.Errorf("%q names no host", item)
		case !domain.ValidPort(u.Port()):
			return fmt.Errorf("%q has a port outside 1..65535", item)
		}
	}
	// No URL at all is the client's default, a server on this machine's
	// port 4222: not what a list of nothing meant.
	if !named {
		return errors.New("names no server")
	}
	return nil
}

// setTrustedProxies reads a comma-separated list of IP addresses and
// CIDR prefixes.
func setTrustedProxies(c *Config, v string) error {
	c.TrustedProxies = nil
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(item)
		if err != nil {
			addr, aerr := netip.ParseAddr(item)
			if aerr != nil {
				return fmt.Errorf("%q is neither an IP address nor a CIDR prefix such as 10.0.0.0/8", item)
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		c.TrustedProxies = append(c.TrustedProxies, prefix.Masked())
	}
	return nil
}

// setDurations reads a comma-separated list of positive durations, such
// as a retry schedule "5s,5m,30m".
func setDurations(dst *[]time.Duration, v string) error {
	var out []time.Duration
	for _, part := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return fmt.Errorf("%q is not a positive duration such as 5s or 30m", strings.TrimSpace(part))
		}
		out = append(out, d)
	}
	*dst = out
	return nil
}

func setDuration(dst *time.Duration, v string, min, max time.Duration) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 30s, 15m or 1h", v)
	}
	if d < min || d > max {
		return fmt.Errorf("%s is outside %s..%s", d, min, max)
	}
	*dst = d
	return nil
}
