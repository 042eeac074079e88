package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/storetest"
	"github.com/cargostream/cargostream/projections"
	"golang.org/x/crypto/bcrypt"
)

func TestFailoverErrorsAreAnswersAClientCanActOn(t *testing.T) {
	storeDown := fmt.Errorf("%w: append: nats: timeout", domain.ErrStoreUnavailable)
	for _, tt := range []struct {
		name       string
		method     string
		err        error
		status     int
		retryAfter string
		says       string // in the error's description
	}{
		{"the event store did not answer a write", "POST", fmt.Errorf("creating quote: %w", storeDown),
			http.StatusServiceUnavailable, "1", "nothing was found stored; retry, with the same Idempotency-Key"},
		// A read stores nothing, and has no Idempotency-Key.
		{"the event store did not answer a read", "GET", fmt.Errorf("reading the audit log: %w", storeDown),
			http.StatusServiceUnavailable, "1", "the event store did not answer in time; retry"},
		{"the event store has no room", "POST", fmt.Errorf("creating quote: %w: nats: insufficient resources", domain.ErrStoreFull),
			http.StatusServiceUnavailable, "60", "no room for more events, and nothing was stored: its operator has to make room"},
		{"read models behind", "GET", projections.ErrBehind, http.StatusServiceUnavailable, "1", "not caught up"},
		{"anything else", "POST", errors.New("disk on fire"), http.StatusInternalServerError, "", "internal error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			writeError(w, httptest.NewRequest(tt.method, "/api/quotes", nil), slog.New(slog.DiscardHandler), tt.err)
			var body errorBody
			json.Unmarshal(w.Body.Bytes(), &body)
			if w.Code != tt.status || w.Header().Get("Retry-After") != tt.retryAfter || !strings.Contains(body.ErrorDescription, tt.says) {
				t.Errorf("= %d, Retry-After %q, %+v; want %d, %q, %q", w.Code, w.Header().Get("Retry-After"), body, tt.status, tt.retryAfter, tt.says)
			}
		})
	}
}

func TestAClientThatHungUpIsA499AndNotAFailure(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	ctx, hangUp := context.WithCancel(context.Background())
	hangUp()
	w := httptest.NewRecorder()
	// What a command returns when its request's context ends mid-way.
	writeError(w, httptest.NewRequest("POST", "/api/quotes", nil).WithContext(ctx), log, fmt.Errorf("creating quote: %w", context.Canceled))
	if w.Code != 499 || logged.Len() != 0 {
		t.Errorf("= %d, logged %q; want 499 and nothing logged", w.Code, logged.String())
	}
}

// An error quotes what the client sent: a control character or a
// bidirectional override in it comes back as its code, in the
// description and in a field's message, and the error itself is not
// changed.
func TestAnErrorWritesTheCharactersItMayNotShowAsTheirCodes(t *testing.T) {
	fields := domain.Problems{{Field: "notes", Code: domain.CodeInvalidValue, Message: "not \u202eevil\r\n"}}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{domain.Errorf(domain.NotFound, "no stock request \u202e\r\nx"), "no stock request U+202EU+000DU+000Ax"},
		{fields.Err(), "notes: not U+202EevilU+000DU+000A"},
		{domain.Errorf(domain.NotFound, "no flight LH1-2026-12-01 in Zürich\ttoday"), "no flight LH1-2026-12-01 in ZürichU+0009today"},
	} {
		w := httptest.NewRecorder()
		writeError(w, httptest.NewRequest("GET", "/api/x", nil), slog.New(slog.DiscardHandler), tt.err)
		var body errorBody
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if body.ErrorDescription != tt.want {
			t.Errorf("description %q, want %q", body.ErrorDescription, tt.want)
		}
		for _, f := range body.ValidationErrors {
			if f.Message != strings.TrimPrefix(tt.want, f.Field+": ") {
				t.Errorf("%s: message %q", f.Field, f.Message)
			}
		}
	}
	if fields[0].Message != "not \u202eevil\r\n" {
		t.Errorf("the error's own field message became %q", fields[0].Message)
	}
}

func TestAnErrorCarriesItsHeadersToTheAnswer(t *testing.T) {
	for _, tt := range []struct {
		name       string
		err        error
		status     int
		header     string // the header checked
		want       string
		retryAfter string
	}{
		{"a domain error with a challenge", withHeader(domain.Errorf(domain.InvalidToken, "expired"), "WWW-Authenticate", `Bearer error="invalid_token"`),
			http.StatusUnauthorized, "WWW-Authenticate", `Bearer error="invalid_token"`, ""},
		{"a conflict to retry soon", withHeader(domain.Errorf(domain.Conflict, "in progress"), "Retry-After", "1"),
			http.StatusConflict, "Retry-After", "1", "1"},
		{"a coded error of this layer, wrapped", withHeader(&httpError{code: codeRateLimited, msg: "too many",
			header: http.Header{"Retry-After": {"30"}}}, "X-Extra", "yes"), http.StatusTooManyRequests, "X-Extra", "yes", "30"},
		{"a 503 keeps the Retry-After it carries", &httpError{code: codeServiceUnavailable, msg: "starting",
			header: http.Header{"Retry-After": {"5"}}}, http.StatusServiceUnavailable, "Retry-After", "5", "5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			writeError(w, httptest.NewRequest("GET", "/api/quotes", nil), slog.New(slog.DiscardHandler), tt.err)
			if w.Code != tt.status || w.Header().Get(tt.header) != tt.want || w.Header().Get("Retry-After") != tt.retryAfter {
				t.Errorf("= %d, %s %q, Retry-After %q; want %d, %q, %q", w.Code, tt.header, w.Header().Get(tt.header),
					w.Header().Get("Retry-After"), tt.status, tt.want, tt.retryAfter)
			}
		})
	}
}

func TestErrorURIIsAbsolute(t *testing.T) {
	tests := []struct {
		name      string
		publicURL string
		target    string
		tls       bool
		want      string
	}{
		{"under the configured public URL", "https://cargo.example.com/gw", "http://10.0.0.5:8080/api/quotes", false,
			"https://cargo.example.com/gw/docs/errors#not_found"},
		{"under the host the request came to", "", "http://127.0.0.1:8080/api/quotes", false, "http://127.0.0.1:8080/docs/errors#not_found"},
		{"over TLS", "", "https://cargo.example.com/api/quotes", true, "https://cargo.example.com/docs/errors#not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h := withRequestID(withPublicURL(tt.publicURL, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				writeError(w, r, slog.New(slog.DiscardHandler), domain.Errorf(domain.NotFound, "no such thing"))
			})))
			r := httptest.NewRequest("GET", tt.target, nil)
			if !tt.tls {
				r.TLS = nil
			}
			h.ServeHTTP(w, r)
			var body errorBody
			json.Unmarshal(w.Body.Bytes(), &body)
			if body.ErrorURI != tt.want {
				t.Errorf("errorUri = %q, want %q", body.ErrorURI, tt.want)
			}
		})
	}
}

// A replica behind the stream makes a request wait: for the Cargo-Sequence
// it names, or, for a token or a manifest, until it holds every event. A client that
// hangs up meanwhile is a 499, as any other hang-up, not a 503 that says
// the replica is behind: the access log, the metrics and the usage counts
// would count it as the service failing.
func TestAClientThatHangsUpWhileAReplicaCatchesUpIsA499(t *testing.T) {
	ctx := t.Context()
	store := storetest.Open(t)
	created, err := commands.New(store, bcrypt.MinCost, nil).CreateOrganization(ctx, commands.NewMeta(domain.Principal{Subject: "system:test"}, "", ""),
		domain.CreateOrganization{OrganizationID: "acme", Name: "Acme", Role: domain.RoleForwarder})
	if err != nil {
		t.Fatal(err)
	}
	// The projector never runs: the replica is behind the event just stored.
	s := &Server{log: slog.New(slog.DiscardHandler), projector: projections.NewProjector(store, slog.New(slog.DiscardHandler))}
	s.tokenLimiter.now = time.Now
	for _, tt := range []struct {
		name    string
		handler http.Handler
		req     func(context.Context, string) *http.Request
	}{
		{"a read that waits for its Cargo-Sequence", s.consistentReads(http.NotFoundHandler()), func(ctx context.Context, url string) *http.Request {
			r, _ := http.NewRequestWithContext(ctx, "GET", url+"/api/quotes", nil)
			r.Header.Set("Cargo-Sequence", strconv.FormatUint(created.Sequence, 10))
			return r
		}},
		{"a token request that waits for the replica to hold every event", s.handle(s.handleToken()), func(ctx context.Context, url string) *http.Request {
			r, _ := http.NewRequestWithContext(ctx, "POST", url+"/api/auth/token",
				strings.NewReader(`{"grantType":"client_credentials","clientId":"acme-tms","clientSecret":"a secret"}`))
			r.Header.Set("Content-Type", "application/json")
			return r
		}},
		{"a manifest that waits for the replica to hold every event", s.handle(s.handleSubmitManifest()), func(ctx context.Context, url string) *http.Request {
			r, _ := http.NewRequestWithContext(ctx, "POST", url+"/api/flights/LH400-2026-12-01/manifests", strings.NewReader(`{"awbNumbers":["020-12345675"]}`))
			r.Header.Set("Content-Type", "application/json")
			return r
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			arrived, answered := make(chan struct{}), make(chan int, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(arrived)
				rec := &statusRecorder{ResponseWriter: w}
				defer func() { answered <- rec.status }() // 0 if the handler panics
				tt.handler.ServeHTTP(rec, r)
			}))
			defer srv.Close()
			reqCtx, hangUp := context.WithCancel(ctx)
			go func() {
				<-arrived
				hangUp()
			}()
			if resp, err := http.DefaultClient.Do(tt.req(reqCtx, srv.URL)); err == nil {
				resp.Body.Close()
				t.Fatalf("answered %d before the client hung up", resp.StatusCode)
			}
			if status := <-answered; status != 499 {
				t.Errorf("answered %d, want 499", status)
			}
		})
	}
}
