// Package httpapi is Cargostream's HTTP interface: it decodes and checks
// requests, runs commands, and answers from the read models in the
// representations of package views.
package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
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
	usage      *usageMeter
	limiter    rateLimiter // per organisation
	// tokenLimiter is separate: its keys are chosen by anonymous
	// callers, who must not be able to crowd out organisations' counts.
	tokenLimiter rateLimiter
	webhooks     *projections.Webhooks
	shipments    *projections.Shipments
	documents    *projections.Documents
	// shipmentFacts gathers what domain's access rules of a shipment
	// need to know.
	shipmentFacts projections.ShipmentFacts
	objects       *eventstore.Objects // the files of documents
	// uploads holds a token for each upload this server is taking: a
	// field, not a global, so that servers in one process (tests) each
	// have their own maxUploads.
	uploads chan struct{}
	// uploadsByOrg counts the uploads each organisation is sending, under
	// uploadsMu: its share of uploads.
	uploadsMu    sync.Mutex
	uploadsByOrg map[string]int
	dispatcher   *webhooks.Dispatcher // queues pings and redeliveries, and seals secrets and checks URLs as deliveries will
	tokens       *tokens.Authority
	responses    *eventstore.Bucket // remembered responses to Idempotency-Key requests
	ready        func() bool
	dummyHash    []byte
	handler      http.Handler
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
	Usage      *eventstore.Bucket // request counts, shared by all replicas
	Webhooks   *projections.Webhooks
	Dispatcher *webhooks.Dispatcher
	Shipments  *projections.Shipments
	Documents  *projections.Documents
	Objects    *eventstore.Objects
	Tokens     *tokens.Authority
	Responses  *eventstore.Bucket
	Ready      func() bool // the event store is connected
}

// New returns the API's handler.
func New(opts Options, d Deps) (*Server, error) {
	s := &Server{
		opts: opts, log: d.Log, commands: d.Commands, projector: d.Projector, identity: d.Identity,
		quotes: d.Quotes, flights: d.Flights, rates: d.Rates, bookings: d.Bookings, stock: d.Stock, reference: d.Reference, audit: d.Audit, usage: &usageMeter{bucket: d.Usage}, webhooks: d.Webhooks, dispatcher: d.Dispatcher, shipments: d.Shipments, documents: d.Documents, objects: d.Objects, tokens: d.Tokens, responses: d.Responses, ready: d.Ready,
	}
	s.shipmentFacts = projections.ShipmentFacts{Bookings: d.Bookings, Shipments: d.Shipments, Stock: d.Stock, Flights: d.Flights}
	s.limiter.now, s.tokenLimiter.now = time.Now, time.Now
	s.quoteViews.max = maxQuoteViews
	s.uploads, s.uploadsByOrg = make(chan struct{}, maxUploads), map[string]int{}
	// Checked against when no such client or user exists, so that an
	// unknown name costs the same work as a wrong secret.
	var err error
	if s.dummyHash, err = bcrypt.GenerateFromPassword([]byte("no such credential, but the same work"), opts.HashCost); err != nil {
		return nil, fmt.Errorf("httpapi: password hash cost %d: %w", opts.HashCost, err)
	}
	s.handler = withRequestID(withAccessLog(s.log, withLimits(s.bodyLimit, s.routes())))
	return s, nil
}

// bodyLimit is the largest body a request may have: a document upload
// its file and a little more (the upload handler counts the file itself),
// any other request a JSON body of MaxBodyBytes.
func (s *Server) bodyLimit(r *http.Request) int64 {
	if r.Method == http.MethodPost && r.URL.Path == uploadPath {
		return s.opts.MaxUploadBytes + uploadAllowance
	}
	return s.opts.MaxBodyBytes
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Run does the server's background work until ctx ends: it flushes usage
// counts (and once more at the end) and sweeps orphaned document files.
func (s *Server) Run(ctx context.Context) {
	done := make(chan struct{})
	go func() { defer close(done); s.sweepFiles(ctx) }()
	s.usage.run(ctx, func(err error) { s.log.Error("usage counts not stored; kept for the next try", "err", err) })
	<-done
}

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
// refuses: one that does not parse, or a parameter longer than any the
// service reads.
func queryProblem(r *http.Request) error {
	// r.URL.Query() drops what it cannot parse: a filter sent as
	// iataCode=%ZZ would vanish, and the answer be wider than asked.
	// Only an escape, a semicolon or too many parameters fail to
	// parse: a query without %, ; and & (one parameter) always parses.
	if strings.ContainsAny(r.URL.RawQuery, "%;&") {
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			return domain.Errorf(domain.InvalidRequest, "the query string is malformed: %v", err)
		}
	}
	return checkQueryLengths(r.URL.Query())
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

// waitFor waits, at most maxConsistencyWait, until the read models
// include sequence seq.
func (s *Server) waitFor(r *http.Request, seq uint64) error {
	ctx, cancel := context.WithTimeout(r.Context(), maxConsistencyWait)
	defer cancel()
	return s.projector.WaitFor(ctx, seq)
}
