package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/google/uuid"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyPrincipal
	keyCommandID
)

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// principal is the authenticated caller. The request context holds a
// pointer that authentication fills in, so the access log, wrapped around
// everything, sees who called.
func principal(ctx context.Context) domain.Principal {
	if p, ok := ctx.Value(keyPrincipal).(*domain.Principal); ok {
		return *p
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
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", id)
		ctx := context.WithValue(r.Context(), keyRequestID, id)
		ctx = context.WithValue(ctx, keyPrincipal, &domain.Principal{})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
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

// withAccessLog logs one line per request, and turns a panic into a 500
// with the request id, so no client ever sees a stack trace.
func withAccessLog(log *slog.Logger, next http.Handler) http.Handler {
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
			log.InfoContext(r.Context(), "request", "request_id", requestID(r.Context()), "method", r.Method,
				"path", r.URL.Path, "status", rec.status, "bytes", rec.bytes, "duration", time.Since(start),
				"remote", r.RemoteAddr, "subject", principal(r.Context()).Subject)
		}()
		next.ServeHTTP(rec, r)
	})
}

// withLimits caps request bodies and sets headers every response needs.
func withLimits(limit func(*http.Request) int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, limit(r))
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}
