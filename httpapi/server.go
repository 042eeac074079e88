// Package httpapi is Cargostream's HTTP interface: it decodes and checks
// requests, runs commands, and answers from the read models in the
// representations of package views. It depends on commands, projections,
// views and small interfaces (FileStore, ResponseStore), never on the
// event store; background work is cmd/cargod's to start.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/metrics"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/tokens"
	"github.com/cargostream/cargostream/webhooks"
	"golang.org/x/crypto/bcrypt"
)

// Options tune the HTTP layer.
type Options struct {
	Demo           bool              // demo credentials are accepted
	MaxBodyBytes   int64             // larger request bodies get 413
	MaxUploadBytes int64             // larger document files get 413
	DocumentQuota  int64             // bytes of document files an organisation may store; 0 = no quota
	PublicURL      string            // base of absolute links (errorUri); "" for each request's scheme and host
	TrustedProxies []netip.Prefix    // proxies whose X-Forwarded-For names the client (withClientAddress)
	HashCost       int               // bcrypt cost, to make unknown names as slow as known ones
	RateLimits     domain.RateLimits // defaults per organisation; 0 = no limit
	Metering       bool              // count usage and enforce rate limits
	ReadyMaxLag    uint64            // /readyz: events the read models may be behind
	ReadyStall     time.Duration     // /readyz: how long they may apply nothing while events wait
}

// Server serves the API.
type Server struct {
	opts       Options
	log        *slog.Logger
	commands   *commands.Handler
	projector  *projections.Projector
	identity   *projections.Identity
	quotes     *projections.Quotes
	quoteViews quoteViews
	flights    *projections.Flights
	rates      *projections.Rates
	bookings   *projections.Bookings
	stock      *projections.AWBStock
	reference  *projections.Reference
	audit      *projections.Audit
	authLog    authRecorder
	usage      *commands.UsageMeter
	limiter    rateLimiter // per organisation
	// tokenLimiter is separate: its keys are chosen by anonymous
	// callers, who must not be able to crowd out organisations' counts.
	tokenLimiter rateLimiter
	webhooks     *projections.Webhooks
	shipments    *projections.Shipments
	documents    *projections.Documents
	past         *projections.Past // resources as they were (?at=, ?seq=)
	// shipmentFacts gathers what domain's access rules of a shipment
	// need to know.
	shipmentFacts projections.ShipmentFacts
	history       projections.History // the events of resources, as their readers may see them
	files         FileStore           // the files of documents
	// uploads counts the uploads this server is taking, uploadsByOrg
	// those each organisation is sending (its share of them), both under
	// uploadsMu: fields, not globals, so that servers in one process
	// (tests) each have their own maxUploads.
	uploadsMu    sync.Mutex
	uploads      int
	uploadsByOrg map[string]int
	// uploadBytesByOrg holds the bytes of each organisation's files stored
	// by uploads that the documents read model does not count yet: uploads
	// at the same time must not each fit into the same room under the quota.
	uploadBytesByOrg map[string]int64
	dispatcher       *webhooks.Dispatcher // queues pings and redeliveries, and seals secrets and checks URLs as deliveries will
	tokens           *tokens.Authority
	responses        ResponseStore // remembered responses to Idempotency-Key requests
	ready            func() bool
	metrics          *metrics.Metrics
	wasReady         atomic.Bool   // the last answer of /readyz, so that the log says when it turns
	stopping         chan struct{} // closed once the server shuts down: long polls answer at once
	stop             sync.Once
	draining         atomic.Bool // a stop is coming: /readyz answers 503 (Drain)
	dummyHash        []byte
	handler          http.Handler

	maintenance *projections.Maintenance // rebuilds and verifies the read models (admins)
}

// Deps are what the server works with.
type Deps struct {
	Log        *slog.Logger
	Commands   *commands.Handler
	Projector  *projections.Projector
	Identity   *projections.Identity
	Quotes     *projections.Quotes
	Flights    *projections.Flights
	Rates      *projections.Rates
	Bookings   *projections.Bookings
	Stock      *projections.AWBStock
	Reference  *projections.Reference
	Audit      *projections.Audit
	Usage      *commands.UsageMeter // counts requests when Options.Metering is on
	Webhooks   *projections.Webhooks
	Dispatcher *webhooks.Dispatcher
	Shipments  *projections.Shipments
	Documents  *projections.Documents
	History    projections.Histories // the events past states (?at=, ?seq=) and histories (…/history) are read from
	// ShipmentFacts gathers what domain's access rules of a shipment
	// need to know; the webhook renderer uses the same.
	ShipmentFacts projections.ShipmentFacts
	Files         FileStore // the files of documents
	Tokens        *tokens.Authority
	Responses     ResponseStore    // remembered responses to Idempotency-Key requests
	Ready         func() bool      // the event store is connected
	Metrics       *metrics.Metrics // counts requests and serves /metrics; nil: metrics of the server's own

	Maintenance *projections.Maintenance // rebuilds and verifies the read models (admins)
}

// FileStore keeps the files of documents, shared by all replicas
// (eventstore.Objects implements it). Put reads r to its end, and keeps
// nothing if that fails; Get returns domain.ErrNoStoredFile for a name
// without a file; deleting one that is not there is no error.
type FileStore interface {
	Put(ctx context.Context, name string, r io.Reader) (int64, error)
	Get(ctx context.Context, name string) (io.ReadCloser, int64, error)
	Delete(ctx context.Context, name string) error
}

// ResponseStore keeps the responses to Idempotency-Key requests, shared by
// all replicas (eventstore.Bucket implements it): GetRevision reports
// false for a key without a value; Create stores a value unless the key
// has one, and returns the value stored afterwards and whether it was
// this one; Update replaces a value still at revision, and reports false
// when someone changed it first.
type ResponseStore interface {
	GetRevision(ctx context.Context, key string) ([]byte, uint64, bool, error)
	Create(ctx context.Context, key string, value []byte) ([]byte, bool, error)
	Update(ctx context.Context, key string, value []byte, revision uint64) (bool, error)
	Put(ctx context.Context, key string, value []byte) error
	Delete(ctx context.Context, key string) error
}

// ShuttingDown ends the long polls under way (Prefer: wait) with the
// answer they would have had at once, so that a graceful shutdown does not
// wait out their waits: call it as the HTTP server shuts down
// (http.Server.RegisterOnShutdown), which itself cancels no request.
func (s *Server) ShuttingDown() { s.stop.Do(func() { close(s.stopping) }) }

// Drain makes /readyz answer 503 from now on, while everything else is
// served as before: a load balancer that probes readiness then sends the
// replica no new requests, before a shutdown closes its listener.
func (s *Server) Drain() { s.draining.Store(true) }

// New returns the API's handler.
func New(opts Options, d Deps) (*Server, error) {
	s := &Server{
		stopping: make(chan struct{}),
		opts:     opts, log: d.Log, commands: d.Commands, projector: d.Projector, identity: d.Identity,
		quotes: d.Quotes, flights: d.Flights, rates: d.Rates, bookings: d.Bookings, stock: d.Stock, reference: d.Reference, audit: d.Audit, usage: d.Usage, webhooks: d.Webhooks, dispatcher: d.Dispatcher, shipments: d.Shipments, documents: d.Documents, past: projections.NewPast(d.History), shipmentFacts: d.ShipmentFacts, files: d.Files, tokens: d.Tokens, responses: d.Responses, ready: d.Ready,
	}
	s.history = projections.History{Events: d.History, Quotes: d.Quotes, Bookings: d.Bookings, Stock: d.Stock, Flights: d.Flights,
		Documents: d.Documents, ShipmentFacts: d.ShipmentFacts}
	s.wasReady.Store(true) // a server is made once the replica is ready
	if s.metrics = d.Metrics; s.metrics == nil {
		s.metrics = metrics.New()
	}
	s.limiter.now, s.tokenLimiter.now = time.Now, time.Now
	s.quoteViews.max = maxQuoteViews
	s.maintenance = d.Maintenance
	if d.Maintenance != nil {
		d.Maintenance.AfterRebuild(s.quoteViews.forget)
	}
	s.uploadsByOrg, s.uploadBytesByOrg = map[string]int{}, map[string]int64{}
	// Checked against when no such client or user exists, so that an
	// unknown name costs the same work as a wrong secret.
	var err error
	if s.dummyHash, err = bcrypt.GenerateFromPassword([]byte("no such credential, but the same work"), opts.HashCost); err != nil {
		return nil, fmt.Errorf("httpapi: password hash cost %d: %w", opts.HashCost, err)
	}
	s.handler = withClientAddress(opts.TrustedProxies,
		withRequestID(withPublicURL(opts.PublicURL, withAccessLog(s.log, s.metrics, s.withLimits(s.routes())))))
	return s, nil
}

// bodyLimit is the largest body a request may have: a document upload
// its file and a little more (the upload handler counts the file itself),
// any other request a JSON body of MaxBodyBytes.
func (s *Server) bodyLimit(r *http.Request) int64 {
	if isUpload(r) {
		return s.opts.MaxUploadBytes + uploadAllowance
	}
	return s.opts.MaxBodyBytes
}

// bodyTooLarge is the refusal of r's body, larger than limit.
func (s *Server) bodyTooLarge(r *http.Request, limit int64) error {
	if isUpload(r) {
		return s.errUploadTooLarge()
	}
	return readError(&http.MaxBytesError{Limit: limit})
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// handlerFunc is a handler that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle turns a handlerFunc into an http.Handler that answers errors
// with the spec's error body.
func (s *Server) handle(f handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := queryProblem(r); err != nil {
			writeError(w, r, s.log, err)
			return
		}
		if err := f(w, r); err != nil {
			if domain.ErrorCode(err) == domain.Forbidden {
				p := principal(r.Context())
				s.recordAuth(r, domain.AuthorizationRecorded{Action: domain.ActionAccessDenied, Subject: p.Subject,
					OrganizationID: p.OrganizationID, Detail: r.Method + " " + r.URL.Path})
			}
			writeError(w, r, s.log, err)
		}
	})
}

// queryProblem is what is wrong with the query string every endpoint
// refuses: one that does not parse, a parameter given twice or not
// UTF-8 (see checkQuery), or one longer than any the service reads.
func queryProblem(r *http.Request) error {
	// r.URL.Query() drops what it cannot parse: a filter sent as
	// iataCode=%ZZ would vanish, and the answer be wider than asked.
	// Only an escape, a semicolon or too many parameters fail to
	// parse: a query without %, ; and & (one parameter, so none given
	// twice) always parses, and is UTF-8 decoded if it is as sent. And a
	// value is never longer than the query string it came from (escapes
	// only shorten it): a short one needs no count, which cost a GET by
	// id 3 % of its CPU.
	raw := r.URL.RawQuery
	short := len(raw) <= maxQueryValue
	if short && !strings.ContainsAny(raw, "%;&") && utf8.ValidString(raw) {
		return nil
	}
	values, err := url.ParseQuery(raw)
	if err != nil {
		return domain.Errorf(domain.InvalidRequest, "the query string is malformed: %v", err)
	}
	return checkQuery(values, !short)
}

// open is an endpoint open to everyone, which takes no parameters but
// refuses a query string as every endpoint does.
func (s *Server) open(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := queryProblem(r); err != nil {
			writeError(w, r, s.log, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// maxConsistencyWait bounds how long a request waits for this replica's
// read models to reach a sequence.
const maxConsistencyWait = 5 * time.Second

// settle waits until the read models include sequence seq, so that the
// response and the next read show the write, and tells the client the
// sequence (Cargo-Sequence) to pass to a GET on another replica. The write
// is stored whatever happens here: read models that take longer than
// maxConsistencyWait only leave the client that sequence to wait on. An
// error would make it retry a write that is done.
func (s *Server) settle(w http.ResponseWriter, r *http.Request, seq uint64) {
	w.Header().Set("Cargo-Sequence", uitoa(seq))
	if err := s.waitFor(r, seq); err != nil && r.Context().Err() == nil {
		s.log.WarnContext(r.Context(), "a write is answered before this replica's read models include it",
			"request_id", requestID(r.Context()), "sequence", seq, "applied", s.projector.Applied())
	}
}

// writeCreated answers a write that created a resource with a version:
// once settled (see settle), 201 with its version as the ETag, its
// Location and body.
func (s *Server) writeCreated(w http.ResponseWriter, r *http.Request, sequence, version uint64, location string, body any) {
	s.settle(w, r, sequence)
	setVersion(w, version)
	w.Header().Set("Location", location)
	writeJSON(w, http.StatusCreated, body)
}

// caughtUp waits, at most maxConsistencyWait, until this replica's read
// models hold every event the stream holds now, for a decision that reads
// them: what another replica stored a moment ago counts. Should the stream
// not answer, the 503 says what the replica cannot tell (unknown).
func (s *Server) caughtUp(r *http.Request, unknown string) error {
	ctx, cancel := context.WithTimeout(r.Context(), maxConsistencyWait)
	defer cancel()
	err := s.projector.CatchUp(ctx)
	if err != nil && !errors.Is(err, projections.ErrBehind) { // ErrBehind is a 503 as for any read
		// With its cause: a client that hung up is a 499, not a 503.
		return &httpError{code: codeServiceUnavailable, msg: "the event stream cannot be read now, so this replica cannot tell " + unknown + ": retry", err: err}
	}
	return err
}

// waitFor waits, at most maxConsistencyWait, until the read models
// include sequence seq.
func (s *Server) waitFor(r *http.Request, seq uint64) error {
	ctx, cancel := context.WithTimeout(r.Context(), maxConsistencyWait)
	defer cancel()
	return s.projector.WaitFor(ctx, seq)
}
