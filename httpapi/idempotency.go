package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/google/uuid"
)

// idempotencyNamespace roots command ids derived from Idempotency-Keys.
var idempotencyNamespace = uuid.MustParse("0b7c3f55-2f0e-4d8a-8d5e-3f1b2a9c6e21")

// abandonedAfter is how long a request may hold its Idempotency-Key
// unfinished before a repeat may take it over: its process died, most
// likely, as a request waits at most a few seconds. Taking over is safe
// even if the first request still runs: both carry out one command, with
// the same id, which appends once.
const abandonedAfter = 10 * time.Second

// storedResponse is what is kept under an Idempotency-Key: first a marker
// that a request is under way, then its successful response for replay.
type storedResponse struct {
	RequestHash string      `json:"requestHash"`
	Pending     bool        `json:"pending,omitempty"`
	Nonce       string      `json:"nonce,omitempty"`
	StartedAt   time.Time   `json:"startedAt"`
	Status      int         `json:"status,omitempty"`
	Header      http.Header `json:"header,omitempty"`
	Body        []byte      `json:"body,omitempty"` // without a generated secret
	// SealedSecret is the secret the response generated (a webhook's, an
	// API key, a client's secret), sealed as a subscription's is: a
	// client whose first answer was lost gets it on the replay, where a
	// subscription signed with a secret it could never learn, or a key it
	// never saw, was all it had. SecretField is the body's field that had
	// it ("" in a record stored before there were others: "secret").
	SealedSecret []byte `json:"sealedSecret,omitempty"`
	SecretField  string `json:"secretField,omitempty"`
}

// secretFields are the top-level fields of a response that hold a secret
// generated for it, shown once: never stored as they are.
var secretFields = []string{"secret", "clientSecret", "apiKey"}

// replayedHeaders are the response headers kept for a replay.
var replayedHeaders = []string{"Content-Type", "Location", "Cargo-Sequence", "ETag"}

// idempotent honours Idempotency-Key on POSTs. The first request takes the
// key (a marker with its body's hash) before it runs, as a command whose
// id follows from the key and the body. A repeat with the same body gets
// the stored response and appends nothing, or 409 while the first is still
// running; a repeat with another body gets 422. Only successes are kept: a
// failed request frees its key, so a corrected request may use it again.
// A secret a response generated is kept sealed (see storedResponse), and
// an admin request with a secret of its own is left out (choosesSecret).
// Document uploads are left out: they are streamed,
// never held whole, so there is no hash of the body to take the key with
// before the request runs. By their path, not their content type: an
// upload in another form would be read whole, up to the upload limit,
// only to be refused.
func (s *Server) idempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys := r.Header.Values("Idempotency-Key")
		if r.Method != http.MethodPost || len(keys) == 0 || len(keys) == 1 && keys[0] == "" || r.URL.Path == uploadPath {
			next.ServeHTTP(w, r)
			return
		}
		// Of two keys the first was taken: a retry whose client (or a
		// proxy) added another would be carried out a second time, or
		// replay an answer to another request.
		if len(keys) > 1 {
			writeError(w, r, s.log, domain.Errorf(domain.InvalidRequest, "Idempotency-Key must be sent once; this request has it %d times", len(keys)))
			return
		}
		if err := s.runIdempotent(w, r, keys[0], next); err != nil {
			writeError(w, r, s.log, err)
		}
	})
}

func (s *Server) runIdempotent(w http.ResponseWriter, r *http.Request, key string, next http.Handler) error {
	if len(key) > 255 || strings.ContainsFunc(key, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
		return domain.Errorf(domain.InvalidRequest, "Idempotency-Key must be 1 to 255 visible ASCII characters")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return readError(err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if strings.HasPrefix(r.URL.Path, "/api/admin/") && choosesSecret(body) || r.URL.Path == "/api/webhooks" && carriesWebhookCredential(body) {
		next.ServeHTTP(w, r)
		return nil
	}
	ctx := r.Context()
	scope := principal(ctx).OrganizationID + "\x00" + key
	storeKey := hexHash([]byte(scope))
	reqHash := hexHash(append([]byte(r.Method+" "+r.URL.Path+"\x00"), body...))

	owned, prev, err := s.takeKey(ctx, storeKey, reqHash)
	if err != nil {
		return err
	}
	if !owned {
		switch {
		case prev.RequestHash != reqHash:
			return errorf(codeIdempotencyReused, "this Idempotency-Key was used with a different request")
		case prev.Pending:
			return withHeader(domain.Errorf(domain.Conflict, "a request with this Idempotency-Key is still in progress; retry shortly"), "Retry-After", "1")
		}
		body := prev.Body
		if prev.SealedSecret != nil {
			// Sealed with a webhook key changed since, without the
			// previous one kept, it cannot be opened: the replay goes
			// without it, as the subscription's deliveries do.
			if secret, _, err := s.dispatcher.Sealer.Open(prev.SealedSecret); err != nil {
				s.log.WarnContext(ctx, "idempotency: a replayed response's secret cannot be opened; replayed without it", "request_id", requestID(ctx), "err", err)
			} else {
				body = withSecret(body, cmp.Or(prev.SecretField, "secret"), secret)
			}
		}
		for k, v := range prev.Header {
			w.Header()[k] = v
		}
		w.Header().Set("Idempotent-Replayed", "true")
		// As writeEncoded says its length: the body is the stored one,
		// a secret put back in, so that is not among the headers kept.
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(prev.Status)
		w.Write(body)
		return nil
	}

	// The command id follows from the key and the body: a retry after the
	// record expired, or was lost in a crash, is the same command, which
	// its aggregate recognises and answers with the event it recorded.
	cmdID := uuid.NewSHA1(idempotencyNamespace, []byte(scope+"\x00"+reqHash)).String()
	rec := &statusRecorder{ResponseWriter: w, keep: &bytes.Buffer{}}
	next.ServeHTTP(rec, r.WithContext(contextWithCommandID(ctx, cmdID)))
	if rec.status < 200 || rec.status >= 300 {
		if err := s.responses.Delete(context.WithoutCancel(ctx), storeKey); err != nil {
			s.log.Log(ctx, domain.FailureLevel(err), "idempotency: key not freed; a repeat is answered 409 until it is taken over", "request_id", requestID(ctx), "err", err)
		}
		return nil
	}
	done := storedResponse{RequestHash: reqHash, StartedAt: time.Now(), Status: rec.status, Header: http.Header{}}
	var secret string
	if done.Body, done.SecretField, secret = takeSecret(rec.keep.Bytes()); secret != "" {
		done.SealedSecret = s.dispatcher.Sealer.Seal(secret)
	}
	for _, h := range replayedHeaders {
		if v := w.Header().Values(h); len(v) > 0 {
			done.Header[h] = v
		}
	}
	raw, _ := json.Marshal(done)
	if err := s.responses.Put(context.WithoutCancel(ctx), storeKey, raw); err != nil {
		s.log.Log(ctx, domain.FailureLevel(err), "idempotency: response not stored; a repeat is carried out again, as the same command", "request_id", requestID(ctx), "err", err)
	}
	return nil
}

// takeKey claims storeKey for a request with hash reqHash. It reports
// whether the caller owns the key now, and otherwise what holds it.
func (s *Server) takeKey(ctx context.Context, storeKey, reqHash string) (bool, storedResponse, error) {
	marker := storedResponse{RequestHash: reqHash, Pending: true, Nonce: uuid.NewString(), StartedAt: time.Now()}
	mine, _ := json.Marshal(marker)
	raw, rev, found, err := s.responses.GetRevision(ctx, storeKey)
	if err != nil {
		return false, storedResponse{}, err
	}
	if !found {
		var created bool
		if raw, created, err = s.responses.Create(ctx, storeKey, mine); err != nil {
			return false, storedResponse{}, err
		}
		if created {
			return true, marker, nil
		}
	}
	var prev storedResponse
	if err := json.Unmarshal(raw, &prev); err != nil {
		return false, prev, err
	}
	if found && prev.Pending && prev.RequestHash == reqHash && time.Since(prev.StartedAt) > abandonedAfter {
		ok, err := s.responses.Update(ctx, storeKey, mine, rev)
		return ok, prev, err
	}
	return false, prev, nil
}

func hexHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// choosesSecret reports whether an admin request's body holds a secret of
// the caller's choosing (a user's password, a client's secret): such a
// request does not take its Idempotency-Key, as the hash of its body, kept
// with the key, would be a copy of the secret far quicker to guess from
// than the bcrypt hash the credential keeps.
func choosesSecret(body []byte) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return false
	}
	_, password := obj["password"]
	_, clientSecret := obj["clientSecret"]
	return password || clientSecret
}

// carriesWebhookCredential reports whether a webhook registration's body
// holds a credential of the subscriber's choosing: its own signing secret,
// or user information in its URL (https://user:password@…). Such a
// registration does not take its Idempotency-Key, as an admin request with
// a secret of its own does not (see choosesSecret): the event keeps both
// sealed, and the hash of the body, kept with the key, and the command id
// made from it, kept in the event for good, would be copies far quicker to
// guess from. A url that does not parse counts as one: it is refused.
func carriesWebhookCredential(body []byte) bool {
	var reg struct {
		Secret json.RawMessage `json:"secret"`
		URL    json.RawMessage `json:"url"`
	}
	if json.Unmarshal(body, &reg) != nil {
		return false
	}
	// An empty secret is none: the service generates one, as without
	// the field, and a replay gives it back sealed (see storedResponse).
	var secret string
	if len(reg.Secret) > 0 && string(reg.Secret) != "null" && (json.Unmarshal(reg.Secret, &secret) != nil || secret != "") {
		return true
	}
	var raw string
	if json.Unmarshal(reg.URL, &raw) != nil {
		return false
	}
	u, err := url.Parse(raw)
	return err != nil || u.User != nil
}

// takeSecret takes the first of secretFields that a JSON object has out of
// it, returning the object without it, the field and the secret ("" if
// none): a generated secret is never stored as it is. A body that names
// none of the fields, as most do (a quote, a booking), is not decoded.
func takeSecret(body []byte) (_ []byte, field, secret string) {
	var obj map[string]json.RawMessage
	if !slices.ContainsFunc(secretFields, func(f string) bool { return bytes.Contains(body, []byte(f)) }) ||
		json.Unmarshal(body, &obj) != nil {
		return body, "", ""
	}
	for _, f := range secretFields {
		if json.Unmarshal(obj[f], &secret) != nil || secret == "" {
			continue
		}
		delete(obj, f)
		out, err := json.Marshal(obj)
		if err != nil {
			return body, "", ""
		}
		return append(out, '\n'), f, secret
	}
	return body, "", ""
}

// withSecret puts secret back into the JSON object body, as field.
func withSecret(body []byte, field, secret string) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return body
	}
	obj[field], _ = json.Marshal(secret)
	out, err := json.Marshal(obj)
	if err != nil {
		return body
	}
	return append(out, '\n')
}
