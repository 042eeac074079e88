package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/cargostream/cargostream/domain"
	"github.com/google/uuid"
)

// idempotencyNamespace roots command ids derived from Idempotency-Keys.
var idempotencyNamespace = uuid.MustParse("0b7c3f55-2f0e-4d8a-8d5e-3f1b2a9c6e21")

// storedResponse is a response kept for replay under its Idempotency-Key.
type storedResponse struct {
	RequestHash string      `json:"requestHash"`
	Status      int         `json:"status"`
	Header      http.Header `json:"header"`
	Body        []byte      `json:"body"`
}

// replayedHeaders are the response headers kept for a replay.
var replayedHeaders = []string{"Content-Type", "Location", "Cargo-Sequence"}

// idempotent honours Idempotency-Key on POSTs: the first request runs as a
// command whose id follows from the key; a repeat with the same body gets
// the same response and appends nothing; a repeat with another body gets
// 422. Only successes are remembered. Admin endpoints are left out: their responses carry secrets, which
// are never stored.
func (s *Server) idempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if r.Method != http.MethodPost || key == "" || strings.HasPrefix(r.URL.Path, "/api/admin/") {
			next.ServeHTTP(w, r)
			return
		}
		if len(key) > 255 || strings.ContainsFunc(key, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
			writeError(w, r, s.log, domain.Errorf(domain.InvalidRequest, "Idempotency-Key must be 1 to 255 visible ASCII characters"))
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, r, s.log, readError(err))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p := principal(r.Context())
		scope := p.OrganizationID + "\x00" + key
		sum := sha256.Sum256([]byte(scope))
		storeKey := hex.EncodeToString(sum[:])
		reqSum := sha256.Sum256(append([]byte(r.Method+" "+r.URL.Path+"\x00"), body...))
		reqHash := hex.EncodeToString(reqSum[:])

		if raw, ok, err := s.responses.Get(r.Context(), storeKey); err != nil {
			writeError(w, r, s.log, err)
			return
		} else if ok {
			var prev storedResponse
			if err := json.Unmarshal(raw, &prev); err != nil {
				writeError(w, r, s.log, err)
				return
			}
			if prev.RequestHash != reqHash {
				writeError(w, r, s.log, errorf(codeIdempotencyReused, "this Idempotency-Key was used with a different request"))
				return
			}
			for k, v := range prev.Header {
				w.Header()[k] = v
			}
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(prev.Status)
			w.Write(prev.Body)
			return
		}

		cmdID := uuid.NewSHA1(idempotencyNamespace, []byte(scope)).String()
		rec := &statusRecorder{ResponseWriter: w, keep: &bytes.Buffer{}}
		next.ServeHTTP(rec, r.WithContext(contextWithCommandID(r.Context(), cmdID)))
		if rec.status < 200 || rec.status >= 300 {
			// Nothing was done: the client may correct the request and
			// send it again under the same key.
			return
		}
		stored := storedResponse{RequestHash: reqHash, Status: rec.status, Header: http.Header{}, Body: rec.keep.Bytes()}
		for _, h := range replayedHeaders {
			if v := w.Header().Values(h); len(v) > 0 {
				stored.Header[h] = v
			}
		}
		raw, _ := json.Marshal(stored)
		if _, err := s.responses.Create(r.Context(), storeKey, raw); err != nil {
			s.log.ErrorContext(r.Context(), "idempotency: response not stored", "request_id", requestID(r.Context()), "err", err)
		}
	})
}
