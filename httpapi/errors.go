package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

// Error values of the HTTP layer itself, beside the domain's codes.
const (
	codeMethodNotAllowed    = "method_not_allowed"
	codePayloadTooLarge     = string(domain.PayloadTooLarge)
	codeUnsupportedMedia    = "unsupported_media_type"
	codeIdempotencyReused   = "idempotency_key_reused"
	codeServiceUnavailable  = "service_unavailable"
	codeRangeNotSatisfiable = "range_not_satisfiable"
	// A client that hung up before the answer: not a failure of ours,
	// and no one is left to read the body. The access log shows it as
	// nginx does, 499.
	codeClientClosedRequest = "client_closed_request"
)

// statusOf is the one place that maps error codes to HTTP statuses.
var statusOf = map[string]int{
	string(domain.InvalidRequest):       http.StatusBadRequest,
	string(domain.ValidationError):      http.StatusBadRequest,
	string(domain.UnsupportedGrantType): http.StatusBadRequest,
	string(domain.InvalidGrant):         http.StatusUnauthorized,
	string(domain.InvalidClient):        http.StatusUnauthorized,
	string(domain.InvalidToken):         http.StatusUnauthorized,
	string(domain.Forbidden):            http.StatusForbidden,
	string(domain.NotFound):             http.StatusNotFound,
	codeMethodNotAllowed:                http.StatusMethodNotAllowed,
	string(domain.Conflict):             http.StatusConflict,
	string(domain.PreconditionFailed):   http.StatusPreconditionFailed,
	codePayloadTooLarge:                 http.StatusRequestEntityTooLarge,
	string(domain.QuotaExceeded):        http.StatusRequestEntityTooLarge,
	codeUnsupportedMedia:                http.StatusUnsupportedMediaType,
	codeIdempotencyReused:               http.StatusUnprocessableEntity,
	string(domain.Internal):             http.StatusInternalServerError,
	codeServiceUnavailable:              http.StatusServiceUnavailable,
	codeRangeNotSatisfiable:             http.StatusRequestedRangeNotSatisfiable,
	codeRateLimited:                     http.StatusTooManyRequests,
	codeClientClosedRequest:             499,
}

// errorBody is the spec's OAuth-style error body, used for every error.
// The token endpoint's also has the description under its RFC 6749 §5.2
// name (error is the same in both).
type errorBody struct {
	Error                   string              `json:"error"`
	ErrorDescription        string              `json:"errorDescription"`
	ErrorURI                string              `json:"errorUri"`
	ValidationErrors        []domain.FieldError `json:"validationErrors,omitempty"`
	RFC6749ErrorDescription string              `json:"error_description,omitempty"`
}

// httpError is an error of the HTTP layer: a message for the client, the
// headers that go with it (Retry-After, WWW-Authenticate), and the
// underlying error for the log. Without a code of its own it only adds
// headers to the error it wraps.
type httpError struct {
	code   string
	msg    string
	header http.Header
	err    error
}

// withHeader is err, answered with the header key: value as well.
func withHeader(err error, key, value string) error {
	h := http.Header{}
	h.Set(key, value)
	return &httpError{header: h, err: err}
}

func (e *httpError) Error() string {
	if e.code == "" {
		return e.err.Error()
	}
	if e.err != nil {
		return e.code + ": " + e.msg + ": " + e.err.Error()
	}
	return e.code + ": " + e.msg
}

func (e *httpError) Unwrap() error { return e.err }

// codedError is the outermost httpError in err's chain that has a code
// of its own, or nil.
func codedError(err error) *httpError {
	var he *httpError
	for e := err; errors.As(e, &he); e = he.err {
		if he.code != "" {
			return he
		}
	}
	return nil
}

func errorf(code, msg string) error { return &httpError{code: code, msg: msg} }

// writeError answers with the error body for err. Only errors the client
// cannot cause are logged as errors; they are never shown to the client.
// The access log shows the error's code.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	body := errorBody{Error: string(domain.Internal), ErrorDescription: "internal error; quote request id " + requestID(r.Context()) + " when reporting it"}
	var de *domain.Error
	coded := codedError(err)
	retryAfter := "1" // seconds, for a 503 whose error does not say
	switch {
	case errors.Is(err, context.Canceled) && errors.Is(r.Context().Err(), context.Canceled):
		// The client hung up: whatever failed, failed because of that.
		body.Error, body.ErrorDescription = codeClientClosedRequest, "the client closed the connection before the answer"
	case errors.As(err, &de):
		body.Error, body.ErrorDescription, body.ValidationErrors = string(de.Code), de.Message, de.Fields
	case coded != nil:
		body.Error, body.ErrorDescription = coded.code, coded.msg
	case errors.Is(err, projections.ErrBehind):
		body.Error, body.ErrorDescription = codeServiceUnavailable, "this replica's read models have not caught up yet; retry"
	case errors.Is(err, domain.ErrUnknownEventType):
		body.Error, body.ErrorDescription = codeServiceUnavailable, "the resource holds an event this replica cannot read, so it decides nothing on it; "+
			"nothing was done: retry (an event of a newer version of the service, during an upgrade, is read by a replica of that version; "+
			"one damaged is reported by cargoctl verify, to the operator)"
	case errors.Is(err, domain.ErrStoreFull):
		body.Error, body.ErrorDescription = codeServiceUnavailable, "the event store has no room for more events, and nothing was stored: "+
			"its operator has to make room; retry later, with the same Idempotency-Key"
		// A second would have every client retry into the same refusal
		// sixty times a minute until someone frees a disk.
		retryAfter = "60"
	case errors.Is(err, domain.ErrStoreUnavailable) && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		body.Error, body.ErrorDescription = codeServiceUnavailable, "the event store did not answer in time; retry"
	case errors.Is(err, domain.ErrStoreUnavailable):
		body.Error, body.ErrorDescription = codeServiceUnavailable, "the event store did not answer in time and nothing was found stored; retry, with the same Idempotency-Key"
	}
	// Headers the error carries, from the outermost in: the first to
	// set one wins.
	var he *httpError
	for e := err; errors.As(e, &he); e = he.err {
		for k, v := range he.header {
			if w.Header().Get(k) == "" {
				w.Header()[k] = v
			}
		}
	}
	status, ok := statusOf[body.Error]
	if !ok {
		status = http.StatusInternalServerError
	}
	if status == http.StatusInternalServerError {
		log.ErrorContext(r.Context(), "request failed", "request_id", requestID(r.Context()), "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if status == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cargostream", error="`+body.Error+`"`)
	}
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	if isUpload(r) {
		// The rest of a refused upload's body is not read, whoever
		// refused it (the upload handler, or, before it, a credential or
		// a rate limit): Connection: close tells the client to stop
		// sending, and the server closes the connection once it has
		// answered. Without it the server would first read on, up to 256
		// KiB, from a client that may have stalled.
		w.Header().Set("Connection", "close")
	}
	setErrorCode(r, body.Error)
	body.ErrorURI = absoluteURL(r, "/docs/errors#"+body.Error)
	body.ErrorDescription = clip(visible(body.ErrorDescription), maxErrorDescription)
	if slices.ContainsFunc(body.ValidationErrors, func(f domain.FieldError) bool { return strings.ContainsFunc(f.Message, invisible) }) {
		body.ValidationErrors = slices.Clone(body.ValidationErrors) // the error's own stay as they are
		for i := range body.ValidationErrors {
			body.ValidationErrors[i].Message = visible(body.ValidationErrors[i].Message)
		}
	}
	if st := stateOf(r.Context()); st != nil && st.oauth {
		body.RFC6749ErrorDescription = body.ErrorDescription
	}
	writeJSON(w, status, body)
}

// setErrorCode tells the access log which error r was answered with.
func setErrorCode(r *http.Request, code string) {
	if st := stateOf(r.Context()); st != nil {
		st.errorCode = code
	}
}

// maxErrorDescription bounds an error's description: descriptions quote
// what the client sent (an id, a path), and a 10 000-character id need
// not come back whole.
const maxErrorDescription = 500

// visible is s with each control character, bidirectional override and
// U+FFFD written as its code (U+202E): a description quotes what the
// client sent (an id from the path, %0d%0a decoded), which would garble
// a log or a screen that shows it, or hide what it says.
func visible(s string) string {
	if !strings.ContainsFunc(s, invisible) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if invisible(r) {
			fmt.Fprintf(&b, "%U", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// invisible tells the characters visible writes as their codes.
func invisible(r rune) bool { return domain.Unprintable(r) || unicode.IsControl(r) }

// clip cuts s to at most limit characters, marking the cut with "…".
func clip(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit-1]) + "…"
}
