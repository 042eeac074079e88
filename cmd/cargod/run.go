package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/config"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/httpapi"
	"github.com/cargostream/cargostream/internal/retry"
	"github.com/cargostream/cargostream/internal/version"
	"github.com/cargostream/cargostream/metrics"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/tokens"
	"github.com/cargostream/cargostream/vault"
	"github.com/cargostream/cargostream/views"
	"github.com/cargostream/cargostream/webhooks"
)

// run starts the service and serves until ctx ends, then shuts down:
// stop accepting, finish in-flight requests, drain NATS.
//
// environ is the environment, as os.Environ gives it.
func run(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) (err error) {
	cfg, err := config.Load(args, lookup(environ), stdout)
	if errors.Is(err, config.ErrHelp) || errors.Is(err, config.ErrVersion) {
		return nil
	}
	if err != nil {
		return err
	}
	log, logs := newLogger(stderr, cfg.LogLevel)
	defer logs.Flush() // deferred first, so run last: "cargod stopped" is written too
	for _, unknown := range config.Unknown(environ) {
		log.Warn(unknown)
	}
	for _, flag := range cfg.SecretFlags {
		log.Warn("cargod: a secret given as a flag is on the command line, which every user of the machine may read (ps): give it in a file, as the setting's _FILE",
			"flag", flag)
	}
	started := time.Now()

	// The port opens at once, serving the starting handler until the
	// API is ready: a liveness probe sees the process alive while it
	// waits for NATS or replays a long stream, and /readyz says how far
	// it has come.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("CARGO_ADDR: %w", err)
	}
	var start starting
	// A stop asked for while starting (SIGTERM as NATS is awaited or the
	// stream replays) is a clean stop, not a failed start: the step under
	// way failed because of it.
	serving := false
	// Deferred before the rest, so run after them: "cargod stopped" comes
	// after the snapshot of the read models, which the deferred stop of
	// the projector writes, so that an operator timing a stop sees its end.
	defer func() {
		switch {
		case err != nil && !serving && ctx.Err() != nil:
			log.Info("cargod stopped while starting", "stage", start.current(), "err", err.Error())
			err = nil
		case err == nil && serving:
			log.Info("cargod stopped", "after", time.Since(started).Round(time.Millisecond).String())
		case err != nil && !serving:
			log.Error("cargod could not start", "stage", start.current(), "err", err.Error())
			err = loggedError{err}
		case err != nil:
			log.Error("cargod stopped on an error", "err", err.Error())
			err = loggedError{err}
		}
	}()
	// The stage is set before the port opens: a probe in between was told
	// of a start with no stage ("starting: ").
	start.set("connecting to NATS and provisioning the stream", nil, nil)
	var handler atomic.Pointer[http.Handler]
	m := metrics.New()
	handler.Store(new(httpapi.Starting(log, cfg.PublicURL, m, start.current, start.progress)))
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*handler.Load()).ServeHTTP(w, r) }),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	defer srv.Close() // a start that fails closes the port
	base := "http://" + ln.Addr().String()
	log.Info("cargod started: /healthz answers now, the API once /readyz does", "addr", ln.Addr().String(), "version", version.String())
	if cfg.MetricsAddr != "" {
		// Open at once too, so that a scraper follows the replay.
		stopMetrics, err := serveMetrics(cfg.MetricsAddr, m, log)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}
	if cfg.ProfileAddr != "" {
		// Open now too: a port in use stops the start before the replica
		// says it is ready, and a slow replay can be measured.
		stopProfiles, err := serveProfiles(cfg.ProfileAddr, log)
		if err != nil {
			return err
		}
		defer stopProfiles()
	}

	store, err := eventstore.Open(ctx, eventstore.Options{
		URL: cfg.NATSURL, CredsFile: cfg.NATSCreds, DataDir: cfg.DataDir, Listen: cfg.NATSListen, ListenNkey: cfg.NATSListenNkey,
		Stream: cfg.NATSStream, Replicas: cfg.NATSReplicas, Logger: log, ConsumerAttempts: cfg.ReactorAttempts, Observer: m,
		RecordCacheBytes: cmp.Or(int(cfg.EventCacheBytes), -1), // 0: none
	})
	switch {
	case errors.Is(err, eventstore.ErrReplicasUnclustered):
		return fmt.Errorf("CARGO_NATS_REPLICAS: %w: set it to 1 for a single server", err)
	case errors.Is(err, eventstore.ErrDataDirInUse):
		return fmt.Errorf("CARGO_DATA_DIR: %w: another cargod (or a cargoctl reading it) has it open; stop that one, or give this one a data directory of its own", err)
	case errors.Is(err, fs.ErrPermission) && cfg.NATSURL == "":
		return fmt.Errorf("CARGO_DATA_DIR: %w: the data directory and what is in it must be writable by the user cargod runs as (uid %d)", err, os.Getuid())
	case errors.Is(err, eventstore.ErrDataDirUnusable):
		return fmt.Errorf("CARGO_DATA_DIR: %w", err)
	case errors.Is(err, eventstore.ErrNotAUserNkey):
		return fmt.Errorf("CARGO_NATS_LISTEN_NKEY: %w", err)
	case err != nil:
		return err
	}
	defer store.Close()
	if n := store.MissingEvents(); n > 0 {
		log.Error("cargod: the event stream has sequences without an event: events lost (a damaged file, a restore cut short), which the read models built from it lack; cargoctl verify lists where",
			"stream", cfg.NATSStream, "missing", n)
	}
	if url := store.ClientURL(); url != "" {
		seed := "as configured (CARGO_NATS_LISTEN_NKEY)"
		if cfg.NATSListenNkey == "" {
			seed = filepath.Join(cfg.DataDir, eventstore.ListenSeedFile)
		}
		log.Info("embedded NATS server accepts clients that prove the nkey user's seed", "url", url, "nkey", store.ListenNkey(), "seed", seed)
	}

	warnOpenKeyFiles(log, cfg)
	secrets := sync.OnceValues(func() (*vault.Vault, error) { return openVault(ctx, store, cfg, log) })
	if len(cfg.SecretsPrevious) > 0 {
		if err := resealSecrets(ctx, log, secrets, cfg); err != nil {
			return err
		}
	}
	signingKey, err := sharedKey(ctx, log, secrets, cfg, []byte(cfg.SigningKey), "token-signing-key", tokens.GenerateSigningKey)
	if err != nil {
		return err
	}
	tokenAuthority, err := tokens.New(signingKey, cfg.TokenIssuer, cfg.TokenTTL)
	if err != nil {
		return err
	}
	webhookKey, err := sharedKey(ctx, log, secrets, cfg, cfg.WebhookKey, "webhook-key", func() ([]byte, error) {
		// A stream with subscriptions had a key, which sealed their
		// secrets: a new one would open none of them, and every delivery
		// would fail for days, logged at INFO once, at the start.
		if held, err := store.HoldsEventsOf(ctx, domain.AggregateWebhook); err != nil || held {
			return nil, cmp.Or(err, errWebhookKeyLost)
		}
		key := make([]byte, 32)
		rand.Read(key)
		return key, nil
	})
	if err != nil {
		return err
	}
	previousWebhookKey, err := replacedWebhookKey(ctx, log, secrets, cfg)
	if err != nil {
		return err
	}
	responses, err := store.Bucket(ctx, "idempotency", 24*time.Hour)
	if err != nil {
		return err
	}
	usage, err := commands.OpenUsageMeter(ctx, store.Bucket, log)
	if err != nil {
		return err
	}
	files, err := store.Objects(ctx, "documents")
	if err != nil {
		return err
	}

	models := projections.NewModels()
	identity, quotes, flights, rates, bookings := models.Identity, models.Quotes, models.Flights, models.Rates, models.Bookings
	stock, reference, audit := models.Stock, models.Reference, models.Audit
	subscriptions, shipments, documents := models.Webhooks, models.Shipments, models.Documents
	projector := projections.NewProjector(store, log, models.All()...)
	var snapshotStores []commands.HalfStored // swept of leftovers with the documents' files
	if cfg.Snapshots {
		snapshots, err := store.Objects(ctx, "snapshots")
		if err != nil {
			return err
		}
		snapshotStores = append(snapshotStores, snapshots)
		if err := projector.KeepSnapshots(snapshots, uint64(cfg.SnapshotEvery)); err != nil {
			return err
		}
	}
	m.WatchReadModels(func(ctx context.Context) (metrics.ReadModels, error) {
		lag, err := projector.Lag(ctx)
		if err == nil {
			err = lag.Err // the stream's last answer stands for readiness, not for the figures
		}
		return metrics.ReadModels{Applied: lag.Applied, Target: projector.Target(), StreamLast: lag.StreamLast}, err
	})
	start.set("replaying the stream into the read models", store, projector)
	// The projector and the reactors stop after the HTTP server has
	// finished its requests.
	projCtx, stopProjector := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); projector.Run(projCtx) }()
	defer func() { stopProjector(); wg.Wait() }()

	cmds := commands.New(store, cfg.PasswordHashCost, reference)
	if cfg.DemoByDefault {
		err := untilAvailable(ctx, log, "looking for organisations of the store's own", func() (err error) {
			cfg.Demo, err = demoGoesInto(ctx, store)
			return err
		})
		if err != nil {
			return err
		}
		if !cfg.Demo {
			log.Warn("demo mode off: the store has organisations of its own and none of the demo's, whose public credentials (an admin's among them) it does not get; set CARGO_DEMO=true to add them all the same")
		}
	}
	if err := untilAvailable(ctx, log, "bootstrap", func() error { return bootstrap(ctx, cmds, cfg) }); err != nil {
		return err
	}
	if err := waitCaughtUp(ctx, log, projector, replayProgressEvery); err != nil {
		return err
	}
	if own := ownOrganizations(identity); cfg.DemoByDefault && cfg.Demo && len(own) > 0 {
		// A store that began as the demo keeps it by default (a tryout's
		// organisations should not shut the demo out), but a real one,
		// behind a proxy on the same host, then has a public admin.
		log.Warn("demo mode is on by default beside organisations of the store's own: the demo's public credentials, an admin's among them, "+
			"are valid; set CARGO_DEMO=false for real use, or CARGO_DEMO=true to keep the demo", "organizations", own[:min(len(own), 10)])
	}
	start.set("seeding reference data and the demo", store, projector)
	if err := untilAvailable(ctx, log, "seeding reference data", func() error { return seedReference(ctx, cmds, projector, reference) }); err != nil {
		return err
	}
	if cfg.Demo {
		err := untilAvailable(ctx, log, "seeding the demo", func() error {
			return seedDemoTimetable(ctx, cmds, flights, reference, cfg.DemoDays, time.Now())
		})
		if err != nil {
			return err
		}
	}
	start.set("starting reactors and webhook delivery", store, projector)
	reactors := commands.NewReactors(cmds, store, struct {
		*projections.Flights
		*projections.Rates
		*projections.Identity
	}{flights, rates, identity}, projector, log)
	wg.Add(1)
	go func() { defer wg.Done(); reactors.Run(projCtx) }()
	if cfg.Demo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keepDemoTimetable(projCtx, log, demoRefillEvery, func(now time.Time) error {
				return seedDemoTimetable(projCtx, cmds, flights, reference, cfg.DemoDays, now)
			})
		}()
	}
	// Background jobs: the usage counts go to their bucket every few
	// seconds, and once more after the last request; orphaned files of
	// documents, and what crashes left of files and snapshots, are swept
	// every hour.
	for _, job := range []func(context.Context){usage.Run, commands.NewFileSweep(files, documents, store, log, snapshotStores...).Run} {
		wg.Add(1)
		go func() { defer wg.Done(); job(projCtx) }()
	}

	shipmentFacts := projections.ShipmentFacts{Bookings: bookings, Shipments: shipments, Stock: stock, Flights: flights}
	payloads := &views.Renderer{Identity: identity, Quotes: quotes, Bookings: bookings, Stock: stock, Flights: flights, ShipmentFacts: shipmentFacts,
		Demo: cfg.Demo}
	deliveries, err := store.Queue(ctx, "webhooks")
	if err != nil {
		return err
	}
	dispatcher, err := newDispatcher(store, deliveries, cfg, webhookKey, previousWebhookKey, log, subscriptions, payloads, commands.WebhookRecorder{H: cmds}, projector)
	if err != nil {
		return err
	}
	dispatcher.Attempted = m.Delivered
	m.WatchFailingSubscriptions(dispatcher.Failing)
	if err := checkWebhookKeys(log, cfg, dispatcher.Sealer, subscriptions.List("")); err != nil {
		return err
	}
	wg.Add(1)
	go func() { defer wg.Done(); dispatcher.Run(projCtx) }()
	m.WatchBacklogs(func(ctx context.Context) ([]metrics.Backlog, error) { return backlogs(ctx, store, deliveries) })

	maintenance := projections.NewMaintenance(projCtx, projector, store, log)
	m.WatchJobs(func(context.Context) ([]metrics.Job, error) { return maintenanceJobs(maintenance), nil })
	api, err := httpapi.New(httpapi.Options{Demo: cfg.Demo, MaxBodyBytes: cfg.MaxBodyBytes, MaxUploadBytes: cfg.MaxUploadBytes, DocumentQuota: cfg.DocumentQuota, PublicURL: cfg.PublicURL, TrustedProxies: cfg.TrustedProxies, HashCost: cfg.PasswordHashCost,
		RateLimits: cfg.RateLimits, Metering: cfg.Metering, ReadyMaxLag: uint64(cfg.ReadyMaxLag), ReadyStall: cfg.ReadyStall}, httpapi.Deps{
		Log: log, Commands: cmds, Projector: projector, Maintenance: maintenance, Identity: identity, Quotes: quotes,
		Flights: flights, Rates: rates, Bookings: bookings, Stock: stock, Reference: reference, Audit: audit, Usage: usage,
		Webhooks: subscriptions, Dispatcher: dispatcher, Shipments: shipments, Documents: documents, History: store, ShipmentFacts: shipmentFacts, Files: files,
		Tokens: tokenAuthority, Responses: responses, Ready: store.Connected, Metrics: m,
	})
	if err != nil {
		return err
	}

	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && cfg.Demo && !tcp.IP.IsLoopback() {
		log.Warn("demo mode on a non-loopback address: the demo credentials, an admin among them, are public; set CARGO_DEMO=false", "addr", ln.Addr().String())
	}
	// Failures the audit log folded are recorded once their minute is
	// over, and at the stop, before the store closes.
	wg.Add(1)
	go func() { defer wg.Done(); api.RecordFoldedFailures(projCtx) }()
	srv.RegisterOnShutdown(api.ShuttingDown)
	handler.Store(new(http.Handler(api)))
	log.Info("cargod ready", "took", time.Since(started).Round(time.Millisecond).String(), "sequence", projector.Applied()) // the stream as far as the read models hold it
	fmt.Fprintf(stdout, "cargod listening on %s\n", base)
	if cfg.Demo {
		printDemoHelp(stdout, base)
	} else if cfg.AdminSecret == "" && !hasAdmin(identity) {
		printNoAdminHelp(stdout)
	}

	serving = true
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	if cfg.ShutdownDrain > 0 {
		// Load balancers that probe readiness (Kubernetes among them)
		// learn of the stop only from /readyz, some seconds later:
		// until then the replica serves, on connections it closes after
		// each answer so that clients come back through the balancer.
		api.Drain()
		srv.SetKeepAlivesEnabled(false)
		log.Info("shutting down: draining, /readyz answers 503", "for", cfg.ShutdownDrain.String())
		time.Sleep(cfg.ShutdownDrain)
	}
	return stopServing(srv, cfg.ShutdownTimeout, log)
}

// stopServing finishes the requests in flight for up to timeout
// (CARGO_SHUTDOWN_TIMEOUT), and cuts off those still in flight then,
// saying so: a stop all the same, which goes on to its snapshot and its
// last line. (It ended with Go's "context deadline exceeded" and exit 1,
// which supervisors read as a failure, and said nothing of the requests.)
func stopServing(srv *http.Server, timeout time.Duration, log *slog.Logger) error {
	log.Info("shutting down: finishing in-flight requests")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		log.Warn("shutting down: requests still in flight after CARGO_SHUTDOWN_TIMEOUT cut off", "after", timeout.String())
		return srv.Close()
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// starting is how far run has come, for the starting handler's /readyz.
type starting struct {
	mu        sync.Mutex
	stage     string
	store     *eventstore.Store
	projector *projections.Projector
}

func (s *starting) set(stage string, store *eventstore.Store, projector *projections.Projector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stage, s.store, s.projector = stage, store, projector
}

func (s *starting) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stage
}

func (s *starting) progress() httpapi.StartProgress {
	s.mu.Lock()
	p := httpapi.StartProgress{Stage: s.stage}
	store, projector := s.store, s.projector
	s.mu.Unlock()
	if store != nil {
		p.NATSConnected = store.Connected()
	}
	if projector != nil {
		// The replay's end, as the projector asked the stream once: a
		// probe costs the stream nothing.
		p.Applied, p.StreamLast = projector.Applied(), projector.Target()
	}
	return p
}

// sharedKey is the configured key, or else the one all replicas share in
// the secrets bucket, generated by the first replica that needs it.
func sharedKey(ctx context.Context, log *slog.Logger, secrets func() (*vault.Vault, error), cfg config.Config, configured []byte, name string,
	generate func() ([]byte, error)) ([]byte, error) {
	if len(configured) > 0 {
		return configured, nil
	}
	v, err := secrets()
	if err != nil {
		return nil, err
	}
	var key []byte
	err = untilAvailable(ctx, log, "reading the "+name, func() (err error) {
		key, err = v.Get(ctx, name, generate)
		return err
	})
	return key, sealingKeyAdvice(err, cfg)
}

// warnOpenKeyFiles warns of a key file in the data directory that others
// than its owner may read. cargod writes them 0600, but a key restored
// from a backup store, downloaded or written by hand is often 0644: the
// sealing key then is every local user's to read.
func warnOpenKeyFiles(log *slog.Logger, cfg config.Config) {
	if cfg.NATSURL != "" {
		return // the data directory holds neither
	}
	for _, name := range []string{secretsKeyFile, eventstore.ListenSeedFile} {
		path := filepath.Join(cfg.DataDir, name)
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			log.Warn("cargod: a key file may be read by others than its owner: chmod 600 it", "file", path, "mode", fmt.Sprintf("%#o", fi.Mode().Perm()))
		}
	}
}

// resealSecrets seals every secret of the bucket with the current sealing
// key, as CARGO_SECRETS_PREVIOUS_KEY asks: those this start reads, and
// those it does not (with CARGO_SIGNING_KEY and CARGO_WEBHOOK_KEY set, it
// reads none), which the key being replaced would otherwise take with it
// when the operator deletes it. The log says when that key can go.
func resealSecrets(ctx context.Context, log *slog.Logger, secrets func() (*vault.Vault, error), cfg config.Config) error {
	v, err := secrets()
	if err != nil {
		return err
	}
	var n int
	err = untilAvailable(ctx, log, "sealing the secrets with the current key", func() (err error) {
		n, err = v.Reseal(ctx)
		return err
	})
	if err != nil {
		return sealingKeyAdvice(err, cfg)
	}
	log.Info("vault: every secret kept in JetStream is sealed with the current key: CARGO_SECRETS_PREVIOUS_KEY can be removed", "secrets", n)
	return nil
}

// untilAvailable runs step, a part of the start that reads or writes the
// store, until it succeeds, fails for good, or ctx ends, logging each
// failure: a store that does not answer for a moment (a stream electing
// its leader, as a node of the cluster is lost or restarted) is waited
// for, where the start stopped at the first such failure. Each step may
// run again: its commands have fixed ids, so a repeat appends nothing.
func untilAvailable(ctx context.Context, log *slog.Logger, what string, step func() error) error {
	return retry.UntilAvailable(ctx, step, func(err error, wait time.Duration) {
		log.Warn("the event store did not answer while starting; trying again", "step", what, "in", wait.Round(time.Millisecond).String(), "err", err)
	})
}

// errWebhookKeyLost stops a start that would generate a webhook key for a
// stream whose subscriptions' secrets were sealed with another.
var errWebhookKeyLost = errors.New("CARGO_WEBHOOK_KEY: the secrets bucket holds no webhook key, but the event stream holds webhook subscriptions, " +
	"whose secrets were sealed with one (the stream restored without its secrets bucket, KV_<stream>_secrets?): restore the bucket from the same backup " +
	"as the stream, with the key that seals it, or set CARGO_WEBHOOK_KEY to the webhook key; to go on without it, set CARGO_WEBHOOK_KEY to a new key " +
	"(openssl rand -base64 32): no subscription's secret can then be opened, and each must be registered again")

// secretsKeyFile, in the data directory, keeps the key that seals the
// secrets bucket when CARGO_SECRETS_KEY is not set.
const secretsKeyFile = "secrets.key"

// openVault opens the secrets bucket with the sealing key: the configured
// one, or with the embedded server the key file in the data directory.
// With an external server the replicas have data directories of their
// own, so a key file would give each a key of its own.
func openVault(ctx context.Context, store *eventstore.Store, cfg config.Config, log *slog.Logger) (*vault.Vault, error) {
	bucket, err := store.Bucket(ctx, "secrets", 0)
	if err != nil {
		return nil, err
	}
	keys := vault.Keys{Current: cfg.SecretsKey, Previous: cfg.SecretsPrevious}
	if len(keys.Current) == 0 && cfg.NATSURL == "" {
		keys.File = filepath.Join(cfg.DataDir, secretsKeyFile)
	}
	v, err := vault.New(bucket, keys, log)
	return v, sealingKeyAdvice(err, cfg)
}

const changingKeys = `to change keys, give the old one as CARGO_SECRETS_PREVIOUS_KEY (README, "Security")`

// sealingKeyAdvice adds to a missing or wrong sealing key what the
// operator can do about it.
func sealingKeyAdvice(err error, cfg config.Config) error {
	keyFile := filepath.Join(cfg.DataDir, secretsKeyFile)
	switch {
	case errors.Is(err, vault.ErrNoKey) && cfg.NATSURL != "":
		return fmt.Errorf("%w: with an external NATS server, set CARGO_SECRETS_KEY (or CARGO_SECRETS_KEY_FILE) on every replica to the same "+
			"32 random bytes in base64 (openssl rand -base64 32), the key the secrets were sealed with if they are; "+
			"or set CARGO_SIGNING_KEY and CARGO_WEBHOOK_KEY", err)
	case errors.Is(err, vault.ErrNoKey):
		return fmt.Errorf("%w: restore %s from a backup, or set CARGO_SECRETS_KEY to the key the secrets were sealed with", err, keyFile)
	case errors.Is(err, vault.ErrWrongKey) && len(cfg.SecretsPrevious) > 0:
		// Not "give the old one as CARGO_SECRETS_PREVIOUS_KEY": the
		// operator did, and it is not the old one.
		return fmt.Errorf("%w (it opens neither with %s nor with CARGO_SECRETS_PREVIOUS_KEY): set CARGO_SECRETS_PREVIOUS_KEY to the key the secrets "+
			"were sealed with, the key file or CARGO_SECRETS_KEY before it was replaced", err, currentKeyName(cfg))
	case errors.Is(err, vault.ErrWrongKey) && len(cfg.SecretsKey) > 0:
		return fmt.Errorf("%w (the key is CARGO_SECRETS_KEY): set the key the secrets were sealed with, as on the other replicas; %s", err, changingKeys)
	case errors.Is(err, vault.ErrWrongKey):
		return fmt.Errorf("%w (the key is in %s): restore the key file from a backup, or set CARGO_SECRETS_KEY to the key the secrets were sealed with; %s",
			err, keyFile, changingKeys)
	}
	return err
}

// currentKeyName names where the sealing key is: CARGO_SECRETS_KEY, or the
// key file.
func currentKeyName(cfg config.Config) string {
	if len(cfg.SecretsKey) > 0 {
		return "CARGO_SECRETS_KEY"
	}
	return filepath.Join(cfg.DataDir, secretsKeyFile)
}

// replacedWebhookKey is the webhook key being replaced
// (CARGO_WEBHOOK_PREVIOUS_KEY): the one given, the generated one kept in
// JetStream, or none.
func replacedWebhookKey(ctx context.Context, log *slog.Logger, secrets func() (*vault.Vault, error), cfg config.Config) ([]byte, error) {
	if !cfg.WebhookPreviousGenerated {
		return cfg.WebhookPrevious, nil
	}
	return sharedKey(ctx, log, secrets, cfg, nil, "webhook-key", func() ([]byte, error) {
		return nil, errors.New("CARGO_WEBHOOK_PREVIOUS_KEY is generated, but no webhook key was ever generated: leave it out")
	})
}

// checkWebhookKeys stops a start whose CARGO_WEBHOOK_PREVIOUS_KEY is not
// the key that sealed the live subscriptions the new key does not open:
// started, every delivery to them failed, retried for days and logged
// only once given up. Without a previous key, such subscriptions are those
// left sealed with a key the operator dropped (README, "Rotating the
// webhook key"), or a previous key forgotten: the start goes on, and says
// so. With one, it says how many subscriptions still need it, so that the
// operator learns when the rotation is over.
func checkWebhookKeys(log *slog.Logger, cfg config.Config, sealer *webhooks.Sealer, subs []domain.Webhook) error {
	previous, lost := sealer.Check(subs)
	rotating := cfg.WebhookPreviousGenerated || len(cfg.WebhookPrevious) > 0
	if rotating && len(lost) == 0 {
		if len(previous) == 0 {
			log.Info("no live webhook subscription is sealed with CARGO_WEBHOOK_PREVIOUS_KEY: it can be removed")
		} else {
			log.Info("live webhook subscriptions sealed with CARGO_WEBHOOK_PREVIOUS_KEY, which it must open until they are registered again",
				"subscriptions", len(previous), "ids", shownWebhooks(previous))
		}
	}
	if len(lost) == 0 {
		return nil
	}
	ids := shownWebhooks(lost)
	if rotating {
		return fmt.Errorf("CARGO_WEBHOOK_PREVIOUS_KEY: the secrets of %d webhook subscriptions open with neither CARGO_WEBHOOK_KEY nor CARGO_WEBHOOK_PREVIOUS_KEY "+
			"(%s): set CARGO_WEBHOOK_PREVIOUS_KEY to the key they were sealed with; to give them up, start without CARGO_WEBHOOK_PREVIOUS_KEY and delete them",
			len(lost), strings.Join(ids, ", "))
	}
	log.Warn("webhook subscriptions whose secret opens with neither CARGO_WEBHOOK_KEY nor CARGO_WEBHOOK_PREVIOUS_KEY: every delivery to them fails; "+
		"set CARGO_WEBHOOK_PREVIOUS_KEY to the key they were sealed with, or have their owners register them again", "subscriptions", len(lost), "ids", ids)
	return nil
}

// shownWebhooks names the first ten of subs, for a log line or an error.
func shownWebhooks(subs []domain.Webhook) []string {
	var ids []string
	for _, w := range subs[:min(len(subs), 10)] {
		ids = append(ids, w.ID+" ("+w.OrganizationID+")")
	}
	return ids
}

// newDispatcher sets up webhook delivery through the work queue: the key
// that seals subscribers' secrets (and the one it replaces, which still
// opens them), and the retry schedule.
func newDispatcher(store *eventstore.Store, queue *eventstore.Queue, cfg config.Config, key, previous []byte, log *slog.Logger, subs *projections.Webhooks,
	payloads *views.Renderer, rec commands.WebhookRecorder, readers *projections.Projector) (*webhooks.Dispatcher, error) {
	sealer, err := webhooks.NewSealer(key, previous)
	if err != nil {
		return nil, err
	}
	// 128 deliveries at once: each waits mostly on its receiver and on the
	// group commit of its recorded attempt, so more senders make fuller
	// batches (measured: 2.4k verified deliveries/s against 1.9-2.1k with 64).
	return &webhooks.Dispatcher{Events: store, Queue: queue, Subs: subs, Render: payloads.Render, Receives: payloads.Receives, Recorder: rec, Readers: readers,
		Sealer: sealer, Guard: webhooks.Guard{AllowPrivate: cfg.WebhookPrivate}, Schedule: cfg.WebhookSchedule, Log: log,
		Parallel: 256, InHand: 1024, PerSubscription: 64}, nil
}

// backlogs are the backlogs of the reactors, the webhook dispatcher and
// the queue of webhook deliveries.
func backlogs(ctx context.Context, store *eventstore.Store, deliveries *eventstore.Queue) ([]metrics.Backlog, error) {
	all, err := store.Backlogs(ctx)
	if err != nil {
		return nil, err
	}
	queued, err := deliveries.Backlog(ctx)
	if err != nil {
		return nil, err
	}
	var out []metrics.Backlog
	for _, b := range append(all, queued) {
		out = append(out, metrics.Backlog{Consumer: b.Consumer, Pending: b.Pending, InHand: b.InHand, Parked: b.Parked})
	}
	return out, nil
}

// maintenanceJobs are the newest rebuild and verification of the read
// models, for the metrics: none of a kind that did not run.
func maintenanceJobs(maintenance *projections.Maintenance) []metrics.Job {
	var jobs []metrics.Job
	for _, kind := range []projections.JobKind{projections.Rebuild, projections.Verify} {
		if s, err := maintenance.Status(kind); err == nil {
			jobs = append(jobs, metrics.Job{Kind: string(kind), Running: s.State == projections.JobRunning, Done: s.Done, Total: s.Total})
		}
	}
	return jobs
}

// serveMetrics serves GET /metrics on addr, to anyone, until stop is
// called: for a Prometheus that reaches addr on a private network. It has
// no authentication, so addr must be one only the scraper reaches.
func serveMetrics(addr string, m *metrics.Metrics, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("CARGO_METRICS_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	log.Info("metrics served without authentication", "url", "http://"+ln.Addr().String()+"/metrics")
	return func() { srv.Close() }, nil
}

// serveProfiles serves Go's profiles (net/http/pprof) on addr, a loopback
// address, until stop is called: what an operator measuring a slow
// replica needs.
func serveProfiles(addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("CARGO_PROFILE_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	log.Info("profiles served", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() { srv.Close() }, nil
}

// lookup is os.Getenv over environ: the first of a name counts, as there.
func lookup(environ []string) func(string) string {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			if _, seen := vars[k]; !seen {
				vars[k] = v
			}
		}
	}
	return func(k string) string { return vars[k] }
}
