package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/cargostream/cargostream/internal/version"
)

// A body declared larger than the limit is refused at once, with the
// connection closed, though the client has sent only part of it and
// sends no more: read, it was refused only once the limit's bytes came,
// and such a client waited for the read timeout, a minute, to get a 400
// that its body could not be read.
func TestABodyDeclaredLargerThanTheLimitIsRefusedBeforeItArrives(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_MAX_BODY_BYTES": "2048"})
	tok := s.demoToken(t, "demo-forwarder")
	for _, tt := range []struct{ path, contentType, want string }{
		{"/api/quotes", "application/json", "the body is larger than 2048 bytes"},
		{"/api/documents", "multipart/form-data; boundary=x", "a document may have at most"},
	} {
		body, more := io.Pipe() // more is never written to nor closed: the rest of the body never comes
		defer more.Close()
		go more.Write([]byte(`{"origin": "FRA", `))
		req, err := http.NewRequest(http.MethodPost, s.base+tt.path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = 100 << 20
		req.Header.Set("Content-Type", tt.contentType)
		req.Header.Set("Authorization", "Bearer "+tok)
		r := s.send(t, req, nil)
		if e := r.apiError(t); r.status != http.StatusRequestEntityTooLarge || e.Error != "payload_too_large" || !strings.Contains(e.ErrorDescription, tt.want) || !r.closed {
			t.Errorf("%s declaring 100 MiB, sending 18 bytes: %d %s (connection closed: %t); want 413 saying %q, the connection closed", tt.path, r.status, r.body, r.closed, tt.want)
		}
	}
}

func TestHTTPBasics(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_MAX_BODY_BYTES": "2048"})
	tok := s.demoToken(t, "demo-forwarder")
	big := rfq()
	big["notes"] = strings.Repeat("x", 3000)
	tests := []struct {
		name   string
		req    request
		status int
		error  string
	}{
		{"unknown route", request{method: "GET", path: "/api/nothing", token: tok}, 404, "not_found"},
		{"unknown route without a token", request{method: "GET", path: "/nothing"}, 404, "not_found"},
		{"wrong method", request{method: "DELETE", path: "/api/quotes", token: tok}, 405, "method_not_allowed"},
		{"wrong method on the token endpoint", request{method: "GET", path: "/api/auth/token"}, 405, "method_not_allowed"},
		{"body too large", request{method: "POST", path: "/api/quotes", token: tok, body: big}, 413, "payload_too_large"},
		{"wrong content type", request{method: "POST", path: "/api/quotes", token: tok, body: "<rfq/>", contentType: "application/xml"}, 415, "unsupported_media_type"},
		{"no content type", request{method: "POST", path: "/api/quotes", token: tok, body: "{}", contentType: ";"}, 415, "unsupported_media_type"},
		{"JSON in another charset", request{method: "POST", path: "/api/quotes", token: tok, body: rfq(), contentType: "application/json; charset=latin1"}, 415, "unsupported_media_type"},
		{"compressed JSON", request{method: "POST", path: "/api/quotes", token: tok, body: "\x1f\x8b\x08", header: map[string]string{"Content-Encoding": "gzip"}}, 415, "unsupported_media_type"},
		{"a null body", request{method: "POST", path: "/api/quotes", token: tok, body: "null"}, 400, "invalid_request"},
		{"a filter that does not parse", request{method: "GET", path: "/api/airports?country=FR&iataCode=%ZZ", token: tok}, 400, "invalid_request"},
		{"a query with semicolons", request{method: "GET", path: "/api/airports?limit=1;iataCode=FRA", token: tok}, 400, "invalid_request"},
		{"a lone filter that does not parse", request{method: "GET", path: "/api/airports?iataCode=%ZZ", token: tok}, 400, "invalid_request"},
		{"a lone filter with a semicolon", request{method: "GET", path: "/api/airports?iataCode=FRA;", token: tok}, 400, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, tt.req)
			if e := r.apiError(t); r.status != tt.status || e.Error != tt.error || e.ErrorURI != s.base+"/docs/errors#"+tt.error {
				t.Errorf("= %d %s, want %d %s linking to %s/docs/errors", r.status, r.body, tt.status, tt.error, s.base)
			}
			if r.header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}

	// An error quotes what was sent, but not all of a 5000-character id.
	if e := s.do(t, request{method: "GET", path: "/api/flights/" + strings.Repeat("L", 5000), token: tok}).apiError(t); e.Error != "not_found" ||
		!strings.HasPrefix(e.ErrorDescription, "no flight LLL") || !strings.HasSuffix(e.ErrorDescription, "L…") || utf8.RuneCountInString(e.ErrorDescription) != 500 {
		t.Errorf("404 of a long id = %s %.80s", e.Error, e.ErrorDescription)
	}

	r := s.do(t, request{method: "GET", path: "/api/quotes", token: tok, header: map[string]string{"X-Request-Id": "trace-42"}})
	if r.header.Get("X-Request-Id") != "trace-42" {
		t.Errorf("request id not echoed: %q", r.header.Get("X-Request-Id"))
	}
	for _, path := range []string{"/healthz", "/readyz", "/openapi.json", "/docs/errors", "/.well-known/jwks.json"} {
		if r := s.do(t, request{method: "GET", path: path}); r.status != 200 || len(r.body) == 0 {
			t.Errorf("GET %s = %d", path, r.status)
		}
	}
	var ready struct {
		Status                          string
		NatsConnected                   bool
		ReadModelsCaughtUp              bool
		AppliedSequence, StreamSequence uint64
		Lag                             *uint64
	}
	s.do(t, request{method: "GET", path: "/readyz", token: s.demoToken(t, "demo-admin")}).json(t, &ready)
	if ready.Status != "ready" || !ready.NatsConnected || !ready.ReadModelsCaughtUp || ready.StreamSequence == 0 ||
		ready.Lag == nil || *ready.Lag != ready.StreamSequence-min(ready.AppliedSequence, ready.StreamSequence) {
		t.Errorf("readyz to an admin = %+v", ready)
	}
	// How many events the service holds is the operator's business: a
	// probe, or any other caller, learns only whether it is ready.
	for who, token := range map[string]string{"anyone": "", "a forwarder": tok, "an airline": s.demoToken(t, "demo-airline-lh"), "a bad token": "x.y.z"} {
		var seen map[string]any
		s.do(t, request{method: "GET", path: "/readyz", token: token}).json(t, &seen)
		if len(seen) != 1 || seen["status"] != "ready" {
			t.Errorf("readyz to %s = %v", who, seen)
		}
	}
	// A GET may wait for a sequence the client saw on a write.
	w := s.do(t, request{method: "POST", path: "/api/quotes", token: tok, body: rfq()})
	seq := w.header.Get("Cargo-Sequence")
	if r := s.do(t, request{method: "GET", path: "/api/quotes", token: tok, header: map[string]string{"Cargo-Sequence": seq}}); r.status != 200 {
		t.Errorf("GET with Cargo-Sequence %s = %d", seq, r.status)
	}
	// A sequence the stream has not reached is refused at once, and the
	// write it came with is not made.
	quotes := func() int {
		var list struct{ Pagination struct{ Total int } }
		s.do(t, request{method: "GET", path: "/api/quotes", token: tok}).json(t, &list)
		return list.Pagination.Total
	}
	before := quotes()
	r = s.do(t, request{method: "POST", path: "/api/quotes", token: tok, body: rfq(), header: map[string]string{"Cargo-Sequence": "999999999"}})
	if e := r.apiError(t); r.status != 400 || e.Error != "invalid_request" || !strings.Contains(e.ErrorDescription, "past the end of the stream") {
		t.Errorf("a Cargo-Sequence past the end = %d %s", r.status, r.body)
	}
	if after := quotes(); after != before {
		t.Errorf("the write of a refused request was made: %d quotes, then %d", before, after)
	}
	if r := s.do(t, request{method: "GET", path: "/api/quotes", token: tok, header: map[string]string{"Cargo-Sequence": "soon"}}); r.status != 400 {
		t.Errorf("GET with a bad Cargo-Sequence = %d", r.status)
	}
	// Sent twice, the header names no one sequence: refused, whichever
	// line comes first, rather than the first line waited for.
	for _, lines := range [][]string{{seq, "999999999"}, {"999999999", seq}, {seq, seq}} {
		hr, err := http.NewRequest("GET", s.base+"/api/quotes", nil)
		if err != nil {
			t.Fatal(err)
		}
		hr.Header.Set("Authorization", "Bearer "+tok)
		hr.Header["Cargo-Sequence"] = lines
		r := s.send(t, hr, nil)
		if e := r.apiError(t); r.status != 400 || e.Error != "invalid_request" ||
			e.ErrorDescription != "Cargo-Sequence must be sent once; this request has it 2 times" {
			t.Errorf("GET with Cargo-Sequence %q = %d %s, want 400 saying it is sent twice", lines, r.status, r.body)
		}
	}
}

func TestServedDocuments(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	r := s.do(t, request{method: "GET", path: "/openapi.json"})
	if doc, err := parseDoc(r.body); err != nil || len(doc.paths) == 0 {
		t.Fatalf("served document: %v", err)
	}
	r = s.do(t, request{method: "GET", path: "/docs/errors"})
	for _, code := range []string{"invalid_request", "validation_error", "invalid_grant", "invalid_token", "not_found", "payload_too_large"} {
		if !strings.Contains(string(r.body), `id="`+code+`"`) {
			t.Errorf("error docs lack %s", code)
		}
	}
}

func TestVersionSaysWhichBuildItIsAndStartsNothing(t *testing.T) {
	t.Parallel()
	out := &lockedbuf.Buffer{}
	// An address that cannot be listened on: a start would fail on it.
	if err := run(t.Context(), []string{"--version", "--addr", "256.0.0.1:0"}, nil, out, out); err != nil {
		t.Fatal(err)
	}
	if want := "cargod " + version.String() + " " + runtime.Version() + "\n"; out.String() != want {
		t.Errorf("--version wrote %q, want %q", out.String(), want)
	}
}

func TestHelpListsEverySetting(t *testing.T) {
	t.Parallel()
	out := &lockedbuf.Buffer{}
	if err := run(t.Context(), []string{"--help"}, nil, out, out); err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"CARGO_ADDR", "CARGO_DATA_DIR", "CARGO_NATS_URL", "CARGO_NATS_CREDS", "CARGO_NATS_LISTEN",
		"CARGO_DEMO", "CARGO_TOKEN_TTL", "CARGO_LOG_LEVEL", "CARGO_SIGNING_KEY_FILE", "CARGO_ADMIN_SECRET_FILE",
		"CARGO_NATS_LISTEN_NKEY", "CARGO_SECRETS_KEY_FILE", "CARGO_SECRETS_PREVIOUS_KEY_FILE"} {
		if !strings.Contains(out.String(), env) {
			t.Errorf("--help does not mention %s", env)
		}
	}
	if err := run(t.Context(), []string{"--token-ttl", "forever"}, nil, out, out); err == nil ||
		!strings.Contains(err.Error(), "CARGO_TOKEN_TTL") {
		t.Errorf("bad flag error = %v", err)
	}
}

func TestOddPathsGetTheErrorBody(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	tok := s.demoToken(t, "demo-airline-lh")
	for _, path := range []string{"/api/shipments/%2E%2E/events", "/api//quotes", "/api/quotes/../flights"} {
		r := s.do(t, request{method: "GET", path: path, token: tok})
		if r.status < 400 || r.status >= 500 || r.apiError(t).Error == "" {
			t.Errorf("GET %s = %d %s", path, r.status, r.body)
		}
	}
}

// A number sent as -0 (or written otherwise but read as -0) is taken for
// 0 in every field that takes 0: shown as 0 in the answer, and stored as
// 0, where JSON would write it back as -0, below nothing.
func TestANumberSentAsMinusZeroIsShownAndStoredAsZeroInEveryField(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	flightID := flightWithinTheHour(t, s)
	awb := bookedShipmentOn(t, s, fwd, flightID)
	negative := func(text string) json.RawMessage { return json.RawMessage(text) }
	flight := shortFlight("LH1400")
	flight["capacityKg"], flight["capacityM3"] = negative("-0"), negative("-0e2")
	tests := []struct {
		name, method, path string
		body               map[string]any
		read               string   // where the value is shown, when not in the answer itself
		fields             []string // the fields shown that must be 0
		event              string   // the type of the event stored
	}{
		{"a rate card's minimum charge and surcharge", "PUT", "/api/rates/FRA/LHR", map[string]any{"currency": "EUR", "minimumCharge": negative("-0"),
			"weightBreaks": map[string]any{"N": 2.5}, "surcharges": map[string]any{"DGR": negative("-0.0")}, "validFrom": "2026-01-01", "validTo": "2099-12-31"}, "",
			[]string{"minimumCharge", "surcharges.DGR"}, domain.RateCardSet{}.EventType()},
		{"a flight's capacity", "POST", "/api/flights", flight, "", []string{"capacityKg", "capacityM3"}, domain.FlightScheduled{}.EventType()},
		{"a waybill's volume", "POST", "/api/mawb", withFields(mawbBody(awb), map[string]any{"volume": negative("-0.00")}), "/api/shipments/" + awb, []string{"mawb.volume"}, domain.MAWBCreated{}.EventType()},
		{"a status event's weight", "POST", "/api/shipments/" + awb + "/events", map[string]any{"eventType": "RCS", "location": "FRA",
			"eventDate": time.Now().UTC().Add(-time.Hour).Format(time.RFC3339), "pieces": 0, "weight": negative("-0")}, "/api/shipments/" + awb, []string{"latestEvent.weight"}, domain.ShipmentStatusRecorded{}.EventType()},
		{"a manifest's total volume", "POST", "/api/flights/" + flightID + "/manifests", map[string]any{"flightId": flightID, "awbNumbers": []string{awb},
			"totalVolume": negative("-0")}, "", []string{"totalVolume"}, domain.ManifestSubmitted{}.EventType()},
	}
	token := map[string]string{"/api/mawb": fwd}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, ok := token[tt.path]
			if !ok {
				tok = lh
			}
			r := s.do(t, request{method: tt.method, path: tt.path, token: tok, body: tt.body})
			if r.status != http.StatusOK && r.status != http.StatusCreated {
				t.Fatalf("= %d %s", r.status, r.body)
			}
			if tt.read != "" {
				r = s.do(t, request{method: "GET", path: tt.read, token: tok})
			}
			var shown any
			r.json(t, &shown)
			for _, field := range tt.fields {
				if v, ok := valueAt(shown, field).(float64); !ok || v != 0 {
					t.Errorf("%s = %v, want 0", field, valueAt(shown, field))
				}
			}
			if zeros := negativeZeros(shown, ""); len(zeros) > 0 {
				t.Errorf("the answer shows -0 at %v: %s", zeros, r.body)
			}
		})
	}
	s.stop()

	ctx := context.Background()
	store, err := eventstore.Open(ctx, eventstore.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	last, err := store.LastSequence(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	if _, err := store.Replay(ctx, 1, last, func(records []domain.Record) error {
		for _, rec := range records {
			var data any
			if err := json.Unmarshal(rec.Data, &data); err != nil {
				return fmt.Errorf("%s: %w", rec.Type, err)
			}
			if zeros := negativeZeros(data, ""); len(zeros) > 0 {
				t.Errorf("the stored %s holds -0 at %v: %s", rec.Type, zeros, rec.Data)
			}
			stored[rec.Type] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		if !stored[tt.event] {
			t.Errorf("no %s was stored", tt.event)
		}
	}
}

// valueAt is the value at a dotted path of a decoded JSON object.
func valueAt(v any, path string) any {
	for name := range strings.SplitSeq(path, ".") {
		m, _ := v.(map[string]any)
		v = m[name]
	}
	return v
}

// negativeZeros are the paths of the numbers a decoded JSON value holds as
// -0.
func negativeZeros(v any, path string) []string {
	var out []string
	switch v := v.(type) {
	case float64:
		if v == 0 && math.Signbit(v) {
			out = append(out, path)
		}
	case map[string]any:
		for k, e := range v {
			out = append(out, negativeZeros(e, strings.TrimPrefix(path+"."+k, "."))...)
		}
	case []any:
		for i, e := range v {
			out = append(out, negativeZeros(e, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return out
}
