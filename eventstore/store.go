// Package eventstore keeps Cargostream's events in a NATS JetStream stream,
// with the key-value buckets, object store and work queue beside it. It is
// the only package that talks to NATS: it turns domain's Envelope and
// Record into messages and back, and implements the interfaces that
// commands, projections, webhooks and httpapi declare for what they need.
// Only cmd/cargod and the tools import it.
package eventstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/vault"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"golang.org/x/sync/errgroup"
)

// unavailable marks err as domain.ErrStoreUnavailable if a wait may cure
// it: NATS did not answer in time, or its cluster has no leader or quorum.
func unavailable(err error) error {
	if transient(err) {
		return fmt.Errorf("%w: %w", domain.ErrStoreUnavailable, err)
	}
	return err
}

// tellFull logs, at most once a minute, that the server refuses writes
// for want of room: every write fails until the operator makes some, and
// a client is told only that the store has none.
func (s *Store) tellFull(err error) {
	now, last := time.Now().UnixNano(), s.fullTold.Load()
	if last != 0 && now-last < int64(time.Minute) {
		return // told within the minute
	}
	if !s.fullTold.CompareAndSwap(last, now) {
		return // another write tells it
	}
	s.log.Error("eventstore: the NATS server has no room for more events and refuses every write: free disk space where it keeps "+
		"JetStream's files, or raise its JetStream storage limit (max_file_store) or the account's", "err", err)
}

// tellRoom logs, once, that an append was stored after tellFull said the
// server refused every write: the operator who made room learns that it
// was enough, as a lost connection's line has one saying it is back (the
// ERROR line stopped coming, and nothing else said so).
func (s *Store) tellRoom() {
	if last := s.fullTold.Load(); last != 0 && s.fullTold.CompareAndSwap(last, 0) {
		s.log.Info("eventstore: the NATS server stores writes again: it has room for more events")
	}
}

// refusedWrite is the error of a write to a bucket or an object store that
// failed with err: the store full, told as an append's refusal is, when
// the server has no room for it; else the store unavailable. (Such writes
// were all "unavailable": a POST with an Idempotency-Key on a server with
// no room was told the store did not answer, to retry in a second.)
func (s *Store) refusedWrite(err error) error {
	if full(err) {
		s.tellFull(err)
		return fmt.Errorf("%w: %w", domain.ErrStoreFull, err)
	}
	return unavailable(err)
}

// full reports whether err is the server's refusal of a write for want of
// room: its disk or its JetStream storage limit full (nats-server answers
// "insufficient resources"), or the account's limit reached.
func full(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && slices.Contains([]jetstream.ErrorCode{
		10002, // resource limits exceeded for account
		10023, // insufficient resources
		10028, // insufficient memory resources available
		10047, // insufficient storage resources available
	}, apiErr.ErrorCode)
}

// dedupeWindow is how long JetStream remembers event ids to drop repeated
// publishes. Older repeats are caught by the command id in the aggregate's
// history, so the window only needs to cover in-flight retries.
const dedupeWindow = 10 * time.Minute

// Options says which NATS server to use and how to name things on it.
type Options struct {
	URL       string // external server; empty starts an embedded one
	CredsFile string // credentials for the external server
	NkeyFile  string // or the seed of its nkey user, such as an embedded server's ListenSeedFile
	DataDir   string // embedded: JetStream files go to DataDir/jetstream
	Listen    string // embedded: optional loopback host:port for other clients
	// ListenNkey is the public key (U…) of the nkey user whom the embedded
	// server accepts on Listen. Empty: the user whose seed is in
	// DataDir/ListenSeedFile, generated on the first start with Listen.
	ListenNkey string
	Stream     string // stream name, e.g. CARGO
	Replicas   int    // stream replicas (external cluster: 3)
	Logger     *slog.Logger

	// Existing uses the stream as it is: Open neither creates nor updates
	// it, and fails if it does not exist. Tools that only read set it, so
	// that they cannot change the stream's settings (such as Replicas).
	Existing bool

	// ConnectOnce fails Open when its one attempt to connect to the
	// external server fails (refused, or no answer within the client's
	// connect timeout, 2 s), with a *ConnectError, where Open would try
	// again until ctx ends: to a tool, an address nothing answers at is a
	// mistake to report, not a cluster to wait for. A server that answers
	// is still waited for while the stream is provisioned, until ctx ends.
	ConnectOnce bool

	// ConsumerAttempts is how many failures in a row make a consumer
	// (Consume) park an event; 0 means DefaultConsumerAttempts.
	ConsumerAttempts int
	// Observer hears what the store does, for metrics; nil: nobody.
	Observer Observer
	// RecordCacheBytes is about how much memory the events RecordsAt
	// read may take, kept to be read again (see recordCache); 0 means
	// DefaultRecordCacheBytes, a negative number none.
	RecordCacheBytes int
}

// Store appends and reads events. It is safe for concurrent use.
type Store struct {
	srv       *server.Server // nil with an external server
	nc        *nats.Conn
	js        jetstream.JetStream
	stream    jetstream.Stream
	name      string
	prefix    string
	replicas  int
	upcasters map[upcasterKey]Upcaster
	// unreadable are the sequences of the events handedOn has logged as
	// unreadable: each is logged once, not at every load of its
	// aggregate (there are none, unless written past the service).
	unreadable sync.Map
	// fullTold is when tellFull last logged (Unix nanoseconds), 0: never,
	// or an append stored since (see tellRoom).
	fullTold atomic.Int64
	records  *recordCache // the events RecordsAt read; nil: none kept
	log      *slog.Logger
	unlock   func() // releases the embedded data directory
	// inProcessPassword lets this process's own connections in when the
	// embedded server asks for credentials; it is made at start and
	// never leaves memory.
	inProcessPassword string
	listenNkey        string // the public key of the nkey user Listen accepts
	// dial opens a connection to the server, calling reconnected (if not
	// nil) each time it is made again; committers have their own, so
	// that their batches do not queue behind the deliveries to the read
	// models and reactors.
	dial func(name string, reconnected func(), extra ...nats.Option) (*nats.Conn, error)
	// connectErr is why the last attempt to connect to an external
	// server failed: the client retries without saying, and the warnings
	// while Open waits tell it.
	connectErr atomic.Pointer[string]
	committer  *committer // of the event stream
	// committers are every one, to close with the store; a committer
	// started once the store is closing is refused.
	committersMu sync.Mutex
	committers   []*committer
	closing      bool
	closeOnce    sync.Once // Close's work, which other callers wait for

	existing   bool          // see Options.Existing
	obs        Observer      // never nil
	attempts   int           // see Options.ConsumerAttempts
	retryPause time.Duration // a consumer's first pause after a failure; later ones double
	// retryAckWait is how long the retry of a parked event left in hand
	// by a process that died waits before it is handed out again.
	retryAckWait time.Duration
	parkedMu     sync.Mutex
	parked       jetstream.Stream // the dead-letter stream (parked.go), once opened

	sessionsMu sync.Mutex
	sessions   map[string]*lanes // each consumer's session on this replica, by the consumer's name

	// connMu guards conn, a context of the store's connection to NATS as
	// it is now, which ends when the connection is made again (see
	// connection).
	connMu  sync.Mutex
	conn    context.Context
	newConn context.CancelFunc

	// readConsumersRefused, set, has every try to make a read's consumer
	// answered as a cluster electing its meta leader answers: tests
	// inject the fault there.
	readConsumersRefused atomic.Bool
}

// Open connects to (or starts) the NATS server and provisions the stream.
func Open(ctx context.Context, o Options) (_ *Store, err error) {
	if o.Stream == "" {
		o.Stream = "CARGO"
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ConsumerAttempts == 0 {
		o.ConsumerAttempts = DefaultConsumerAttempts
	}
	if o.Observer == nil {
		o.Observer = unobserved{}
	}
	if o.RecordCacheBytes == 0 {
		o.RecordCacheBytes = DefaultRecordCacheBytes
	}
	s := &Store{
		name:         o.Stream,
		prefix:       strings.ToLower(o.Stream),
		replicas:     o.Replicas,
		upcasters:    map[upcasterKey]Upcaster{},
		log:          o.Logger,
		existing:     o.Existing,
		obs:          o.Observer,
		attempts:     o.ConsumerAttempts,
		retryPause:   time.Second,
		retryAckWait: time.Minute,
		sessions:     map[string]*lanes{},
		records:      newRecordCache(o.RecordCacheBytes),
	}
	if !validToken(s.prefix) {
		return nil, fmt.Errorf("eventstore: stream name %q cannot be a subject token", o.Stream)
	}
	defer func() {
		if err != nil {
			// Why the connection failed (such as an authorization
			// violation) says more than the timeout it led to.
			switch why := s.connectErr.Load(); {
			case s.nc != nil && s.nc.LastError() != nil && !errors.Is(err, s.nc.LastError()):
				err = fmt.Errorf("%w (the NATS connection: %w)", err, s.nc.LastError())
			case why != nil && s.nc != nil && !s.nc.IsConnected():
				// A server that refuses the connection leaves no last
				// error: the attempts to reach it are reconnections.
				err = fmt.Errorf("%w (the NATS connection: %s)", err, *why)
			}
			s.Close()
		}
	}()
	if o.URL == "" {
		if err := s.startEmbedded(o); err != nil {
			return nil, err
		}
		s.dial = func(name string, reconnected func(), extra ...nats.Option) (*nats.Conn, error) {
			opts := append(s.connectionOptions(name, reconnected), nats.InProcessServer(s.srv), nats.UserInfo(inProcessUser, s.inProcessPassword))
			nc, err := nats.Connect("", append(opts, extra...)...)
			if err != nil {
				return nil, fmt.Errorf("eventstore: in-process connection: %w", err)
			}
			return nc, nil
		}
	} else {
		if o.CredsFile != "" {
			if err := checkCredentials(o.CredsFile); err != nil {
				return nil, err
			}
		}
		s.dial = func(name string, reconnected func(), extra ...nats.Option) (*nats.Conn, error) {
			// A cluster that is not up yet is waited for, here and in
			// provisioning; with ConnectOnce, in provisioning only. A
			// node that dies without closing its connections (its
			// machine lost power, its network was cut) is noticed only
			// by unanswered pings: nats.go's default, one every 2
			// minutes and 2 unanswered, left a replica's writes failing
			// for minutes. A ping every 2 s, 3 unanswered, moves to
			// another node within 6–8 s and gives a loaded server over
			// 4 s to answer.
			// The server the connection was last made to, for the line
			// that says it is lost: nats.go tells the handler once it
			// has none, and the line named no server, where the line
			// saying it is back names one.
			var conn atomic.Pointer[nats.Conn]
			var lastServer atomic.Pointer[string]
			noteServer := func() {
				if nc := conn.Load(); nc != nil {
					u := nc.ConnectedUrlRedacted()
					lastServer.Store(&u)
				}
			}
			noted := func() {
				noteServer()
				if reconnected != nil {
					reconnected()
				}
			}
			opts := append(s.connectionOptions(name, noted), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(!o.ConnectOnce),
				nats.PingInterval(2*time.Second), nats.MaxPingsOutstanding(3),
				nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
					why := err.Error()
					s.connectErr.Store(&why)
				}),
				// Said, so that a reader following the stream, or an
				// operator reading the log, knows why nothing comes.
				nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
					if !nc.IsClosed() {
						server := ""
						if u := lastServer.Load(); u != nil {
							server = *u
						}
						s.log.Warn("eventstore: the connection to NATS is lost; reconnecting", "connection", name, "server", server, "err", err)
					}
				}))
			// The client reports a first connection refused as "no servers
			// available" alone: the dialer keeps why, for the one attempt.
			dialer := &recordingDialer{Dialer: net.Dialer{Timeout: nats.DefaultTimeout}}
			if o.ConnectOnce {
				opts = append(opts, nats.SetCustomDialer(dialer))
			}
			if o.CredsFile != "" {
				opts = append(opts, nats.UserCredentials(o.CredsFile))
			}
			if o.NkeyFile != "" {
				nkey, err := nats.NkeyOptionFromSeed(o.NkeyFile)
				if err != nil {
					return nil, fmt.Errorf("eventstore: nkey seed file %s: %w", o.NkeyFile, err)
				}
				opts = append(opts, nkey)
			}
			nc, err := nats.Connect(o.URL, append(opts, extra...)...)
			if err != nil {
				if why := dialer.failure(); errors.Is(err, nats.ErrNoServers) && why != nil {
					err = why
				}
				return nil, &ConnectError{URL: o.URL, Err: err, Refused: refusedCredentials(err)}
			}
			conn.Store(nc)
			noteServer()
			return nc, nil
		}
	}
	s.conn, s.newConn = context.WithCancel(context.Background())
	if s.nc, err = s.dial("cargostream", s.renewConnection); err != nil {
		return nil, err
	}
	if s.js, err = jetstream.New(s.nc); err != nil {
		return nil, err
	}
	if o.Existing {
		err := s.provision(ctx, "stream "+s.name, func(ctx context.Context) (err error) {
			s.stream, err = s.js.Stream(ctx, s.name)
			return err
		})
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("%w: %s", ErrNoSuchStream, s.name)
		}
		if err != nil {
			return nil, fmt.Errorf("eventstore: stream %s: %w", s.name, err)
		}
		s.replicas = s.stream.CachedInfo().Config.Replicas
	} else if err := s.provisionStream(ctx, o.Replicas); err != nil {
		return nil, err
	}
	if s.committer, err = s.newCommitter("events", s.obs); err != nil {
		return nil, err
	}
	return s, nil
}

// MissingEvents is how many of the stream's sequences up to its last held
// no event when the store was opened. cargod's stream denies deletes and
// purges, so each is an event lost (a damaged file, a restore cut short),
// which the read models built from the stream lack.
func (s *Store) MissingEvents() uint64 {
	state := s.stream.CachedInfo().State
	return state.LastSeq - min(state.Msgs, state.LastSeq)
}

// provisionStream creates the event stream, or updates it to the settings
// of this version.
func (s *Store) provisionStream(ctx context.Context, replicas int) error {
	cfg := jetstream.StreamConfig{
		Name:        s.name,
		Description: "Cargostream events: the system of record",
		Subjects:    []string{s.everyEvent()},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardNew,
		MaxMsgs:     -1,
		MaxBytes:    -1,
		MaxAge:      0,
		DenyDelete:  true,
		DenyPurge:   true,
		Duplicates:  dedupeWindow,
		Replicas:    replicas,
		// A decision's events are one atomic batch. A stream made
		// before this setting existed is updated here.
		AllowAtomicPublish: true,
	}
	err := s.provision(ctx, "stream "+s.name, func(ctx context.Context) (err error) {
		s.stream, err = s.js.CreateOrUpdateStream(ctx, cfg)
		return err
	})
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeReplicasNotClustered {
		return fmt.Errorf("%w (%d asked for stream %s)", ErrReplicasUnclustered, replicas, s.name)
	}
	if err != nil {
		return fmt.Errorf("eventstore: provisioning stream %s with %d replicas: %w", s.name, replicas, err)
	}
	if !s.stream.CachedInfo().Config.AllowAtomicPublish {
		return fmt.Errorf("eventstore: the NATS server does not support atomic batch publish on stream %s: it needs nats-server 2.12 or later", s.name)
	}
	return nil
}

// ErrReplicasUnclustered is a stream of more replicas than one asked of a
// NATS server that is no cluster, which keeps one copy of a stream.
var ErrReplicasUnclustered = errors.New("eventstore: the NATS server is no cluster: it keeps one replica of a stream")

// errCodeReplicasNotClustered is nats-server's "replicas > 1 not supported
// in non-clustered mode" (errors.json).
const errCodeReplicasNotClustered jetstream.ErrorCode = 10074

func (s *Store) startEmbedded(o Options) error {
	// The server itself would share its files with another process.
	unlock, err := lockDir(o.DataDir)
	if err != nil {
		return err
	}
	s.unlock = unlock
	opts := &server.Options{
		ServerName: "cargod",
		JetStream:  true,
		StoreDir:   filepath.Join(o.DataDir, "jetstream"),
		// An acknowledged write must survive a crash of the machine, so
		// every write is synced before the acknowledgement. The default
		// syncs every two minutes and loses acknowledged writes.
		SyncAlways: true,
		DontListen: true,
		NoSigs:     true,
		NoLog:      true,
	}
	if o.Listen != "" {
		if err := s.listen(opts, o); err != nil {
			return err
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("eventstore: embedded server: %w", err)
	}
	s.srv = srv
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		return errors.New("eventstore: embedded server did not start within 30s (is the data directory in use by another process?)")
	}
	return nil
}

// ErrNoSuchStream is Open's error, with Existing, when the server has no
// stream of the name given: a mistake in the name, not an outage.
var ErrNoSuchStream = errors.New("eventstore: the server has no such stream")

// ConnectError is Open's error when it could not connect to the external
// server: with ConnectOnce, at its one attempt.
type ConnectError struct {
	URL     string
	Err     error // why: the dial's error when the client has no better
	Refused bool  // the server answered, and refused the credentials given (or the lack of them)
}

// refusedCredentials reports whether a connection failed because the
// server refused the client's credentials. nats.go hands the server's
// -ERR on as text ("nats: Authorization Violation"), not as its
// ErrAuthorization.
func refusedCredentials(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "authorization violation") || strings.Contains(msg, "authentication expired") ||
		strings.Contains(msg, "authentication revoked")
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("eventstore: connecting to %s: %v", e.URL, e.Err)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// recordingDialer dials as the client would, and keeps why its last dial
// failed.
type recordingDialer struct {
	net.Dialer
	mu  sync.Mutex // dials of reconnections come from the client's goroutine
	err error
}

func (d *recordingDialer) Dial(network, address string) (net.Conn, error) {
	c, err := d.Dialer.Dial(network, address)
	if err != nil {
		d.mu.Lock()
		d.err = err
		d.mu.Unlock()
	}
	return c, err
}

func (d *recordingDialer) failure() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// checkCredentials reads a credentials file as the client does at each
// connection attempt: one without a user JWT and its seed can never
// work, and the client, retrying for ever, would leave Open waiting as
// for a server that is not up.
func checkCredentials(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("eventstore: credentials file: %w", err)
	}
	token, err := jwt.ParseDecoratedJWT(b)
	if err == nil {
		_, err = jwt.DecodeUserClaims(token)
	}
	if err == nil {
		_, err = jwt.ParseDecoratedUserNKey(b)
	}
	if err != nil {
		return fmt.Errorf("eventstore: credentials file %s: not a user JWT and its seed: %w", file, err)
	}
	return nil
}

// ErrNotAUserNkey means the nkey the listen port is to accept is not the
// public key of an nkey user.
var ErrNotAUserNkey = errors.New("eventstore: not the public key of an nkey user (U…)")

// ListenSeedFile, in the data directory, holds the seed of the nkey user
// whom the embedded server accepts on its listen address, unless the
// options name another (ListenNkey).
const ListenSeedFile = "nats-listen.nk"

// inProcessUser is the user of the process's own connections to its
// embedded server.
const inProcessUser = "cargostream-in-process"

// listen sets the embedded server up to accept clients on o.Listen as
// well: clients that prove the nkey user's seed. Any process on the
// machine can connect to the port, and the buckets hold secrets (sealed,
// but their keys are what an intruder would want next), so a client must
// authenticate; and the port stays on loopback, the server having no TLS.
func (s *Store) listen(opts *server.Options, o Options) error {
	host, port, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return fmt.Errorf("eventstore: listen address %q: %w", o.Listen, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("eventstore: listen address %q is not a loopback address", o.Listen)
	}
	opts.DontListen = false
	opts.Host = host
	if opts.Port, err = strconv.Atoi(port); err != nil {
		return fmt.Errorf("eventstore: listen port %q: %w", port, err)
	}
	// Port 0 is any free one, as for every Go listener; the server reads
	// it as its default, 4222, and takes -1 for any free one.
	if opts.Port == 0 {
		opts.Port = server.RANDOM_PORT
	}
	// A port another process holds makes the server, which logs nothing
	// here, never ready: Open would wait 30 s and blame the data
	// directory. Any free one (-1) cannot be taken.
	if opts.Port > 0 {
		ln, err := net.Listen("tcp", o.Listen)
		if err != nil {
			return fmt.Errorf("eventstore: listen address %q: %w", o.Listen, err)
		}
		ln.Close()
	}
	if s.listenNkey = o.ListenNkey; s.listenNkey == "" {
		if s.listenNkey, err = listenSeed(filepath.Join(o.DataDir, ListenSeedFile)); err != nil {
			return err
		}
	} else if !nkeys.IsValidPublicUserKey(s.listenNkey) {
		return fmt.Errorf("%w: %q", ErrNotAUserNkey, s.listenNkey)
	}
	password := make([]byte, 32)
	rand.Read(password)
	s.inProcessPassword = base64.RawURLEncoding.EncodeToString(password)
	// Each user is allowed in by one door only: the seed's holder
	// through the port, this process in-process.
	opts.Nkeys = []*server.NkeyUser{{Nkey: s.listenNkey,
		AllowedConnectionTypes: map[string]struct{}{jwt.ConnectionTypeStandard: {}}}}
	opts.Users = []*server.User{{Username: inProcessUser, Password: s.inProcessPassword,
		AllowedConnectionTypes: map[string]struct{}{jwt.ConnectionTypeInProcess: {}}}}
	return nil
}

// listenSeed returns the public key of the nkey user whose seed is in
// path, generating the seed first if the file does not exist.
func listenSeed(path string) (string, error) {
	seed, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		user, err := nkeys.CreateUser()
		if err != nil {
			return "", fmt.Errorf("eventstore: generating the listener's nkey: %w", err)
		}
		if seed, err = user.Seed(); err != nil {
			return "", err
		}
		if err := vault.CreateFile(path, append(seed, '\n')); err != nil {
			return "", fmt.Errorf("eventstore: writing the listener's nkey seed: %w", err)
		}
	} else if err != nil {
		return "", fmt.Errorf("eventstore: the listener's nkey seed: %w", err)
	}
	user, err := nkeys.ParseDecoratedUserNKey(seed)
	if err != nil {
		return "", fmt.Errorf("eventstore: the listener's nkey seed %s: %w (delete the file to have a new one generated)", path, err)
	}
	defer user.Wipe()
	return user.PublicKey()
}

// ListenNkey is the public key of the nkey user whom the embedded server
// accepts on its listen address, or "" when it listens in-process only.
func (s *Store) ListenNkey() string { return s.listenNkey }

// Close has each committer finish the batch it has in flight and refuse
// the decisions behind it, drains the store's own connection (its reads,
// subscriptions and buckets), and stops the embedded server. Calls after
// the first, or beside it, wait for it and do nothing more.
func (s *Store) Close() {
	s.closeOnce.Do(s.close)
}

func (s *Store) close() {
	s.committersMu.Lock()
	s.closing = true
	committers := s.committers
	s.committersMu.Unlock()
	for _, c := range committers {
		c.close()
	}
	if s.nc != nil {
		closed := make(chan struct{})
		s.nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
		if err := s.nc.Drain(); err == nil {
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
			}
		}
		s.nc.Close()
	}
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
	}
	if s.unlock != nil {
		s.unlock()
		s.unlock = nil
	}
}

// Connected reports whether the NATS connection is up.
func (s *Store) Connected() bool { return s.nc.IsConnected() }

// ClientURL is the URL other processes can use to reach the embedded
// server, or "" when it listens in-process only.
func (s *Store) ClientURL() string {
	if s.srv == nil || s.srv.Addr() == nil {
		return ""
	}
	return s.srv.ClientURL()
}

// Append stores a decision: events on one aggregate, if the aggregate's
// last event is still at sequence expected (0: the aggregate must not
// exist yet). The events are stored all or none. It returns the stream
// sequence of each event, or domain.ErrAggregateChanged.
//
// Every write goes through Submit, and through the store's committer, which
// commits the decisions of many aggregates together (see committer.go).
// Each event's EventID is its Nats-Msg-Id, and a decision whose events are
// already stored where it expected them (a retry after a lost
// acknowledgement) is answered with their sequences instead of a conflict.
func (s *Store) Append(ctx context.Context, agg domain.Aggregate, expected uint64, events []domain.Envelope) ([]uint64, error) {
	ps, err := s.Submit(ctx, domain.Submission{Aggregate: agg, Expected: expected, Events: events})
	if err != nil {
		return nil, err
	}
	return ps[0].Wait(ctx)
}

// pendingAppend is a decision the store has taken, not yet known to be stored:
// the domain.PendingAppend that Submit returns.
type pendingAppend struct {
	s   *Store
	agg domain.Aggregate
	d   *decision
}

// Submit is Append in two steps: it hands a decision to the committer and
// returns, and Wait waits for it to be stored. A submission's After, if
// set, is the caller's pending decision on the same aggregate, submitted to
// this store, that it was decided after: it is then stored right after
// that one, in the same batch or the next, and fails with
// domain.ErrAggregateChanged if that one fails. So a busy aggregate takes
// many decisions per batch, instead of one per batch with the caller
// waiting in between.
//
// Several submissions are one decision across aggregates (a booking's
// confirmation takes capacity, an AWB number and the quote with it): on
// different aggregates, stored together in one atomic batch or not at
// all. When the batch is refused, or the committer finds a part stale,
// each part fails with domain.ErrAggregateChanged unless its own events
// are found stored where it expected them: an earlier try stored them,
// and the other parts' with them.
func (s *Store) Submit(ctx context.Context, parts ...domain.Submission) ([]domain.PendingAppend, error) {
	if len(parts) == 0 {
		return nil, errors.New("eventstore: a decision has at least one part")
	}
	ds := make([]*decision, len(parts))
	events := 0
	for i, p := range parts {
		d, err := s.decisionOf(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, other := range ds[:i] {
			if other.subject == d.subject {
				return nil, fmt.Errorf("eventstore: a decision has one part per aggregate, not two on %s", p.Aggregate)
			}
		}
		ds[i] = d
		events += len(d.msgs)
	}
	if events > maxBatch {
		return nil, fmt.Errorf("eventstore: a decision has at most %d events, not %d", maxBatch, events)
	}
	if len(ds) > 1 {
		for _, d := range ds {
			d.group = ds
		}
	}
	if err := claimFollowers(ds); err != nil {
		return nil, err
	}
	if err := s.committer.handOver(ctx, ds...); err != nil {
		unclaimFollowers(ds)
		// ctx ended or the store is closing: nothing a wait would cure.
		return nil, fmt.Errorf("eventstore: append to %s: %w", parts[0].Aggregate, err)
	}
	out := make([]domain.PendingAppend, len(ds))
	for i, d := range ds {
		out[i] = &pendingAppend{s: s, agg: parts[i].Aggregate, d: d}
	}
	return out, nil
}

// claimFollowers makes each decision of ds that follows another the one
// decision that follows it, or fails, claiming none: two decided after
// the same one would both be stored after it, though neither saw the
// other's events.
func claimFollowers(ds []*decision) error {
	for i, d := range ds {
		if d.after != nil && !d.after.followed.CompareAndSwap(false, true) {
			unclaimFollowers(ds[:i])
			return fmt.Errorf("eventstore: a decision on %s follows one that another decision follows already", d.subject)
		}
	}
	return nil
}

// unclaimFollowers undoes claimFollowers for ds, not handed over.
func unclaimFollowers(ds []*decision) {
	for _, d := range ds {
		if d.after != nil {
			d.after.followed.Store(false)
		}
	}
}

// decisionOf checks one submission and makes its decision.
func (s *Store) decisionOf(ctx context.Context, p domain.Submission) (*decision, error) {
	agg := p.Aggregate
	if !validToken(agg.Type) || !validToken(agg.ID) {
		return nil, fmt.Errorf("eventstore: aggregate %q is not a valid subject", agg)
	}
	if len(p.Events) == 0 { // too many: Submit counts all the parts' events
		return nil, fmt.Errorf("eventstore: a decision on %s has no events", agg)
	}
	prior, ours := p.After.(*pendingAppend)
	switch {
	case p.After != nil && (!ours || prior.s != s):
		return nil, fmt.Errorf("eventstore: a decision on %s can only follow one submitted to this store", agg)
	case p.After != nil && prior.agg != agg:
		return nil, fmt.Errorf("eventstore: a decision on %s cannot follow one on %s", agg, prior.agg)
	}
	d, err := newDecision(ctx, s.subject(agg), p.Expected, p.Events)
	if err != nil {
		return nil, err
	}
	if err := s.fits(d); err != nil {
		return nil, err
	}
	if p.After != nil {
		d.after = prior.d
	}
	return d, nil
}

// headerRoom is what the committer adds to a message's headers at most:
// the atomic batch's id, sequence and commit, and an expected sequence.
const headerRoom = 256

// fits refuses a decision with a message larger than the server takes
// (its max_payload, 1 MiB by default), before it goes to the committer:
// in a batch, it would make the whole batch fail, and every decision in
// it with a failure no retry cures.
func (s *Store) fits(d *decision) error {
	limit := s.nc.MaxPayload() - headerRoom
	for _, m := range d.msgs {
		if size := int64(m.Size()); size > limit {
			return domain.Errorf(domain.PayloadTooLarge, "the change is too large to store: %d bytes in one message, where the event store takes at most %d (the NATS server's max_payload)",
				size, limit)
		}
	}
	return nil
}

// Done is closed once p has its answer.
func (p *pendingAppend) Done() <-chan struct{} { return p.d.settled }

// Wait returns the stream sequence of each event of p once they are
// stored, or domain.ErrAggregateChanged; a decision larger than the NATS
// server takes in one atomic batch fails with domain.PayloadTooLarge.
func (p *pendingAppend) Wait(ctx context.Context) ([]uint64, error) {
	out := p.d.wait(ctx)
	if out.err != nil && !out.known && !unsent(out.err) && ctx.Err() == nil {
		// Stored by this very decision with the acknowledgement lost,
		// or by an earlier try of it: its events are where it expected.
		if last, ours := p.s.storedAsDecided(ctx, p.d); ours {
			out = outcome{last: last}
		}
	}
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(out.err, errWrongLast):
		return nil, domain.ErrAggregateChanged
	case errors.As(out.err, &apiErr) && apiErr.ErrorCode == errCodeBatchTooLarge:
		// Alone in its batch, and more than the server takes in one (a
		// server set with a smaller max_batch_size): no retry cures it.
		// Passed on as it came, it was a server error, an "internal
		// error" 500 that told the client nothing; a decision with a
		// message too large for the server is refused so (see fits).
		events := 0
		for _, d := range p.d.unit() {
			events += len(d.msgs)
		}
		return nil, domain.Errorf(domain.PayloadTooLarge, "the change is too large to store: %d events in one decision, where the NATS server takes at most %d in one atomic batch (its max_batch_size)",
			events, serverBatchLimit(apiErr, events))
	case out.err != nil && ctx.Err() == nil:
		err := fmt.Errorf("eventstore: append to %s: %w", p.agg, out.err)
		if full(err) {
			// Only a write is refused so: the same code answers a
			// consumer that cannot be placed.
			p.s.tellFull(err)
			return nil, fmt.Errorf("%w: %w", domain.ErrStoreFull, err)
		}
		return nil, unavailable(err)
	case out.err != nil:
		return nil, fmt.Errorf("eventstore: append to %s: %w", p.agg, out.err)
	}
	p.s.tellRoom()
	seqs := make([]uint64, len(p.d.msgs))
	for i := range seqs {
		seqs[i] = out.last - uint64(len(p.d.msgs)-1-i)
	}
	return seqs, nil
}

// unsent reports whether err is the committer's connection refusing to
// send: it keeps nothing while it reconnects (see newCommitter). The
// decision's commit never left this process, so nothing of it is stored,
// and no read need tell: that read would go through the other connection,
// which holds requests while it reconnects, and wait out the caller's
// deadline (an HTTP write's 5 s) while NATS is away. (A connection closed
// is no such answer: nats.go gives it too to a request sent whose answer
// the close cut off.)
func unsent(err error) bool {
	return errors.Is(err, nats.ErrReconnectBufExceeded)
}

// storedAsDecided reports whether d's events are stored where d expected
// them, and the sequence of its last. A decision retried after a lost
// acknowledgement looks like a conflict with itself (or, in a batch, like
// a duplicate); this tells the two apart. d's events, and those of the
// decisions it was chained after in its batch, must be the events right
// after the sequence the first of them expected, each with the same id
// and data. The same event ids elsewhere, or with other data, are the
// command's earlier try, decided on another state or at another time: a
// conflict, after which the caller loads that try and answers with what
// it stored.
func (s *Store) storedAsDecided(ctx context.Context, d *decision) (uint64, bool) {
	var chain []*decision // d and those it was chained after, the first last
	s.committer.chainMu.Lock()
	for e := d; e != nil; e = e.after {
		chain = append(chain, e)
	}
	seq, last := chain[len(chain)-1].expected+1, uint64(0)
	s.committer.chainMu.Unlock()
	for _, e := range slices.Backward(chain) {
		for i, msg := range e.msgs {
			m, err := s.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(d.subject))
			if err != nil || m.Header.Get(hdrEventID) != e.eventIDs[i] || !bytes.Equal(m.Data, msg.Data) {
				return 0, false
			}
			seq, last = m.Sequence+1, m.Sequence
		}
	}
	return last, true
}

// maxParallelGets is how many reads of single events RecordsAt has under
// way at once: a page of the audit log reads up to two events an entry,
// each a round trip to the stream's leader.
const maxParallelGets = 8

// RecordsAt reads the events at the stream sequences seqs, in their
// order: the audit log keeps where an entry's event is, and reads what it
// says when a page of the log is read. Events read are kept (see
// recordCache), and read again from there: a record's Data is shared,
// never to be changed.
//
// A sequence that holds no event (a message deleted from a stream made
// by hand that allows it, or one past the last) leaves its record zero,
// Sequence 0, and is logged: the caller shows what it knows without it,
// and the others are read as ever. An event whose envelope cannot be
// read is handed on without a type (see handedOn). Any other failure to
// read is an error.
//
// The first read that fails ends the others, and its error is the one
// returned: against a stream that does not answer, each read waits out
// the request timeout (5 s), and reading on would make a page of 100
// entries (up to 200 events, eight at a time) wait two minutes for its
// 503, not five seconds.
func (s *Store) RecordsAt(ctx context.Context, seqs []uint64) ([]domain.Record, error) {
	out := make([]domain.Record, len(seqs))
	misses := s.records.lookup(seqs, out)
	if len(misses) == 0 {
		return out, nil
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(maxParallelGets)
	for _, miss := range misses {
		seq := seqs[miss.i]
		g.Go(func() error {
			if miss.wait != nil {
				select {
				case <-miss.wait.done:
				case <-ctx.Done():
					return ctx.Err()
				}
				if !errors.Is(miss.wait.err, context.Canceled) {
					out[miss.i] = miss.wait.r
					return miss.wait.err
				}
				// That read ended with its caller (a request
				// cancelled, or another read of it failed first):
				// this one tries for itself.
				return s.recordAt(ctx, seq, &out[miss.i])
			}
			err := s.recordAt(ctx, seq, &out[miss.i])
			s.records.done(seq, out[miss.i], err)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// recordAt reads the event at seq into r, which it leaves zero if there
// is none.
func (s *Store) recordAt(ctx context.Context, seq uint64, r *domain.Record) error {
	if err := ctx.Err(); err != nil {
		return err // the caller's, or a read failed first: its error is the one returned
	}
	m, err := s.stream.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		// Not the store failing: waiting cures nothing, and a 503
		// would never clear.
		s.log.Warn("eventstore: no event at a sequence read", "stream", s.name, "sequence", seq)
		return nil
	}
	if err != nil {
		return unavailable(fmt.Errorf("eventstore: the event at sequence %d: %w", seq, err))
	}
	*r = s.handedOn(s.recordFrom(m.Subject, m.Sequence, m.Time, m.Header, m.Data))
	return nil
}

// Load reads every event of one aggregate, oldest first. The sequence of
// the last one is what Append expects next.
func (s *Store) Load(ctx context.Context, agg domain.Aggregate) ([]domain.Record, error) {
	return s.LoadAfter(ctx, agg, 0)
}

// LoadAfter reads the events of one aggregate after sequence after, for a
// caller that holds the aggregate's state up to there.
func (s *Store) LoadAfter(ctx context.Context, agg domain.Aggregate, after uint64) ([]domain.Record, error) {
	if !validToken(agg.Type) || !validToken(agg.ID) {
		return nil, fmt.Errorf("eventstore: aggregate %q is not a valid subject", agg)
	}
	subject := s.subject(agg)
	last, err := s.stream.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(fmt.Errorf("eventstore: load %s: %w", agg, err))
	}
	if last.Sequence <= after {
		return nil, nil
	}
	// Walk the aggregate's subject message by message up to the last one,
	// which is already here: a caller one event behind (the cache) costs
	// one round trip. A long walk (a cold load after a restart, a history
	// read) reads the rest through a consumer of its own, which sends them
	// all at once: one round trip an event made a 5,000-event ledger a
	// third of a second's read, with the flight's lock held.
	var out []domain.Record
	add := func(seq uint64, stored time.Time, h nats.Header, data []byte) {
		out = append(out, s.handedOn(s.recordFrom(subject, seq, stored, h, data)))
	}
	for seq := after + 1; seq < last.Sequence; {
		m, err := s.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if err != nil {
			return nil, unavailable(fmt.Errorf("eventstore: load %s at %d: %w", agg, seq, err))
		}
		if m.Sequence >= last.Sequence {
			break
		}
		if len(out) == maxWalk {
			// A long history: the rest, from this event on. If no
			// consumer can be made (a cluster electing its meta leader
			// refuses them while direct gets still answer), the walk
			// goes on, slower but whole: nothing was read through one
			// yet. A read that fails part way is no such case: what it
			// added would be added twice.
			err := s.readSubject(ctx, subject, m.Sequence, last.Sequence, add)
			if err == nil {
				break
			}
			if !errors.Is(err, errNoConsumer) {
				return nil, fmt.Errorf("eventstore: load %s from %d: %w", agg, m.Sequence, err)
			}
			s.log.Warn("eventstore: a load reads on one event at a time", "aggregate", agg.String(), "err", err)
		}
		add(m.Sequence, m.Time, m.Header, m.Data)
		seq = m.Sequence + 1
	}
	add(last.Sequence, last.Time, last.Header, last.Data)
	return out, nil
}

// maxWalk is how many events a load reads one request at a time before it
// reads the rest through a consumer: few enough that a long history does
// not cost a round trip an event, many that the loads of a cache one or a
// few events behind never create a consumer.
const maxWalk = 32

// readSubject calls add for each event on subject from sequence from on,
// up to and without sequence before (or the stream's end, whichever comes
// first), through an ordered consumer of its own. It fails with
// errNoConsumer, having added nothing, if it cannot make the consumer.
func (s *Store) readSubject(ctx context.Context, subject string, from, before uint64, add func(seq uint64, stored time.Time, h nats.Header, data []byte)) error {
	// One try to make the consumer: the caller walks on without one.
	cctx, cancel := context.WithTimeout(ctx, consumerTry)
	msgs, err := s.ordered(cctx, []string{subject}, from)
	cancel()
	if err != nil {
		return unavailable(fmt.Errorf("%w: %w", errNoConsumer, err))
	}
	defer msgs.close()
	for {
		m, err := msgs.Next(ctx, 0)
		if err != nil {
			return unavailable(err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return err
		}
		if meta.Sequence.Stream >= before {
			return nil
		}
		add(meta.Sequence.Stream, meta.Timestamp, m.Headers(), m.Data())
		if meta.NumPending == 0 {
			return nil // nothing more on subject
		}
	}
}

// errNoConsumer is readSubject's failure to make its consumer.
var errNoConsumer = errors.New("eventstore: no consumer for the read")

// Missing reports whether the stream holds none of the sequences from
// from to to, while it holds the one after or, as its leader tells, ends
// at to: they were deleted (from a stream made by hand that allows it),
// purged, or lost with a damaged file. Any one of them held, or the
// stream not known to go past them, it reports false: a node back from a
// cut-off answers for a moment from a copy that ends early, where every
// later event looks missing.
func (s *Store) Missing(ctx context.Context, from, to uint64) (bool, error) {
	info, err := s.streamInfo(ctx)
	if err != nil {
		return false, err
	}
	// The sequence of the first message held at seq or after it (0 if
	// none), in one request whatever the gap, from the leader: a direct
	// get, which a stream made by hand may allow, is answered by any node,
	// one behind too.
	firstFrom := func(seq uint64) (uint64, error) {
		m, err := s.msgGet(ctx, s.name, fmt.Sprint("the message at or after sequence ", seq), struct {
			Seq  uint64 `json:"seq"`
			Next string `json:"next_by_subj"`
		}{seq, ">"})
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return 0, nil
		case err != nil:
			return 0, unavailable(fmt.Errorf("eventstore: get at or after %d: %w", seq, err))
		}
		return m.Sequence, nil
	}
	// Below the stream's first sequence nothing is held: no need to ask.
	next, err := firstFrom(max(from, info.State.FirstSeq))
	switch {
	case err != nil:
		return false, err
	case next != 0 && next <= to:
		return false, nil // one of them is held
	case next == 0 && ((info.Cluster != nil && info.Cluster.Leader == "") || info.State.LastSeq != to):
		return false, nil // none after them either, and the stream not known to end there
	}
	return true, nil
}

// Get reads the event of agg at stream sequence seq; one it cannot read is
// handed on without a type, as by every read (see handedOn).
func (s *Store) Get(ctx context.Context, agg domain.Aggregate, seq uint64) (domain.Record, error) {
	subject := s.subject(agg)
	m, err := s.stream.GetMsg(ctx, seq)
	if err != nil {
		return domain.Record{}, unavailable(fmt.Errorf("eventstore: get %s at %d: %w", agg, seq, err))
	}
	if m.Subject != subject {
		return domain.Record{}, notOfAggregateError{seq: seq, want: agg, is: s.aggregateOf(m.Subject), eventID: m.Header.Get(hdrEventID)}
	}
	return s.handedOn(s.recordFrom(subject, m.Sequence, m.Time, m.Header, m.Data)), nil
}

// notOfAggregateError is Get's error for a sequence that holds another
// aggregate's event: which one it holds.
type notOfAggregateError struct {
	seq      uint64
	want, is domain.Aggregate
	eventID  string
}

func (e notOfAggregateError) Error() string {
	return fmt.Sprintf("eventstore: the event at sequence %d is %s of %s, not of %s", e.seq, e.eventID, e.is, e.want)
}

// HoldsEventsOf reports whether the stream holds any event of an
// aggregate of aggregateType.
func (s *Store) HoldsEventsOf(ctx context.Context, aggregateType string) (bool, error) {
	_, err := s.stream.GetLastMsgForSubject(ctx, s.Filter(aggregateType, ""))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	if err != nil {
		return false, unavailable(fmt.Errorf("eventstore: stream %s: %w", s.name, err))
	}
	return true, nil
}

// LastSequence is the sequence of the newest event in the stream. Its
// errors are domain.ErrStoreUnavailable when a wait may cure them, as a
// read's are: a request that asks it (?seq=) gets a 503 to retry. So is
// a stream without a leader: a node of its answers from its own copy
// (nats-server 2.15.2, jsStreamInfoRequest; at once on a node up for 10 s,
// isGroupLeaderless, so during every election too), which may
// lack writes the others acknowledged; read models caught up to it are
// not current, and a token granted on them could outlive a revocation.
func (s *Store) LastSequence(ctx context.Context) (uint64, error) {
	info, err := s.streamInfo(ctx)
	if err != nil {
		return 0, err
	}
	if info.Cluster != nil && info.Cluster.Leader == "" {
		return 0, fmt.Errorf("%w: eventstore: stream %s has no leader, so its last sequence is not known", domain.ErrStoreUnavailable, info.Config.Name)
	}
	return info.State.LastSeq, nil
}

// LastSequenceSeen is the sequence of the newest event as the node that
// answers has it: the leader's, or while the stream has none a
// follower's, which may lack the last writes acknowledged. It is for
// figures such as the read models' lag, so that a replica does not turn
// unready for every election of a leader while it serves reads well;
// never for a wait that must see every acknowledged write.
func (s *Store) LastSequenceSeen(ctx context.Context) (uint64, error) {
	info, err := s.streamInfo(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

func (s *Store) streamInfo(ctx context.Context) (*jetstream.StreamInfo, error) {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return nil, unavailable(fmt.Errorf("eventstore: stream info: %w", err))
	}
	return info, nil
}

// Read calls fn for each event from sequence from to sequence to
// (inclusive; 0 = up to the newest at the time of the call) whose subject
// matches one of the filters (see Filter), in order.
func (s *Store) Read(ctx context.Context, filters []string, from, to uint64, fn func(domain.Record) error) error {
	if to == 0 {
		last, err := s.LastSequence(ctx)
		if err != nil {
			return err
		}
		to = last
	}
	if from == 0 {
		from = 1
	}
	if to < from {
		return nil
	}
	return s.read(ctx, filters, from, to, fn)
}

// connection is a context of the store's connection to NATS as it is now:
// it ends when the connection is made again, and with it what a
// subscription of the connection was sent meanwhile. A read in order
// waits on it, to make its consumer anew at once rather than after two
// missed heartbeats, a second later.
func (s *Store) connection() context.Context {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return s.conn
}

// renewConnection ends the context of the store's connection as it was,
// and starts the next: it is called each time the connection is made
// again.
func (s *Store) renewConnection() {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	s.newConn()
	s.conn, s.newConn = context.WithCancel(context.Background())
}

// connectionOptions are the options of every connection the store makes
// (see dial): its name, its errors and reconnections logged, and
// reconnected (if not nil) called at each reconnection.
func (s *Store) connectionOptions(name string, reconnected func()) []nats.Option {
	return []nats.Option{nats.Name(name), s.asyncErrors(name),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			// INFO, as every other line saying a failure is over: the
			// WARN it was counted as one more warning of the outage.
			s.log.Info("eventstore: the connection to NATS is back", "connection", name, "server", nc.ConnectedUrlRedacted())
			if reconnected != nil {
				reconnected()
			}
		})}
}

// asyncErrors has the errors NATS reports apart from any call on the
// connection name (a subscription too slow for its messages, which are
// dropped; a subject its user may not use) logged, with the connection
// and the subscription's subject. nats.go's own handler prints them on
// stderr, in a line outside the log, without a time or the connection's
// name: a probe with a node killed found "slow consumer, messages
// dropped" among a replica's JSON lines, on an inbox no one could place.
func (s *Store) asyncErrors(name string) nats.Option {
	return nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
		attrs := []any{"connection", name, "err", err}
		if sub != nil {
			attrs = append(attrs, "subject", sub.Subject)
		}
		s.log.Warn("eventstore: NATS reports an error", attrs...)
	})
}

// everyEvent is the subject filter of every event.
func (s *Store) everyEvent() string { return s.prefix + ".evt.>" }

// Filter returns the subject filter for events of an aggregate type and,
// if id is not empty, one aggregate.
func (s *Store) Filter(aggregateType, id string) string {
	if aggregateType == "" {
		aggregateType = "*"
	}
	if id == "" {
		id = "*"
	}
	return s.prefix + ".evt." + aggregateType + "." + id
}

func (s *Store) read(ctx context.Context, filters []string, from, to uint64, fn func(domain.Record) error) error {
	if len(filters) == 0 {
		filters = []string{s.everyEvent()}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := errors.New("done")
	for stalls := 0; ; stalls++ {
		err := s.Subscribe(ctx, filters, from, func(r domain.Record) error {
			if r.Sequence > to {
				return done
			}
			if err := fn(r); err != nil {
				return err
			}
			if r.Sequence == to {
				return done
			}
			from = r.Sequence + 1
			return nil
		}, func() error {
			// Nothing (more) matches the filters: the ordered consumer
			// has delivered everything up to the end of the stream.
			return done
		})
		switch {
		case errors.Is(err, done):
			return nil
		case errors.Is(err, domain.ErrSubscriptionStalled) && stalls < maxReadStalls:
			s.log.Warn("eventstore: a read's consumer stalled; reading on with a new one", "from", from, "err", err)
		default:
			return err
		}
	}
}

// maxReadStalls is how often a read starts anew with a new consumer when
// its consumer stalls.
const maxReadStalls = 3

// Subscribe calls fn for each event from sequence from on (oldest first,
// then live) whose subject matches the filters, until ctx ends or fn
// returns an error, which Subscribe then returns. If idle is not nil, it
// is called whenever the subscription has caught up with the stream (after
// the last matching event, or after a second or so without one); an error from
// it also ends the subscription.
//
// One read in order (see orderedRead) serves the whole subscription: it
// hands over the events in order without gaps, and makes its consumer
// again from the last event handed over when it misses two heartbeats or
// a sequence, or the connection to NATS is made again. A consumer that
// cannot be made again ends the subscription with the error, so that the
// caller knows, logs it and resumes from its own position; nothing
// retries forever out of sight. A subscription to every event (the read
// models') walks while its consumer is being made, getting the events
// from the stream's leader (see orderedRead): a cluster electing its meta
// leader makes no consumer for seconds, while the leader of the stream
// answers. It also watches for a consumer that went quiet while the
// stream grew, its heartbeats going on (seen on a cluster): it ends after
// stallAfter of waiting (fn's time does not count) without an event while
// this process has stored one it has not heard of, or once the server
// says the stream is ahead; the server is asked less often the longer all
// stays quiet. (Not while it walks: that quiet is the stream's leader
// being elected, and ending would only start the consumer's making anew.)
func (s *Store) Subscribe(ctx context.Context, filters []string, from uint64, fn func(domain.Record) error, idle func() error) error {
	everything := len(filters) == 0
	from = max(from, 1)
	var msgs *orderedRead
	if everything {
		msgs = s.walkingRead(s.everyEvent(), from, jetstream.PullMaxMessages(500))
	} else {
		var err error
		if msgs, err = s.ordered(ctx, filters, from, jetstream.PullMaxMessages(500)); err != nil {
			return fmt.Errorf("eventstore: subscribe: %w", err)
		}
	}
	defer msgs.close()
	stop := context.AfterFunc(ctx, msgs.Stop)
	defer stop()
	delivered, lastHeard := from-1, time.Now()
	var handed position    // the last event handed to fn, as its consumer counts it
	askAfter := stallAfter // of quiet, when the server is asked next
	for {
		m, err := msgs.Next(ctx, nextSlice)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, nats.ErrTimeout):
			if quiet := time.Since(lastHeard); everything && quiet > stallAfter && msgs.consumer() != nil {
				last := s.committer.stored.Load()
				if last <= delivered && quiet > askAfter {
					// Any node's end will do: nodes hold only
					// committed writes, so one ahead of this consumer
					// means its node is behind, stalled or (during an
					// election) lagging the follower that answered; a
					// new consumer mends either, early at worst.
					l, err := s.LastSequenceSeen(ctx)
					if err == nil {
						last = l
					}
					askAfter = nextStallAsk(quiet, err == nil)
				}
				if last > delivered {
					return fmt.Errorf("%w: nothing after %d for %s while the stream is at %d",
						domain.ErrSubscriptionStalled, delivered, quiet.Round(time.Second), last)
				}
			}
			// A second without a matching event is caught up only if
			// the server has none left to deliver and fn has had all it
			// delivered: on a loaded machine the first event of a
			// filtered read can take longer than that to come. Not
			// caught up while nothing came for stallAfter is a stalled
			// consumer (seen once on a cluster: it delivered nothing
			// for minutes): the caller starts anew from its last event.
			// (A subscription to every event has its stall check above,
			// which asks the server seldom; it takes a quiet second as
			// caught up.)
			if idle != nil && everything {
				if err := idle(); err != nil {
					return err
				}
			} else if idle != nil {
				caughtUp, waiting := handedAll(ctx, msgs.consumer(), handed)
				switch quiet := time.Since(lastHeard); {
				case caughtUp:
					if err := idle(); err != nil {
						return err
					}
				case quiet > stallAfter:
					return fmt.Errorf("%w: nothing after %d for %s while %d matching events wait",
						domain.ErrSubscriptionStalled, delivered, quiet.Round(time.Second), waiting)
				}
			}
			continue
		case err != nil:
			return fmt.Errorf("eventstore: subscription: %w", err)
		}
		r, err := s.followable(m)
		if err != nil {
			return err
		}
		delivered, askAfter = r.Sequence, stallAfter
		if err := fn(r); err != nil {
			return err
		}
		// Quiet is counted from here: the time fn took (a large import
		// applied under load) is no silence of the server's.
		lastHeard = time.Now()
		meta, err := m.Metadata()
		if err == nil {
			handed = position{consumer: meta.Consumer, seq: meta.Sequence.Consumer}
		}
		// Nothing matching is left: caught up, without waiting a second.
		if err == nil && meta.NumPending == 0 && idle != nil {
			if err := idle(); err != nil {
				return err
			}
		}
	}
}

// position is where a consumer is: its name and the sequence of the last
// event it delivered.
type position struct {
	consumer string
	seq      uint64
}

// handedAll reports whether the ordered consumer cons has no matching
// event left to deliver and delivered none past handed, the last one
// handed to the caller. (The consumer's delivered stream sequence cannot
// tell: a filtered consumer moves it to the stream's end when nothing more
// matches. Its own count can, of the consumer it counts for: an ordered
// consumer re-created after a reset counts anew.)
// It also says how many matching events the server has not delivered
// yet.
func handedAll(ctx context.Context, cons jetstream.Consumer, handed position) (bool, uint64) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	info, err := cons.Info(ctx)
	switch {
	case err != nil:
		return false, 0
	case info.NumPending != 0:
		return false, info.NumPending
	case info.Name != handed.consumer:
		return info.Delivered.Consumer == 0, 0
	}
	return info.Delivered.Consumer <= handed.seq, 0
}

// ordered starts a read of the events matching filters (all, if none)
// from sequence from on, through a consumer of its own (see orderedRead).
// The caller ends it with close.
func (s *Store) ordered(ctx context.Context, filters []string, from uint64, opts ...jetstream.PullMessagesOpt) (*orderedRead, error) {
	if len(filters) == 0 {
		filters = []string{s.everyEvent()}
	}
	return s.readOrdered(ctx, s.stream, filters, from, opts...)
}

// stallAfter is how long a subscription to every event may hear nothing
// while the stream has events it has not delivered.
const stallAfter = 3 * time.Second

// maxStallAsk is the longest a quiet subscription to every event goes
// without asking the server whether the stream grew. It bounds how long a
// consumer stalled by an outage (its node gone; the other nodes, which
// answer, have nothing newer) goes unnoticed once writes resume: a
// minute let a replica serve stale reads for 25 s after a loss of quorum
// of 75 s. One small request every 10 s of quiet costs nothing.
const maxStallAsk = 10 * time.Second

// nextStallAsk is how long a subscription to every event may be quiet
// before it asks the server again, having asked after quiet: twice as
// long, at most maxStallAsk more, if the server answered; if it did not
// (NATS or the stream's nodes away), stallAfter more, so that once they
// are back a stalled consumer is found within seconds.
func nextStallAsk(quiet time.Duration, answered bool) time.Duration {
	if !answered {
		return quiet + stallAfter
	}
	return min(2*quiet, quiet+maxStallAsk)
}
