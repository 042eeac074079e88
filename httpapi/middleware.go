package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/metrics"
	"github.com/google/uuid"
)

type ctxKey int

const (
	keyRequest ctxKey = iota
	keyCommandID
)

// requestState is what the middleware learns about a request as it goes,
// behind one context value: the request id, and the caller, whom
// authentication fills in so that the access log, wrapped around
// everything, sees who called.
type requestState struct {
	id        string
	principal domain.Principal
	errorCode string // the error answered, if any
	publicURL string // the configured base of absolute links; "" for the request's own
	oauth     bool   // errors name their description as RFC 6749 §5.2 does too
	route     string // the pattern of the route it took, if any
	// waited is how long a long poll waited for a change (Prefer: wait):
	// time the client asked to wait, not the server's, and left out of
	// the request's recorded duration.
	waited time.Duration
}

func stateOf(ctx context.Context) *requestState {
	st, _ := ctx.Value(keyRequest).(*requestState)
	return st
}

func requestID(ctx context.Context) string {
	if st := stateOf(ctx); st != nil {
		return st.id
	}
	return ""
}

// principal is the authenticated caller.
func principal(ctx context.Context) domain.Principal {
	if st := stateOf(ctx); st != nil {
		return st.principal
	}
	return domain.Principal{}
}

// commandID is the id of the command this request carries out: stable
// across retries when the client sent an Idempotency-Key, else empty.
func commandID(ctx context.Context) string {
	id, _ := ctx.Value(keyCommandID).(string)
	return id
}

func contextWithCommandID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, keyCommandID, id)
}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// withRequestID takes the caller's X-Request-Id when it is sane, or makes
// one, and echoes it on the response.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !requestIDPattern.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyRequest, &requestState{id: id})))
	})
}

// withPublicURL tells the handlers after it the configured public base
// URL of the service (Options.PublicURL), for absolute links; inside
// withRequestID.
func withPublicURL(publicURL string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st := stateOf(r.Context()); st != nil {
			st.publicURL = publicURL
		}
		next.ServeHTTP(w, r)
	})
}

// absoluteURL is path under the service's public base URL: the configured
// one, or else the scheme and host the request came to (the host as the
// server accepted it; forwarded headers are not trusted, so behind a
// proxy that terminates TLS the base must be configured).
func absoluteURL(r *http.Request, path string) string {
	if st := stateOf(r.Context()); st != nil && st.publicURL != "" {
		return st.publicURL + path
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if host == "" { // HTTP/1.0 without a Host header
		host = "localhost"
	}
	return scheme + "://" + host + path
}

// newRequestID is a random (version 4) UUID. A request id must be
// unique, not secret: the runtime's generator, seeded from the system's
// entropy, serves, without the system call per request of crypto/rand.
func newRequestID() string {
	var u uuid.UUID
	binary.LittleEndian.PutUint64(u[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rand.Uint64())
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // the variant of RFC 9562
	return u.String()
}

// statusRecorder remembers the status and size of a response, and keeps
// a copy of the body when keep is set.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
	keep   *bytes.Buffer
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (the upload
// handler extends its read deadline).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if s.keep != nil {
		s.keep.Write(b)
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

// withAccessLog logs one line per request, counts it in m, and turns a
// panic into a 500 with the request id, so no client ever sees a stack
// trace.
func withAccessLog(log *slog.Logger, m *metrics.Metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				err := fmt.Errorf("panic: %v\n%s", v, debug.Stack())
				if rec.status == 0 {
					writeError(rec, r, log, err)
				} else {
					log.ErrorContext(r.Context(), "panic after the response started", "request_id", requestID(r.Context()), "err", err)
				}
			}
			// Checked first: the attributes cost more than a dropped line.
			if ctx := r.Context(); log.Enabled(ctx, slog.LevelInfo) {
				// Behind a trusted proxy, the client's port is the
				// proxy's to know: its address alone, and the proxy.
				remote, proxy := r.RemoteAddr, ""
				if p, ok := ctx.Value(proxyKey{}).(string); ok {
					remote, proxy = clientIP(r), p
				}
				attrs := []slog.Attr{slog.String("request_id", requestID(ctx)), slog.String("method", r.Method),
					slog.String("path", r.URL.Path), slog.Int("status", rec.status), slog.Int("bytes", rec.bytes),
					slog.Duration("duration", time.Since(start)), slog.String("remote", remote),
					slog.String("subject", principal(ctx).Subject)}
				if proxy != "" {
					attrs = append(attrs, slog.String("proxy", proxy))
				}
				if st := stateOf(ctx); st != nil && st.errorCode != "" {
					attrs = append(attrs, slog.String("error", st.errorCode))
				}
				log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
			}
			route, took := "", time.Since(start)
			if st := stateOf(r.Context()); st != nil {
				route, took = st.route, took-st.waited
			}
			m.Request(route, r.Method, cmp.Or(rec.status, http.StatusOK), took)
		}()
		next.ServeHTTP(rec, r)
	})
}

// withOAuthErrors marks the errors of an OAuth endpoint: their body has
// error_description beside the spec's errorDescription, for OAuth client
// libraries.
func withOAuthErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st := stateOf(r.Context()); st != nil {
			st.oauth = true
		}
		next.ServeHTTP(w, r)
	})
}

// routed notes route, the pattern of the route a request took (see
// noteRoute), before next serves it.
func routed(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noteRoute(r, route)
		next.ServeHTTP(w, r)
	})
}

// noteRoute notes route, the pattern of the route r took, for its
// metrics: a label of few values, where the path would take any.
func noteRoute(r *http.Request, route string) {
	if st := stateOf(r.Context()); st != nil {
		st.route = route
	}
}

// withLimits caps request bodies and sets headers every response needs.
func (s *Server) withLimits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.bodyLimit(r))
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// declaredSize refuses at once, and closes the connection, a body whose
// Content-Length is over its cap (see withLimits): read, it was refused
// only once the cap's bytes came, and a client that sent fewer than it
// declared waited for the server's read timeout (a minute), to get a 400
// that the body could not be read. It goes after the credential and the
// rate limit, whose answers come first as for any other request.
func (s *Server) declaredSize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if limit := s.bodyLimit(r); r.ContentLength > limit {
			w.Header().Set("Connection", "close")
			writeError(w, r, s.log, s.bodyTooLarge(r, limit))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// proxyKey is the context key of the address (host:port) of the trusted
// proxy a request came by, which withClientAddress replaced in RemoteAddr
// with the client's (whose port, ":0", is none).
type proxyKey struct{}

// withClientAddress puts the client's own address in RemoteAddr when a
// request comes through a proxy the operator trusts (trusted), so that
// rate limits, lockouts, the access log and the audit log see clients,
// not the load balancer. The client is the rightmost X-Forwarded-For
// address that is not a trusted proxy: the addresses left of it were
// written by the client itself, and could be anything.
func withClientAddress(trusted []netip.Prefix, next http.Handler) http.Handler {
	if len(trusted) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if client, ok := forwardedClient(r.RemoteAddr, r.Header.Values("X-Forwarded-For"), trusted); ok {
			// A shallow copy (the caller's request stays as it was), with
			// the proxy's address for the access log.
			r = r.WithContext(context.WithValue(r.Context(), proxyKey{}, r.RemoteAddr))
			r.RemoteAddr = netip.AddrPortFrom(client, 0).String()
		}
		next.ServeHTTP(w, r)
	})
}

// forwardedClient is the client a request from peer (host:port) with the
// X-Forwarded-For header values forwarded came from, if peer is a trusted
// proxy and the header names one. An entry that is not an address ends
// the walk: nothing left of it can be trusted, and the nearest address
// read stands. Nor is an address with a zone (fe80::1%eth0): the zone
// names an interface of the host that wrote it, never a client's address
// here, and is any text its sender chose, which the audit log would show
// as the client's address.
func forwardedClient(peer string, forwarded []string, trusted []netip.Prefix) (netip.Addr, bool) {
	isTrusted := func(a netip.Addr) bool {
		return slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(a.Unmap()) })
	}
	from, err := netip.ParseAddrPort(peer)
	if err != nil || !isTrusted(from.Addr()) {
		return netip.Addr{}, false
	}
	hops := strings.Split(strings.Join(forwarded, ","), ",")
	var client netip.Addr
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil || a.Zone() != "" {
			break
		}
		client = a.Unmap()
		if !isTrusted(client) {
			break
		}
	}
	return client, client.IsValid()
}
