package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// rfq is a valid RFQ; tests change what they need.
func rfq() map[string]any {
	return map[string]any{
		"shipper":       map[string]any{"name": "ACME Machine Tools"},
		"consignee":     map[string]any{"name": "Globex Inc"},
		"routing":       map[string]any{"origin": "FRA", "destination": "JFK"},
		"pieces":        2,
		"grossWeightKg": 350.5,
		"commodity":     map[string]any{"code": "GEN", "description": "Machine parts"},
		"dimensionsCm":  []any{map[string]any{"l": 120, "w": 80, "h": 100, "pieces": 2}},
		"shc":           []any{"eap"},
		"notes":         "two crates",
	}
}

type quote struct {
	ID, Status, Origin, Destination, Commodity string
	Pieces                                     int
	Weight, Volume                             float64
	SHC                                        []string
	CreatedAt                                  time.Time
	PriceOptions                               []any
}

type quoteList struct {
	Quotes     []quote
	Pagination struct{ Page, Limit, Total, TotalPages int }
}

func createQuote(t *testing.T, s *testServer, token string, body map[string]any) quote {
	t.Helper()
	r := s.do(t, request{method: "POST", path: "/api/quotes", token: token, body: body})
	if r.status != http.StatusCreated {
		t.Fatalf("create quote: %d %s", r.status, r.body)
	}
	var q quote
	r.json(t, &q)
	return q
}

func TestCreateQuoteAndReadItBack(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	tok := s.demoToken(t, "demo-forwarder")
	r := s.do(t, request{method: "POST", path: "/api/quotes", token: tok, body: rfq()})
	if r.status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var q quote
	r.json(t, &q)
	if q.Status != "pending" || q.Origin != "FRA" || q.Destination != "JFK" || q.Pieces != 2 || q.Weight != 350.5 ||
		q.Volume != 1.92 || q.Commodity != "GEN" || strings.Join(q.SHC, ",") != "EAP" || len(q.PriceOptions) != 0 || q.CreatedAt.IsZero() {
		t.Errorf("quote = %+v", q)
	}
	if loc := r.header.Get("Location"); loc != "/api/quotes/"+q.ID {
		t.Errorf("Location = %q", loc)
	}
	if r.header.Get("Cargo-Sequence") == "" {
		t.Error("no Cargo-Sequence header on a write")
	}

	// Read-your-writes: both reads see it at once.
	var got quote
	s.do(t, request{method: "GET", path: "/api/quotes/" + q.ID, token: tok}).json(t, &got)
	if got.ID != q.ID || got.Volume != q.Volume {
		t.Errorf("get = %+v", got)
	}
	var list quoteList
	r = s.do(t, request{method: "GET", path: "/api/quotes?id=" + q.ID, token: tok})
	r.json(t, &list)
	if r.status != 200 || len(list.Quotes) != 1 || list.Quotes[0].ID != q.ID {
		t.Errorf("list by id = %d %s", r.status, r.body)
	}
	// The password grant works the same.
	ptok := s.passwordToken(t, "forwarder", "forwarder-password")
	if r := s.do(t, request{method: "GET", path: "/api/quotes/" + q.ID, token: ptok}); r.status != 200 {
		t.Errorf("as user forwarder: %d", r.status)
	}
}

func TestQuoteSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	q := createQuote(t, s, s.demoToken(t, "demo-forwarder"), rfq())
	s.stop()

	s = startServer(t, dir, nil)
	r := s.do(t, request{method: "GET", path: "/api/quotes/" + q.ID, token: s.demoToken(t, "demo-forwarder")})
	var got quote
	r.json(t, &got)
	if r.status != 200 || got.ID != q.ID || got.Weight != q.Weight || !got.CreatedAt.Equal(q.CreatedAt) {
		t.Fatalf("after restart: %d %s", r.status, r.body)
	}
	// Demo seeding on the second start appended nothing new.
	var orgs struct{ Organizations []any }
	s.do(t, request{method: "GET", path: "/api/admin/organizations", token: s.demoToken(t, "demo-admin")}).json(t, &orgs)
	if len(orgs.Organizations) != 4 {
		t.Errorf("%d organisations after a restart, want the 4 demo ones", len(orgs.Organizations))
	}
}

// A dimension line with a field misspelt ("length" for "l", "qty" for
// "pieces": fields the service does not know are passed over) is told the
// field it lacks is required, on an RFQ and on a booking; a value of 0
// keeps the range message.
func TestADimensionLeftOutIsRequiredThroughTheAPI(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, rfq()).ID)
	if len(q.PriceOptions) == 0 {
		t.Fatalf("quote %s has no price option to book", q.ID)
	}
	rfqWith := func(line map[string]any) map[string]any {
		m := rfq()
		m["dimensionsCm"] = []any{line}
		delete(m, "pieces") // the lines count them
		return m
	}
	bookingWith := func(line map[string]any) map[string]any {
		return map[string]any{"quoteId": q.ID, "flightId": q.PriceOptions[0].FlightID, "dimensionsCm": []any{line}}
	}
	type fieldError struct{ Field, Message, Code string }
	tests := []struct {
		name string
		path string
		body map[string]any
		want fieldError
	}{
		{"an RFQ's line with length for l", "/api/quotes", rfqWith(map[string]any{"length": 120, "w": 80, "h": 100, "pieces": 2}),
			fieldError{"dimensionsCm[0].l", "is required", "REQUIRED"}},
		{"an RFQ's line with qty for pieces", "/api/quotes", rfqWith(map[string]any{"l": 120, "w": 80, "h": 100, "qty": 2}),
			fieldError{"dimensionsCm[0].pieces", "is required", "REQUIRED"}},
		{"an RFQ's line with l of 0", "/api/quotes", rfqWith(map[string]any{"l": 0, "w": 80, "h": 100, "pieces": 2}),
			fieldError{"dimensionsCm[0].l", "must be more than 0 and at most 10000 cm", "INVALID_RANGE"}},
		{"a booking's line with length for l", "/api/bookings", bookingWith(map[string]any{"length": 120, "w": 80, "h": 100, "pieces": 2}),
			fieldError{"dimensionsCm[0].l", "is required", "REQUIRED"}},
		{"a booking's line with qty for pieces", "/api/bookings", bookingWith(map[string]any{"l": 120, "w": 80, "h": 100, "qty": 2}),
			fieldError{"dimensionsCm[0].pieces", "is required", "REQUIRED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "POST", path: tt.path, token: fwd, body: tt.body})
			e := r.apiError(t)
			if r.status != http.StatusBadRequest || e.Error != "validation_error" || len(e.ValidationErrors) != 1 || fieldError(e.ValidationErrors[0]) != tt.want {
				t.Errorf("= %d %s, want 400 validation_error with only %+v", r.status, r.body, tt.want)
			}
		})
	}
}

func TestQuoteValidation(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	tok := s.demoToken(t, "demo-forwarder")
	with := func(change func(m map[string]any)) map[string]any {
		m := rfq()
		change(m)
		return m
	}
	tests := []struct {
		name   string
		body   any
		status int
		error  string
		fields map[string]string // field → code
	}{
		{"missing grossWeightKg", with(func(m map[string]any) { delete(m, "grossWeightKg") }), 400, "invalid_request", nil},
		{"not JSON", "{", 400, "invalid_request", nil},
		{"empty body", "", 400, "invalid_request", nil},
		{"array body", "[]", 400, "invalid_request", nil},
		{"trailing data", `{"grossWeightKg":1}{}`, 400, "invalid_request", nil},
		{"weight as text", with(func(m map[string]any) { m["grossWeightKg"] = "heavy" }), 400, "validation_error",
			map[string]string{"grossWeightKg": "INVALID_TYPE"}},
		{"bad airports", with(func(m map[string]any) { m["routing"] = map[string]any{"origin": "FR", "destination": "12A"} }), 400, "validation_error",
			map[string]string{"routing.origin": "INVALID_FORMAT", "routing.destination": "INVALID_FORMAT"}},
		{"no routing", with(func(m map[string]any) { delete(m, "routing") }), 400, "invalid_request", nil},
		{"a routing without its origin", with(func(m map[string]any) { m["routing"] = map[string]any{"destination": "JFK"} }), 400, "invalid_request", nil},
		{"same airports", with(func(m map[string]any) { m["routing"] = map[string]any{"origin": "FRA", "destination": "fra"} }), 400, "validation_error",
			map[string]string{"routing.destination": "INVALID_VALUE"}},
		{"zero weight", with(func(m map[string]any) { m["grossWeightKg"] = 0 }), 400, "validation_error",
			map[string]string{"grossWeightKg": "INVALID_RANGE"}},
		{"negative weight", with(func(m map[string]any) { m["grossWeightKg"] = -5 }), 400, "validation_error",
			map[string]string{"grossWeightKg": "INVALID_RANGE"}},
		{"zero pieces", with(func(m map[string]any) { m["pieces"] = 0; delete(m, "dimensionsCm") }), 400, "validation_error",
			map[string]string{"pieces": "INVALID_RANGE"}},
		{"fractional pieces", with(func(m map[string]any) { m["pieces"] = 1.5 }), 400, "validation_error",
			map[string]string{"pieces": "INVALID_TYPE"}},
		{"no pieces at all", with(func(m map[string]any) { delete(m, "pieces"); delete(m, "dimensionsCm") }), 400, "invalid_request", nil},
		{"pieces disagree with dimensions", with(func(m map[string]any) { m["pieces"] = 3 }), 400, "validation_error",
			map[string]string{"pieces": "MISMATCH"}},
		{"bad dimension line", with(func(m map[string]any) {
			m["dimensionsCm"] = []any{map[string]any{"l": 0, "w": 80, "h": -1, "pieces": 0}}
			delete(m, "pieces")
		}), 400, "validation_error",
			map[string]string{"dimensionsCm[0].l": "INVALID_RANGE", "dimensionsCm[0].h": "INVALID_RANGE", "dimensionsCm[0].pieces": "INVALID_RANGE"}},
		{"bad date", with(func(m map[string]any) { m["deliveryToAirlineDate"] = "2026-02-30" }), 400, "validation_error",
			map[string]string{"deliveryToAirlineDate": "INVALID_DATE"}},
		{"date in the past", with(func(m map[string]any) { m["deliveryToAirlineDate"] = "2020-01-01" }), 400, "validation_error",
			map[string]string{"deliveryToAirlineDate": "INVALID_DATE"}},
		{"bad codes", with(func(m map[string]any) { m["shc"] = []any{"DANGER"}; m["airlineFilter"] = []any{"LUFT"} }), 400, "validation_error",
			map[string]string{"shc[0]": "INVALID_FORMAT", "airlineFilter[0]": "INVALID_FORMAT"}},
		{"too many codes", with(func(m map[string]any) { m["shc"] = strings.Split(strings.Repeat("PER,", 21), ",")[:21] }), 400, "validation_error",
			map[string]string{"shc": "TOO_MANY"}},
		{"long notes", with(func(m map[string]any) { m["notes"] = strings.Repeat("x", 2001) }), 400, "validation_error",
			map[string]string{"notes": "TOO_LONG"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "POST", path: "/api/quotes", token: tok, body: tt.body})
			e := r.apiError(t)
			if r.status != tt.status || e.Error != tt.error || e.ErrorDescription == "" {
				t.Fatalf("= %d %s, want %d %s", r.status, r.body, tt.status, tt.error)
			}
			got := map[string]string{}
			for _, f := range e.ValidationErrors {
				got[f.Field] = f.Code
				if f.Message == "" {
					t.Errorf("field %s has no message", f.Field)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.fields) && !(len(got) == 0 && tt.fields == nil) {
				t.Errorf("validation errors = %v, want %v", got, tt.fields)
			}
		})
	}
	// Nothing was stored by any of them.
	if r := s.do(t, request{method: "GET", path: "/api/quotes", token: tok}); r.status != http.StatusNotFound {
		t.Errorf("after only bad requests, list = %d %s", r.status, r.body)
	}
	// Many serialisers write whole numbers as 2.0: taken as 2.
	body := `{"routing":{"origin":"FRA","destination":"JFK"},"pieces":2.0,"grossWeightKg":350.5,` +
		`"dimensionsCm":[{"l":120,"w":80,"h":100,"pieces":2.0}]}`
	var q quote
	s.mustCreate(t, tok, "/api/quotes", body).json(t, &q)
	if q.Pieces != 2 {
		t.Errorf("pieces 2.0 made a quote of %d pieces", q.Pieces)
	}
}

func TestQuoteVisibility(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	open := createQuote(t, s, fwd, rfq())
	forEK := rfq()
	forEK["airlineFilter"] = []any{"ek"}
	onlyEK := createQuote(t, s, fwd, forEK)

	// A second forwarder, set up the way an operator would.
	admin := s.demoToken(t, "demo-admin")
	s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "other-fwd", "name": "Other Forwarding", "role": "forwarder"})
	s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "other-fwd", "clientId": "other", "clientSecret": "other-secret-long"})
	other := s.token(t, "other", "other-secret-long")

	tests := []struct {
		name  string
		token string
		sees  map[string]bool
	}{
		{"owner", fwd, map[string]bool{open.ID: true, onlyEK.ID: true}},
		{"another forwarder", other, map[string]bool{}},
		{"airline not in the filter", s.demoToken(t, "demo-airline-lh"), map[string]bool{open.ID: true}},
		{"airline in the filter", s.demoToken(t, "demo-airline-ek"), map[string]bool{open.ID: true, onlyEK.ID: true}},
		{"admin", admin, map[string]bool{open.ID: true, onlyEK.ID: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, id := range []string{open.ID, onlyEK.ID} {
				want := http.StatusNotFound
				if tt.sees[id] {
					want = http.StatusOK
				}
				for _, path := range []string{"/api/quotes/" + id, "/api/quotes?id=" + id} {
					r := s.do(t, request{method: "GET", path: path, token: tt.token})
					if r.status != want {
						t.Errorf("GET %s = %d, want %d", path, r.status, want)
					}
					if r.status == http.StatusNotFound && strings.Contains(string(r.body), "forbidden") {
						t.Errorf("a hidden quote's 404 hints at it: %s", r.body)
					}
				}
			}
			var list quoteList
			r := s.do(t, request{method: "GET", path: "/api/quotes", token: tt.token})
			if len(tt.sees) == 0 {
				if r.status != http.StatusNotFound || r.apiError(t).Error != "not_found" {
					t.Errorf("list = %d %s, want not_found", r.status, r.body)
				}
				return
			}
			r.json(t, &list)
			if list.Pagination.Total != len(tt.sees) {
				t.Errorf("list total = %d, want %d", list.Pagination.Total, len(tt.sees))
			}
		})
	}
	// Only forwarders file RFQs.
	r := s.do(t, request{method: "POST", path: "/api/quotes", token: s.demoToken(t, "demo-airline-lh"), body: rfq()})
	if r.status != http.StatusForbidden || r.apiError(t).Error != "forbidden" {
		t.Errorf("airline RFQ = %d %s", r.status, r.body)
	}
}

func TestQuoteListFilters(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	tok := s.demoToken(t, "demo-forwarder")
	for _, route := range [][2]string{{"FRA", "JFK"}, {"FRA", "ORD"}, {"DXB", "JFK"}} {
		m := rfq()
		m["routing"] = map[string]any{"origin": route[0], "destination": route[1]}
		// All three routes have demo flights: each quote is priced.
		s.quoteOutcome(t, tok, createQuote(t, s, tok, m).ID)
	}
	tests := []struct {
		query  string
		status int
		total  int
		count  int
	}{
		{"", 200, 3, 3},
		{"?origin=FRA", 200, 2, 2},
		{"?origin=fra&destination=ORD", 200, 1, 1},
		{"?origin=%20FRA%20&destination=%20jfk", 200, 1, 1},
		{"?destination=JFK&status=priced", 200, 2, 2},
		{"?status=pending", 404, 0, 0},
		{"?origin=LHR", 404, 0, 0},
		{"?limit=2", 200, 3, 2},
		{"?limit=2&page=2", 200, 3, 1},
		{"?limit=2&page=3", 200, 3, 0},
		{"?limit=0", 400, 0, 0},
		{"?limit=101", 400, 0, 0},
		{"?page=x", 400, 0, 0},
		{"?status=lost", 400, 0, 0},
		{"?origin=FRANKFURT", 400, 0, 0},
		{"?id=no-such-quote", 404, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := s.do(t, request{method: "GET", path: "/api/quotes" + tt.query, token: tok})
			if r.status != tt.status {
				t.Fatalf("= %d %s, want %d", r.status, r.body, tt.status)
			}
			if r.status != 200 {
				return
			}
			var l quoteList
			r.json(t, &l)
			if l.Pagination.Total != tt.total || len(l.Quotes) != tt.count {
				t.Errorf("total %d, %d quotes; want %d, %d", l.Pagination.Total, len(l.Quotes), tt.total, tt.count)
			}
			for i := 1; i < len(l.Quotes); i++ {
				if l.Quotes[i].CreatedAt.After(l.Quotes[i-1].CreatedAt) {
					t.Error("not newest first")
				}
			}
		})
	}
}

func TestAQuoteAskedForByIDThatTheFiltersLeaveOutIsSaidToBeLeftOutRatherThanMissing(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	priced := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, rfq()).ID)
	forEK := rfq()
	forEK["airlineFilter"] = []any{"EK"}
	onlyEK := createQuote(t, s, fwd, forEK)
	tests := []struct {
		name, token, query, want string
	}{
		{"its own quote, of another status", fwd, "?id=" + priced.ID + "&status=rejected",
			"quote " + priced.ID + " does not match the filters (it is priced, from FRA to JFK)"},
		{"its own quote, to another airport", fwd, "?id=" + priced.ID + "&destination=ORD",
			"quote " + priced.ID + " does not match the filters (it is priced, from FRA to JFK)"},
		{"a quote it may not see", s.demoToken(t, "demo-airline-lh"), "?id=" + onlyEK.ID + "&status=rejected", "no quote " + onlyEK.ID},
		{"no such quote", fwd, "?id=no-such-quote&status=rejected", "no quote no-such-quote"},
	}
	for _, tt := range tests {
		r := s.do(t, request{method: "GET", path: "/api/quotes" + tt.query, token: tt.token})
		if e := r.apiError(t); r.status != http.StatusNotFound || e.ErrorDescription != tt.want {
			t.Errorf("%s: %d %q, want 404 %q", tt.name, r.status, e.ErrorDescription, tt.want)
		}
	}
}

// A forwarder reads its quote the spec's way, GET /api/quotes?id=, and
// waits for it to be priced with a long poll: the ETag of its RFQ's 201
// and Prefer: wait answer the quote priced, under a new ETag, with which
// the next conditional read is 304.
func TestAForwarderWaitsForItsQuoteToBePricedWithALongPollOnTheSpecsQuery(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	created := s.mustCreate(t, fwd, "/api/quotes", rfq())
	var q struct{ ID, Status string }
	created.json(t, &q)
	path := "/api/quotes?id=" + q.ID
	asked := created.header.Get("ETag")
	if asked == "" {
		t.Fatal("the RFQ's 201 has no ETag")
	}
	r := s.do(t, request{method: "GET", path: path, token: fwd, header: map[string]string{"If-None-Match": asked, "Prefer": "wait=30"}})
	var l struct{ Quotes []struct{ ID, Status string } }
	if r.status != http.StatusOK {
		t.Fatalf("GET %s with the 201's ETag %s and a wait = %d %s, want 200 once priced", path, asked, r.status, r.body)
	}
	if r.json(t, &l); len(l.Quotes) != 1 || l.Quotes[0].ID != q.ID || l.Quotes[0].Status != "priced" {
		t.Fatalf("GET %s after the wait = %s, want the quote priced", path, r.body)
	}
	tag := r.header.Get("ETag")
	if tag == "" || tag == asked {
		t.Fatalf("the priced quote's ETag is %q, want a new one (the 201's was %s)", tag, asked)
	}
	if again := s.do(t, request{method: "GET", path: path, token: fwd, header: map[string]string{"If-None-Match": tag}}); again.status != http.StatusNotModified ||
		again.header.Get("ETag") != tag {
		t.Errorf("GET %s with the priced quote's ETag = %d, ETag %q, want 304 with %s", path, again.status, again.header.Get("ETag"), tag)
	}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	tok := s.demoToken(t, "demo-forwarder")
	send := func(key string, body map[string]any) response {
		return s.do(t, request{method: "POST", path: "/api/quotes", token: tok, body: body, header: map[string]string{"Idempotency-Key": key}})
	}
	first := send("rfq-1", rfq())
	again := send("rfq-1", rfq())
	if first.status != 201 || again.status != 201 || string(first.body) != string(again.body) {
		t.Fatalf("repeat: %d %s / %d %s", first.status, first.body, again.status, again.body)
	}
	if again.header.Get("Idempotent-Replayed") != "true" || again.header.Get("Location") != first.header.Get("Location") {
		t.Errorf("replay headers = %v", again.header)
	}
	changed := rfq()
	changed["pieces"] = 1
	changed["dimensionsCm"] = []any{}
	if r := send("rfq-1", changed); r.status != http.StatusUnprocessableEntity || r.apiError(t).Error != "idempotency_key_reused" {
		t.Errorf("same key, other body = %d %s", r.status, r.body)
	}
	if r := send(strings.Repeat("k", 256), rfq()); r.status != 400 {
		t.Errorf("overlong key = %d", r.status)
	}
	// A rejected request frees its key for the corrected one.
	bad := rfq()
	delete(bad, "grossWeightKg")
	if r := send("rfq-3", bad); r.status != 400 {
		t.Fatalf("bad RFQ = %d", r.status)
	}
	if r := send("rfq-3", rfq()); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("corrected RFQ under the same key = %d %v", r.status, r.header)
	}
	// Two requests racing with one key and different bodies: one wins,
	// the other is told, never handed the winner's quote.
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i, dest := range []string{"ORD", "DXB"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := rfq()
			m["routing"] = map[string]any{"origin": "FRA", "destination": dest}
			statuses[i] = send("race", m).status
		}()
	}
	wg.Wait()
	if (statuses[0] == 201) == (statuses[1] == 201) {
		t.Errorf("racing requests with one key = %v, want one 201", statuses)
	}
	for _, st := range statuses {
		if st != 201 && st != 409 && st != 422 {
			t.Errorf("the loser got %d", st)
		}
	}
	send("rfq-2", rfq())
	var l quoteList
	s.do(t, request{method: "GET", path: "/api/quotes", token: tok}).json(t, &l)
	if l.Pagination.Total != 4 {
		t.Errorf("%d quotes stored, want 4", l.Pagination.Total)
	}
}

// TestAnIdempotencyKeySentTwiceIsRefusedAndStoresNothing: two
// Idempotency-Key lines, different or the same, are refused before
// anything is done, rather than the first one taken.
func TestAnIdempotencyKeySentTwiceIsRefusedAndStoresNothing(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	tok := s.demoToken(t, "demo-forwarder")
	body, err := json.Marshal(rfq())
	if err != nil {
		t.Fatal(err)
	}
	send := func(keys ...string) response {
		hr, err := http.NewRequest("POST", s.base+"/api/quotes", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		hr.Header.Set("Authorization", "Bearer "+tok)
		hr.Header.Set("Content-Type", "application/json")
		hr.Header["Idempotency-Key"] = keys
		return s.send(t, hr, body)
	}
	for _, keys := range [][]string{{"rfq-1", "rfq-2"}, {"rfq-1", "rfq-1"}, {"", "rfq-1"}} {
		if r := send(keys...); r.status != http.StatusBadRequest || r.apiError(t).Error != "invalid_request" ||
			!strings.Contains(r.apiError(t).ErrorDescription, "Idempotency-Key must be sent once") {
			t.Errorf("Idempotency-Key %q = %d %s, want 400", keys, r.status, r.body)
		}
	}
	var l quoteList
	s.do(t, request{method: "GET", path: "/api/quotes", token: tok}).json(t, &l)
	if l.Pagination.Total != 0 {
		t.Errorf("%d quotes stored by requests refused, want none", l.Pagination.Total)
	}
	// The key was not taken: its first use files the RFQ.
	if r := send("rfq-1"); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("rfq-1 alone = %d %v", r.status, r.header)
	}
}

// A priced quote says when it was priced, and each option until when it
// may be booked; a quote not priced yet says neither.
func TestAPricedQuoteSaysWhenItWasPricedAndUntilWhenEachOptionHolds(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	raceFlight(t, s)
	before := time.Now().Truncate(time.Second)
	var created map[string]any
	body := rfq()
	body["routing"] = map[string]any{"origin": "FRA", "destination": "MIA"}
	s.mustCreate(t, fwd, "/api/quotes", body).json(t, &created)
	if _, ok := created["pricedAt"]; ok || created["status"] != "pending" {
		t.Errorf("the pending quote of the 201 = %v, want no pricedAt", created)
	}
	id := created["id"].(string)
	if q := s.quoteOutcome(t, fwd, id); q.Status != "priced" {
		t.Fatalf("quote %s = %+v", id, q)
	}
	var q struct {
		PricedAt     time.Time
		PriceOptions []struct {
			ValidityHours int
			ValidUntil    time.Time
		}
	}
	s.do(t, request{method: "GET", path: "/api/quotes/" + id, token: fwd}).json(t, &q)
	if q.PricedAt.Before(before) || q.PricedAt.After(time.Now()) || len(q.PriceOptions) == 0 {
		t.Fatalf("quote = %+v, want it priced after %s, with options", q, before)
	}
	for i, o := range q.PriceOptions {
		if want := q.PricedAt.Add(time.Duration(o.ValidityHours) * time.Hour); o.ValidityHours != 48 || !o.ValidUntil.Equal(want) {
			t.Errorf("option %d is valid %d hours until %s, want 48 hours, until %s", i, o.ValidityHours, o.ValidUntil, want)
		}
	}
}
