package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/metrics"
	"github.com/cargostream/cargostream/projections"
)

func uitoa(n uint64) string { return strconv.FormatUint(n, 10) }

// handleHealth answers while the process runs.
func (s *Server) handleHealth() http.Handler { return health() }

func health() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// StartProgress is how far a starting replica has come.
type StartProgress struct {
	Stage         string // what it is doing now, for people
	NATSConnected bool
	Applied       uint64 // the read models' replay: applied so far,
	StreamLast    uint64 // of the stream's events at the start of the replay (0: not known)
}

// Starting serves while a replica starts, before it serves the API:
// /healthz answers 200 from the first second, so that a liveness probe
// never kills a replica for replaying a long stream; /readyz answers 503
// and logs how far the start has come (no caller can be told: none can be
// authenticated before the read models are replayed, see
// domain.ReadinessDetailsVisibleTo); every other request gets the spec's
// 503 body with Retry-After.
// stage names what the replica is doing; progress says how far, from
// what the replica knows: neither asks the stream, so that probes cost a
// starting replica nothing. publicURL is the base of absolute links, as
// Options.PublicURL.
func Starting(log *slog.Logger, publicURL string, m *metrics.Metrics, stage func() string, progress func() StartProgress) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", routed("/healthz", health()))
	mux.Handle("GET /readyz", routed("/readyz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := progress()
		attrs := []any{"reason", "starting: " + p.Stage, "natsConnected", p.NATSConnected, "appliedSequence", p.Applied}
		if p.StreamLast > 0 {
			attrs = append(attrs, "streamSequence", p.StreamLast, "lag", p.StreamLast-min(p.Applied, p.StreamLast))
		}
		log.InfoContext(r.Context(), "not ready yet", attrs...)
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready"})
	})))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, log, errorf(codeServiceUnavailable, "this replica is starting ("+stage()+"); retry shortly"))
	})
	return withRequestID(withPublicURL(publicURL, withAccessLog(log, m, mux)))
}

// handleReady answers 200 while this replica may serve: NATS is
// connected, the read models hold every event that was in the stream at
// start, are at most ReadyMaxLag events behind it and not stuck. Otherwise
// 503, so that a load balancer sends reads elsewhere. The reason and the
// figures are for admins (domain.ReadinessDetailsVisibleTo), who send
// their credential as to any endpoint, and the log, which says when the
// answer turns; everyone else learns the status alone.
func (s *Server) handleReady() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		connected, caughtUp := s.ready(), s.projector.CaughtUp()
		body := map[string]any{"natsConnected": connected, "readModelsCaughtUp": caughtUp,
			"appliedSequence": s.projector.Applied(), "subscriptionResumes": s.projector.Resumes()}
		problem := ""
		switch {
		case s.draining.Load():
			problem = "shutting down"
		case !connected:
			problem = "not connected to NATS"
		case !caughtUp:
			problem = "read models are still replaying the stream"
		default:
			problem = s.lagProblem(r, body)
		}
		status := http.StatusOK
		body["status"] = "ready"
		if problem != "" {
			status = http.StatusServiceUnavailable
			body["status"], body["reason"] = "not ready", problem
		}
		if wasReady := s.wasReady.Swap(problem == ""); wasReady != (problem == "") {
			attrs := make([]any, 0, 2*len(body))
			for _, k := range slices.Sorted(maps.Keys(body)) {
				attrs = append(attrs, k, body[k])
			}
			level := slog.LevelWarn
			if problem == "" {
				level = slog.LevelInfo
			}
			s.log.Log(r.Context(), level, "readiness changed", attrs...)
		}
		if who, err := s.principalOf(r); err != nil || !domain.ReadinessDetailsVisibleTo(who) {
			body = map[string]any{"status": body["status"]}
		}
		writeJSON(w, status, body)
	})
}

// readyLagTimeout bounds /readyz's look at the stream: a probe must get
// its answer, with the reason, within a probe's usual timeout (1 s in
// Kubernetes), the request's own time included. A leader answers in
// milliseconds; a look not answered in time leaves the last answer
// standing (see Lag), so a shorter wait changes no verdict. At 1 s, every
// probe of an election (6 or 7 in a row, measured) ran out a 1 s timeout.
const readyLagTimeout = 400 * time.Millisecond

// lagProblem compares the read models with the stream, adds what it found
// to body, and says why they should not serve, or "".
func (s *Server) lagProblem(r *http.Request, body map[string]any) string {
	ctx, cancel := context.WithTimeout(r.Context(), readyLagTimeout)
	defer cancel()
	lag, err := s.projector.Lag(ctx)
	if err != nil {
		return "the stream cannot be read: " + err.Error()
	}
	body["streamSequence"], body["lag"] = lag.StreamLast, lag.Events()
	if lag.Err != nil {
		body["streamUnanswered"] = lag.Unanswered.Round(time.Millisecond).String() + ": " + lag.Err.Error()
	}
	return lag.Problem(s.opts.ReadyMaxLag, s.opts.ReadyStall)
}

func (s *Server) handleJWKS() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := json.Marshal(s.tokens.JWKS())
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(b)
	})
}

// consistentReads lets a client that wrote through another replica read
// its write here: a request with Cargo-Sequence waits until this replica's
// read models have applied that sequence. Writes honour it too, for those
// decided against read models (a manifest names AWBs booked moments ago).
func (s *Server) consistentReads(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Sent twice, it is a list (as RFC 9110 joins lines), which no
		// sequence is: the first line must not stand for it, as the wait
		// the client asked for may be the other one's. Said so, as for
		// Idempotency-Key: "must be a stream sequence number" sent a
		// client whose two lines were both numbers looking at their form.
		lines := r.Header.Values("Cargo-Sequence")
		if len(lines) > 1 {
			writeError(w, r, s.log, errorf("invalid_request", fmt.Sprintf("Cargo-Sequence must be sent once; this request has it %d times", len(lines))))
			return
		}
		v := strings.Join(lines, "")
		if v == "" {
			next.ServeHTTP(w, r)
			return
		}
		seq, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, r, s.log, errorf("invalid_request", "Cargo-Sequence must be a stream sequence number"))
			return
		}
		if s.projector.PastEnd(r.Context(), seq) {
			writeError(w, r, s.log, errorf("invalid_request", fmt.Sprintf("Cargo-Sequence %d is past the end of the stream: send back one a response gave you", seq)))
			return
		}
		w.Header().Set("Cargo-Sequence", uitoa(seq))
		switch err := s.waitFor(r, seq); {
		case err == nil:
			next.ServeHTTP(w, r)
		case errors.Is(err, projections.ErrBehind) && r.Context().Err() == nil:
			writeError(w, r, s.log, errorf(codeServiceUnavailable, fmt.Sprintf("this replica has not reached Cargo-Sequence %d yet; nothing was done: retry", seq)))
		default: // a client that hung up among them: 499
			writeError(w, r, s.log, err)
		}
	})
}

// handleMetrics serves the process's metrics in the Prometheus text
// format, to admins (a separate listener, CARGO_METRICS_ADDR, serves them
// to a scraper without a token).
func (s *Server) handleMetrics() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		s.metrics.Handler().ServeHTTP(w, r)
		return nil
	}
}
