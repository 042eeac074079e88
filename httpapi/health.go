package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cargostream/cargostream/projections"
)

func uitoa(n uint64) string { return strconv.FormatUint(n, 10) }

// handleHealth answers while the process runs.
func (s *Server) handleHealth() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// handleReady answers 200 once NATS is connected and the read models hold
// everything that was in the stream at start; 503 before.
func (s *Server) handleReady() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		connected, caughtUp := s.ready(), s.projector.CaughtUp()
		status, word := http.StatusOK, "ready"
		if !connected || !caughtUp {
			status, word = http.StatusServiceUnavailable, "not ready"
		}
		writeJSON(w, status, map[string]any{"status": word, "natsConnected": connected,
			"readModelsCaughtUp": caughtUp, "appliedSequence": s.projector.Applied()})
	})
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
		v := r.Header.Get("Cargo-Sequence")
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
		switch err := s.settle(w, r, seq); {
		case errors.Is(err, projections.ErrBehind):
			writeError(w, r, s.log, errorf(codeServiceUnavailable, fmt.Sprintf("this replica has not reached Cargo-Sequence %d yet; nothing was done: retry", seq)))
		case err != nil:
			writeError(w, r, s.log, err)
		default:
			next.ServeHTTP(w, r)
		}
	})
}
