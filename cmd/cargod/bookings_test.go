package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
)

type priceOption struct {
	FlightID, FlightNumber, DepartureDate, Currency string
	PricePerKg, TotalAmount, ChargeableWeightKg     float64
	ValidityHours, VolumeDivisor                    int
	FlightClosed                                    bool
}

type pricedQuote struct {
	ID, Status         string
	PriceOptions       []priceOption
	RejectionReason    *string
	ChargeableWeightKg *float64
}

type booking struct {
	ID, QuoteID, Status, FlightID string
	AWBNumber                     *string
	RejectionReason               *string
	CancellationReason            *string
	CreatedAt                     time.Time
}

// eventually polls get until done says yes, for at most 15 seconds.
func eventually[T any](t *testing.T, what string, get func() T, done func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		v := get()
		if done(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %+v after 15s", what, v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *testServer) quoteOutcome(t *testing.T, token, id string) pricedQuote {
	return eventually(t, "quote "+id, func() pricedQuote {
		var q pricedQuote
		s.do(t, request{method: "GET", path: "/api/quotes/" + id, token: token}).json(t, &q)
		return q
	}, func(q pricedQuote) bool { return q.Status != "pending" })
}

func (s *testServer) bookingOutcome(t *testing.T, token, id string) booking {
	return eventually(t, "booking "+id, func() booking {
		var b booking
		s.do(t, request{method: "GET", path: "/api/bookings/" + id, token: token}).json(t, &b)
		return b
	}, func(b booking) bool { return b.Status != "pending" })
}

type capacity struct {
	FlightID                                       string
	ProjectedWeight, ActualWeight, AvailableWeight float64
	ProjectedVolume, ActualVolume, AvailableVolume float64
}

func (s *testServer) capacityOf(t *testing.T, token, flightNumber, date string) capacity {
	t.Helper()
	var c struct{ Capacity []capacity }
	s.do(t, request{method: "GET", path: "/api/capacity?flightNumber=" + flightNumber + "&date=" + date, token: token}).json(t, &c)
	if len(c.Capacity) != 1 {
		t.Fatalf("capacity of %s on %s: %+v", flightNumber, date, c)
	}
	return c.Capacity[0]
}

func TestRFQToConfirmedBooking(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	body := rfq()
	body["shc"] = []any{"DGR"}
	body["deliveryToAirlineDate"] = time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	created := createQuote(t, s, fwd, body)
	if created.Status != "pending" || len(created.PriceOptions) != 0 {
		t.Fatalf("a new quote is %s with %d options", created.Status, len(created.PriceOptions))
	}
	q := s.quoteOutcome(t, fwd, created.ID)
	if q.Status != "priced" || len(q.PriceOptions) == 0 || q.ChargeableWeightKg == nil || *q.ChargeableWeightKg != 350.5 {
		t.Fatalf("priced quote = %+v", q)
	}
	opt := q.PriceOptions[0]
	// 350.5 kg at the 300 kg break (2.90 EUR/kg) beats 500 kg at 2.60,
	// plus 0.60 EUR/kg for DGR: 1016.45 + 210.30.
	if opt.FlightNumber != "LH8400" || opt.TotalAmount != 1226.75 || opt.PricePerKg != 3.5 || opt.Currency != "EUR" ||
		opt.ValidityHours != 48 || opt.DepartureDate < body["deliveryToAirlineDate"].(string) {
		t.Errorf("cheapest option = %+v", opt)
	}
	// Airlines see the quote, but only their own prices.
	var seenByEK pricedQuote
	s.do(t, request{method: "GET", path: "/api/quotes/" + q.ID, token: s.demoToken(t, "demo-airline-ek")}).json(t, &seenByEK)
	if len(seenByEK.PriceOptions) != 0 {
		t.Errorf("EK sees LH's prices: %+v", seenByEK.PriceOptions)
	}
	lh := s.demoToken(t, "demo-airline-lh")
	before := s.capacityOf(t, lh, opt.FlightNumber, opt.DepartureDate)
	// The forwarder holds LH stock: 020-81140743 (serial 8114074) and the
	// two numbers after it.
	stock := s.approvedStock(t, fwd, "020", 3, "020-81140743", "020-81140765")

	r := s.mustCreate(t, fwd, "/api/bookings", map[string]any{
		"quoteId": q.ID, "flightId": opt.FlightID, "awb": map[string]any{"prefix": "020", "number": "81140743"},
		"shipper":            map[string]any{"name": "ACME Machine Tools", "address": "Hafenstr. 1, Frankfurt", "contact": "+49 69 1234"},
		"consignee":          map[string]any{"name": "Globex Inc", "address": "1 Main St, New York", "contact": "ops@globex.example"},
		"chargeableWeightKg": 350.5,
		"routing":            []any{map[string]any{"from": "FRA", "to": "JFK", "carrier": "LH", "flightNumber": opt.FlightNumber, "date": opt.DepartureDate}},
	})
	var b booking
	r.json(t, &b)
	if b.Status != "pending" || b.QuoteID != q.ID || b.FlightID != opt.FlightID || b.CreatedAt.IsZero() || r.header.Get("Location") != "/api/bookings/"+b.ID {
		t.Errorf("new booking = %+v", b)
	}
	b = s.bookingOutcome(t, fwd, b.ID)
	if b.Status != "confirmed" || b.AWBNumber == nil || *b.AWBNumber != "020-81140743" || b.RejectionReason != nil {
		t.Fatalf("booking = %+v", b)
	}
	var accepted pricedQuote
	s.do(t, request{method: "GET", path: "/api/quotes/" + q.ID, token: fwd}).json(t, &accepted)
	if accepted.Status != "accepted" {
		t.Errorf("quote after booking = %s", accepted.Status)
	}
	after := s.capacityOf(t, lh, opt.FlightNumber, opt.DepartureDate)
	if after.ProjectedWeight != before.ProjectedWeight+350.5 || after.AvailableWeight != before.AvailableWeight-350.5 ||
		after.ProjectedVolume != before.ProjectedVolume+1.92 {
		t.Errorf("capacity %+v → %+v", before, after)
	}
	// The load is the airline's business: the forwarder and another
	// airline see only what is left, in steps that hide each booking.
	for name, token := range map[string]string{"the forwarder": fwd, "EK": s.demoToken(t, "demo-airline-ek")} {
		var seen struct{ Capacity []map[string]any }
		s.do(t, request{method: "GET", path: "/api/capacity?flightNumber=" + opt.FlightNumber + "&date=" + opt.DepartureDate, token: token}).json(t, &seen)
		if len(seen.Capacity) != 1 {
			t.Fatalf("%s sees the capacity of %d flights", name, len(seen.Capacity))
		}
		c := seen.Capacity[0]
		wantKg, wantM3 := math.Floor(after.AvailableWeight/100)*100, math.Floor(after.AvailableVolume)
		if _, load := c["projectedWeight"]; load || c["availableWeight"] != wantKg || c["availableVolume"] != wantM3 {
			t.Errorf("%s sees %v; want only %v kg and %v m³ available", name, c, wantKg, wantM3)
		}
	}
	// The airline sees the booking on its flight; the other airline does not.
	if r := s.do(t, request{method: "GET", path: "/api/bookings/" + b.ID, token: s.demoToken(t, "demo-airline-lh")}); r.status != 200 {
		t.Errorf("carrier reads booking: %d", r.status)
	}
	if r := s.do(t, request{method: "GET", path: "/api/bookings/" + b.ID, token: s.demoToken(t, "demo-airline-ek")}); r.status != 404 {
		t.Errorf("other airline reads booking: %d", r.status)
	}
	var list struct{ Bookings []booking }
	s.do(t, request{method: "GET", path: "/api/bookings?status=confirmed", token: fwd}).json(t, &list)
	if len(list.Bookings) != 1 || list.Bookings[0].ID != b.ID {
		t.Errorf("confirmed bookings = %+v", list.Bookings)
	}
	// The flight filter takes the flight id as a booking's body does: in
	// either case, trimmed, its number with a space.
	number, date, _ := strings.Cut(opt.FlightID, "-")
	for _, id := range []string{opt.FlightID, strings.ToLower(opt.FlightID), " " + opt.FlightID + " ", number[:2] + " " + number[2:] + "-" + date} {
		r := s.do(t, request{method: "GET", path: "/api/bookings?flightId=" + strings.ReplaceAll(id, " ", "%20"), token: lh})
		var l struct{ Bookings []booking }
		if r.json(t, &l); r.status != http.StatusOK || len(l.Bookings) != 1 || l.Bookings[0].ID != b.ID {
			t.Errorf("bookings of flight %q = %d %s", id, r.status, r.body)
		}
	}
	// Cancelling gives the capacity back.
	var cancelled booking
	s.do(t, request{method: "POST", path: "/api/bookings/" + b.ID + "/cancel", token: fwd}).json(t, &cancelled)
	if cancelled.Status != "cancelled" || cancelled.CancellationReason == nil || *cancelled.CancellationReason != "forwarder_cancelled" {
		t.Fatalf("cancel = %+v", cancelled)
	}
	eventually(t, "capacity back", func() capacity { return s.capacityOf(t, lh, opt.FlightNumber, opt.DepartureDate) },
		func(c capacity) bool { return c.ProjectedWeight == before.ProjectedWeight })
	// The AWB number stays the shipment's, held for a booking that
	// names it (its labels and filings carry it), and only for that
	// one; a booking without a number gets the next free one of the
	// stock; one outside the stock is refused. The ledger counts it held
	// until it is booked again.
	type ledgerCounts struct{ Allocated, Used, Held, Available int }
	ledgerOf := func() []ledgerCounts {
		var ledger struct{ Stock []ledgerCounts }
		s.do(t, request{method: "GET", path: "/api/awb-stock", token: fwd}).json(t, &ledger)
		return ledger.Stock
	}
	eventually(t, "the cancelled booking's number held", ledgerOf, func(l []ledgerCounts) bool {
		return len(l) == 1 && l[0] == ledgerCounts{Allocated: 3, Used: 1, Held: 1, Available: 2}
	})
	tests := []struct {
		awb    map[string]any
		status string
		detail string
	}{
		{map[string]any{"prefix": "020", "number": "81140743"}, "confirmed", "020-81140743"},
		{map[string]any{"prefix": "020", "number": "81140743"}, "rejected", "awb_in_use"},
		{nil, "confirmed", "020-81140754"},
		{map[string]any{"prefix": "020", "number": "12345675"}, "rejected", "awb_not_in_stock"},
		{map[string]any{"prefix": "176", "number": "12345675"}, "rejected", "awb_wrong_airline"},
	}
	for _, tt := range tests {
		b := s.decidedBooking(t, fwd, tt.awb)
		detail := ""
		if b.RejectionReason != nil {
			detail = *b.RejectionReason
		} else if b.AWBNumber != nil {
			detail = *b.AWBNumber
		}
		if b.Status != tt.status || detail != tt.detail {
			t.Errorf("booking with AWB %v = %s %s, want %s %s", tt.awb, b.Status, detail, tt.status, tt.detail)
		}
	}
	if l := ledgerOf(); len(l) != 1 || l[0] != (ledgerCounts{Allocated: 3, Used: 2, Held: 0, Available: 1}) {
		t.Errorf("ledger after bookings = %+v (request %s)", l, stock)
	}
}

// decidedBooking books the first price option of a new RFQ of rfq() with
// the AWB number awb (none when nil), and returns the booking once the
// airline's reactor has decided it.
func (s *testServer) decidedBooking(t *testing.T, fwd string, awb map[string]any) booking {
	t.Helper()
	q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, rfq()).ID)
	body := map[string]any{"quoteId": q.ID, "flightId": q.PriceOptions[0].FlightID}
	if awb != nil {
		body["awb"] = awb
	}
	var b booking
	s.mustCreate(t, fwd, "/api/bookings", body).json(t, &b)
	return s.bookingOutcome(t, fwd, b.ID)
}

// TestAGetThatPrefersToWaitAnswersWithTheConfirmation files a booking
// and asks for it with the ETag of its 201 and Prefer: wait: the answer
// is the booking once the reactor has decided it, never the pending one
// the client holds; asked again with the decided version, it answers 304
// once the wait is over. A wait that is no number of seconds is ignored.
func TestAGetThatPrefersToWaitAnswersWithTheConfirmation(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	flight := raceFlight(t, s)
	quote := pricedToMIA(t, s, fwd)
	created := s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": quote, "flightId": flight["id"]})
	var b booking
	created.json(t, &b)
	path := "/api/bookings/" + b.ID
	get := func(etag, prefer string) response {
		return s.do(t, request{method: "GET", path: path, token: fwd, header: map[string]string{"If-None-Match": etag, "Prefer": prefer}})
	}

	decided := get(created.header.Get("ETag"), "wait=30")
	var got booking
	// (Preference-Applied only if the reactor had not decided by the time
	// the GET came: it may have.)
	if decided.status != http.StatusOK {
		t.Fatalf("the wait for a change answered %d: %s", decided.status, decided.body)
	}
	if decided.json(t, &got); got.Status != "confirmed" || decided.header.Get("ETag") == created.header.Get("ETag") {
		t.Errorf("the wait for a change answered %+v, ETag %s", got, decided.header.Get("ETag"))
	}
	if r := get(decided.header.Get("ETag"), "respond-async, wait=1"); r.status != http.StatusNotModified || r.header.Get("Preference-Applied") != "wait=1" {
		t.Errorf("a wait on a booking that does not change answered %d, Preference-Applied %q", r.status, r.header.Get("Preference-Applied"))
	}
	// A wait that cannot be honoured is ignored (RFC 7240): the 304 at once.
	if r := get(decided.header.Get("ETag"), "wait=soon"); r.status != http.StatusNotModified || r.header.Get("Preference-Applied") != "" {
		t.Errorf("Prefer: wait=soon answered %d, Preference-Applied %q", r.status, r.header.Get("Preference-Applied"))
	}
}

// A flight's ETag tells those who may not see its load (other airlines,
// forwarders) only of changes to the flight they see: were it the
// version of its last event, it would move with every booking, manifest
// and offload, and a competitor polling it would count the bookings the
// capacity view hides. Its airline sees every version, to send back as
// If-Match.
func TestAFlightsETagMovesWithItsLoadOnlyForThoseWhoSeeTheLoad(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh, ek := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh"), s.demoToken(t, "demo-airline-ek")
	flight := raceFlight(t, s)
	path := "/api/flights/" + flight["id"].(string)
	before := map[string]versioned{"lh": s.read(t, lh, path), "ek": s.read(t, ek, path), "fwd": s.read(t, fwd, path)}

	confirmedOn(t, s, fwd, flight)
	booked := s.read(t, lh, path)
	if booked.etag == before["lh"].etag {
		t.Errorf("the airline's ETag of its flight stayed %s after a booking reserved capacity on it", booked.etag)
	}
	for _, who := range []struct{ name, token string }{{"ek", ek}, {"fwd", fwd}} {
		r := s.do(t, request{method: "GET", path: path, token: who.token, header: map[string]string{"If-None-Match": before[who.name].etag}})
		if r.status != http.StatusNotModified || r.header.Get("ETag") != before[who.name].etag {
			t.Errorf("%s: after a booking the flight answered %d with ETag %s, want 304 with %s: the ETag gives the booking away",
				who.name, r.status, r.header.Get("ETag"), before[who.name].etag)
		}
	}
	// What they see changes: so does their ETag, and the airline's
	// stands as If-Match.
	delayed := s.do(t, request{method: "PATCH", path: path, token: lh, body: map[string]any{"status": "delayed"},
		header: map[string]string{"If-Match": booked.etag}})
	if delayed.status != http.StatusOK {
		t.Fatalf("PATCH with the airline's ETag = %d %s", delayed.status, delayed.body)
	}
	for _, who := range []struct{ name, token string }{{"ek", ek}, {"fwd", fwd}} {
		if now := s.read(t, who.token, path); now.etag == before[who.name].etag {
			t.Errorf("%s: the flight's ETag stayed %s after it was delayed", who.name, now.etag)
		}
	}
}

// A booking the airline's flight cancellation ended says so, and the
// forwarder knows to rebook, not that it cancelled it itself.
func TestABookingCancelledWithItsFlightSaysSo(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	flight := raceFlight(t, s)
	b := confirmedOn(t, s, fwd, flight)
	if b.CancellationReason != nil {
		t.Fatalf("a confirmed booking = %+v", b)
	}
	if r := s.do(t, request{method: "PATCH", path: "/api/flights/" + flight["id"].(string), token: lh, body: map[string]any{"status": "cancelled"}}); r.status != http.StatusOK {
		t.Fatalf("flight cancelled = %d %s", r.status, r.body)
	}
	b = eventually(t, "the booking cancelled with its flight", func() booking {
		var b2 booking
		s.do(t, request{method: "GET", path: "/api/bookings/" + b.ID, token: fwd}).json(t, &b2)
		return b2
	}, func(b booking) bool { return b.Status == "cancelled" })
	if b.CancellationReason == nil || *b.CancellationReason != "flight_cancelled" || b.RejectionReason != nil {
		t.Errorf("booking cancelled with its flight = %+v", b)
	}
}

// A priced quote whose flight is cancelled afterwards shows that option's
// flight closed, in GET /api/quotes/{id} (read before, at the same
// version of the quote) and in the list.
func TestAQuoteShowsItsOptionOnACancelledFlightClosed(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	flight := raceFlight(t, s)
	id := pricedToMIA(t, s, fwd)
	type option struct {
		FlightID     string
		FlightClosed *bool
	}
	type pricedQuote struct {
		Status       string
		PriceOptions []option
	}
	options := func(path string) []option {
		var q pricedQuote
		var l struct{ Quotes []pricedQuote }
		r := s.do(t, request{method: "GET", path: path, token: fwd})
		if strings.HasPrefix(path, "/api/quotes/") {
			r.json(t, &q)
		} else if r.json(t, &l); len(l.Quotes) == 1 {
			q = l.Quotes[0]
		}
		if q.Status != "priced" || len(q.PriceOptions) != 1 || q.PriceOptions[0].FlightID != flight["id"] || q.PriceOptions[0].FlightClosed == nil {
			t.Fatalf("GET %s = %d %s, want the quote priced on %s alone, saying whether its flight is closed", path, r.status, r.body, flight["id"])
		}
		return q.PriceOptions
	}
	paths := []string{"/api/quotes/" + id, "/api/quotes?id=" + id, "/api/quotes?destination=MIA"}
	for _, path := range paths {
		if o := options(path); *o[0].FlightClosed {
			t.Errorf("GET %s before the flight is cancelled = %+v, want it open", path, o)
		}
	}
	if r := s.do(t, request{method: "PATCH", path: "/api/flights/" + flight["id"].(string), token: lh, body: map[string]any{"status": "cancelled"}}); r.status != http.StatusOK {
		t.Fatalf("flight cancelled = %d %s", r.status, r.body)
	}
	for _, path := range paths {
		eventually(t, "GET "+path+" showing the flight closed", func() []option { return options(path) },
			func(o []option) bool { return *o[0].FlightClosed })
	}
}

// A quote's ETag moves when one of its options' flights closes, though the
// quote has no event then. A long poll already waiting on the old ETag is
// woken by the flight's event and answers the quote with the flight
// closed; a client holding the quote from before gets it again, where it
// was told 304 and never learnt of it; a long poll on the old ETag
// answers at once.
func TestAQuotesETagMovesWhenItsOptionsFlightCloses(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	flight := raceFlight(t, s)
	path := "/api/quotes/" + pricedToMIA(t, s, fwd)
	open := s.read(t, fwd, path)
	poll := func() response {
		return s.do(t, request{method: "GET", path: path, token: fwd, header: map[string]string{"If-None-Match": open.etag, "Prefer": "wait=30"}})
	}
	closedIn := func(what string, r response) {
		t.Helper()
		if r.status != http.StatusOK {
			t.Fatalf("%s = %d %s, want 200 with the quote", what, r.status, r.body)
		}
		var q pricedQuote
		if r.json(t, &q); len(q.PriceOptions) != 1 || !q.PriceOptions[0].FlightClosed {
			t.Fatalf("%s = %s, want the quote with its option's flight closed", what, r.body)
		}
		if tag := r.header.Get("ETag"); tag == "" || tag == open.etag {
			t.Errorf("%s has ETag %q, want a new one (from %s)", what, tag, open.etag)
		}
	}
	waiting := make(chan response, 1)
	go func() { waiting <- poll() }()
	// The cancellation comes once the poll waits, as the server's metrics
	// tell (the test's server serves no other poll).
	admin := s.demoToken(t, "demo-admin")
	eventually(t, "the long polls waiting", func() float64 {
		n, _ := metricValue(parseMetrics(t, s.do(t, request{method: "GET", path: "/metrics", token: admin}).body), "cargo_http_long_polls_waiting")
		return n
	}, func(n float64) bool { return n == 1 })
	if r := s.do(t, request{method: "PATCH", path: "/api/flights/" + flight["id"].(string), token: lh, body: map[string]any{"status": "cancelled"}}); r.status != http.StatusOK {
		t.Fatalf("flight cancelled = %d %s", r.status, r.body)
	}
	select {
	case r := <-waiting:
		closedIn("the long poll waiting as the flight was cancelled", r)
		if r.header.Get("Preference-Applied") != "wait=30" {
			t.Errorf("the long poll waiting as the flight was cancelled has Preference-Applied %q, want wait=30: it waited", r.header.Get("Preference-Applied"))
		}
	case <-time.After(time.Minute):
		t.Fatal("the long poll waiting as the flight was cancelled did not answer within a minute")
	}

	closed := poll()
	closedIn("a long poll with the ETag from before the cancellation", closed)
	if closed.header.Get("Preference-Applied") != "" {
		t.Errorf("a long poll with the ETag from before the cancellation has Preference-Applied %q: want it answered at once", closed.header.Get("Preference-Applied"))
	}
	again := s.do(t, request{method: "GET", path: path, token: fwd, header: map[string]string{"If-None-Match": closed.header.Get("ETag")}})
	if again.status != http.StatusNotModified || again.header.Get("ETag") != closed.header.Get("ETag") {
		t.Errorf("GET with the new ETag = %d, ETag %q, want 304 with %s", again.status, again.header.Get("ETag"), closed.header.Get("ETag"))
	}
}

// A booking of a quote's option whose flight the airline has cancelled is
// refused at once, 409 naming the flight and why, where it was filed
// pending and rejected flight_closed moments later; nothing is stored of
// it, neither a booking nor its audit entry. The quote's option on a
// flight still open is booked as ever.
func TestABookingOfAnOptionOnACancelledFlightIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	cancelled := raceFlight(t, s)
	var open struct{ ID string }
	s.mustCreate(t, lh, "/api/flights", map[string]any{"flightNumber": "LH8202", "origin": "FRA", "destination": "MIA",
		"departureDate": cancelled["date"], "departureTime": "17:00", "arrivalDate": cancelled["date"], "arrivalTime": "21:30",
		"aircraftType": "B77F", "capacityKg": 1000, "capacityM3": 100}).json(t, &open)
	id := pricedToMIA(t, s, fwd)
	if q := s.quoteOutcome(t, fwd, id); len(q.PriceOptions) != 2 {
		t.Fatalf("quote %s = %+v, want options on %s and %s", id, q, cancelled["id"], open.ID)
	}
	if r := s.do(t, request{method: "PATCH", path: "/api/flights/" + cancelled["id"].(string), token: lh, body: map[string]any{"status": "cancelled"}}); r.status != http.StatusOK {
		t.Fatalf("flight cancelled = %d %s", r.status, r.body)
	}

	refused := s.do(t, request{method: "POST", path: "/api/bookings", token: fwd, body: map[string]any{"quoteId": id, "flightId": cancelled["id"]}})
	want := "flight " + cancelled["id"].(string) + " is cancelled: it takes no more bookings"
	if e := refused.apiError(t); refused.status != http.StatusConflict || e.Error != "conflict" || e.ErrorDescription != want ||
		refused.header.Get("Location") != "" {
		t.Errorf("a booking of the cancelled flight's option = %d %s, want 409 conflict %q", refused.status, refused.body, want)
	}
	var b booking
	s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": id, "flightId": open.ID}).json(t, &b)
	if b = s.bookingOutcome(t, fwd, b.ID); b.Status != "confirmed" {
		t.Errorf("a booking of the open flight's option = %+v, want it confirmed", b)
	}

	// The replica has applied the booking stored after the refusal (its
	// 201 waited for that): a booking the refusal stored would show too.
	var list struct{ Bookings []booking }
	s.do(t, request{method: "GET", path: "/api/bookings?quoteId=" + id, token: fwd}).json(t, &list)
	if len(list.Bookings) != 1 || list.Bookings[0].ID != b.ID {
		t.Errorf("the quote's bookings = %+v, want %s alone", list.Bookings, b.ID)
	}
	var log auditLog
	s.do(t, request{method: "GET", path: "/api/audit-logs?action=create&resource=booking", token: fwd}).json(t, &log)
	if len(log.Logs) != 1 || log.Logs[0].ResourceID != b.ID {
		t.Errorf("the forwarder's bookings in the audit log = %+v, want %s alone", log.Logs, b.ID)
	}
}

// A booking shows the goods, handling codes, parties, routing and
// dimension lines its request carried (or its quote, for what it left
// out) to its forwarder and to the flight's airline, in its 201, its GET
// and the lists: an airline's booking list tells a UN3480 shipment for
// cargo aircraft only from another, and who ships it. A party neither
// the RFQ nor the booking named is left out, not shown {"name": ""}.
func TestABookingShowsItsCargoAndPartiesToWhoeverMaySeeIt(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	flight := raceFlight(t, s)
	body := rfq()
	body["routing"] = map[string]any{"origin": "FRA", "destination": "MIA"}
	body["commodity"] = map[string]any{"code": "RLI", "description": "Lithium ion batteries"}
	body["shc"] = []any{"DGR", "CAO"}
	delete(body, "consignee")
	quote := createQuote(t, s, fwd, body).ID
	if q := s.quoteOutcome(t, fwd, quote); q.Status != "priced" {
		t.Fatalf("quote %s = %+v", quote, q)
	}
	created := s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": quote, "flightId": flight["id"],
		"shc":          []any{"cao", "dgr"},
		"shipper":      map[string]any{"address": "Hafenstr. 1, Frankfurt", "contact": "+49 69 1234"},
		"routing":      []any{map[string]any{"from": "fra", "to": "mia", "carrier": "lh", "flightNumber": "LH8200", "date": flight["date"]}},
		"dimensionsCm": []any{map[string]any{"l": 120, "w": 80, "h": 100, "pieces": 1}, map[string]any{"l": 100, "w": 80, "h": 90, "pieces": 1}},
	})
	var b booking
	created.json(t, &b)
	if b = s.bookingOutcome(t, fwd, b.ID); b.Status != "confirmed" {
		t.Fatalf("booking = %+v", b)
	}
	want := map[string]any{
		"commodity": "RLI",
		"shc":       []any{"CAO", "DGR"},
		"shipper":   map[string]any{"name": "ACME Machine Tools", "address": "Hafenstr. 1, Frankfurt", "contact": "+49 69 1234"},
		"routing":   []any{map[string]any{"from": "FRA", "to": "MIA", "carrier": "LH", "flightNumber": "LH8200", "date": flight["date"]}},
		"dimensionsCm": []any{map[string]any{"l": 120.0, "w": 80.0, "h": 100.0, "pieces": 1.0},
			map[string]any{"l": 100.0, "w": 80.0, "h": 90.0, "pieces": 1.0}},
	}
	one := func(r response) map[string]any {
		var b map[string]any
		r.json(t, &b)
		return b
	}
	first := func(r response) map[string]any {
		var l struct{ Bookings []map[string]any }
		if r.json(t, &l); len(l.Bookings) != 1 {
			t.Fatalf("%d bookings listed, want 1: %s", len(l.Bookings), r.body)
		}
		return l.Bookings[0]
	}
	tests := []struct {
		name  string
		r     response
		shown func(response) map[string]any
	}{
		{"the forwarder's 201", created, one},
		{"the forwarder's GET", s.do(t, request{method: "GET", path: "/api/bookings/" + b.ID, token: fwd}), one},
		{"the forwarder's list", s.do(t, request{method: "GET", path: "/api/bookings?quoteId=" + quote, token: fwd}), first},
		{"the airline's GET", s.do(t, request{method: "GET", path: "/api/bookings/" + b.ID, token: lh}), one},
		{"the airline's list of the flight", s.do(t, request{method: "GET", path: "/api/bookings?flightId=" + flight["id"].(string), token: lh}), first},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.r.status != http.StatusOK && tt.r.status != http.StatusCreated {
				t.Fatalf("%d %s", tt.r.status, tt.r.body)
			}
			got := tt.shown(tt.r)
			for field, w := range want {
				if !reflect.DeepEqual(got[field], w) {
					t.Errorf("%s = %v, want %v", field, got[field], w)
				}
			}
			if c, ok := got["consignee"]; ok {
				t.Errorf("consignee = %v, which neither the RFQ nor the booking named", c)
			}
		})
	}
}

// confirmedOn is a booking of fwd on flight (a raceFlight), of an RFQ
// priced for it, once confirmed.
func confirmedOn(t *testing.T, s *testServer, fwd string, flight map[string]any) booking {
	t.Helper()
	quote := pricedToMIA(t, s, fwd)
	var b booking
	s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": quote, "flightId": flight["id"]}).json(t, &b)
	if b = s.bookingOutcome(t, fwd, b.ID); b.Status != "confirmed" {
		t.Fatalf("booking = %+v", b)
	}
	return b
}

// pricedToMIA is the id of an RFQ of fwd from FRA to MIA, once priced
// (on a raceFlight).
func pricedToMIA(t *testing.T, s *testServer, fwd string) string {
	t.Helper()
	body := rfq()
	body["routing"] = map[string]any{"origin": "FRA", "destination": "MIA"}
	quote := createQuote(t, s, fwd, body).ID
	if q := s.quoteOutcome(t, fwd, quote); q.Status != "priced" {
		t.Fatalf("quote %s = %+v", quote, q)
	}
	return quote
}

// raceFlight is an LH flight on a route without demo flights, with room
// for ten 100 kg bookings.
func raceFlight(t *testing.T, s *testServer) map[string]any {
	lh := s.demoToken(t, "demo-airline-lh")
	date := time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly)
	var f struct{ ID string }
	s.mustCreate(t, lh, "/api/flights", map[string]any{"flightNumber": "LH8200", "origin": "FRA", "destination": "MIA",
		"departureDate": date, "departureTime": "11:00", "arrivalDate": date, "arrivalTime": "15:30",
		"aircraftType": "B77F", "capacityKg": 1000, "capacityM3": 100}).json(t, &f)
	return map[string]any{"id": f.ID, "date": date}
}

func TestBookingRaceNeverOverbooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	fwd := s.demoToken(t, "demo-forwarder")
	flight := raceFlight(t, s)
	const n = 50
	quotes := make([]string, n)
	for i := range quotes {
		body := rfq()
		body["routing"] = map[string]any{"origin": "FRA", "destination": "MIA"}
		body["grossWeightKg"] = 100
		body["dimensionsCm"] = []any{map[string]any{"l": 50, "w": 50, "h": 50, "pieces": 2}}
		quotes[i] = createQuote(t, s, fwd, body).ID
	}
	for _, id := range quotes {
		if q := s.quoteOutcome(t, fwd, id); q.Status != "priced" {
			t.Fatalf("quote %s = %+v", id, q)
		}
	}
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b booking
			s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": quotes[i], "flightId": flight["id"]}).json(t, &b)
			ids[i] = b.ID
		}()
	}
	wg.Wait()
	count := func(s *testServer) map[string]int {
		outcome := map[string]int{}
		for _, id := range ids {
			b := s.bookingOutcome(t, fwd, id)
			key := b.Status
			if b.RejectionReason != nil {
				key += "/" + *b.RejectionReason
			}
			outcome[key]++
		}
		return outcome
	}
	want := map[string]int{"confirmed": 10, "rejected/no_capacity": 40}
	if got := count(s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outcomes = %v, want %v", got, want)
	}
	c := s.capacityOf(t, s.demoToken(t, "demo-airline-lh"), "LH8200", flight["date"].(string))
	if c.ProjectedWeight != 1000 || c.AvailableWeight != 0 {
		t.Errorf("capacity = %+v", c)
	}
	s.stop()

	s = startServer(t, dir, nil)
	fwd = s.demoToken(t, "demo-forwarder")
	if got := count(s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after a restart, outcomes = %v", got)
	}
	if c := s.capacityOf(t, s.demoToken(t, "demo-airline-lh"), "LH8200", flight["date"].(string)); c.ProjectedWeight != 1000 || c.AvailableWeight != 0 {
		t.Errorf("after a restart, capacity = %+v", c)
	}
}

func TestBookingRefusals(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, rfq()).ID)
	admin := s.demoToken(t, "demo-admin")
	s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "other-fwd", "name": "Other", "role": "forwarder"})
	s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "other-fwd", "clientId": "other", "clientSecret": "other-secret-long"})
	other := s.token(t, "other", "other-secret-long")
	flight := q.PriceOptions[0].FlightID

	tests := []struct {
		name   string
		token  string
		body   map[string]any
		status int
		error  string
		field  string
	}{
		{"someone else's quote", other, map[string]any{"quoteId": q.ID, "flightId": flight}, 404, "not_found", ""},
		{"unknown quote", fwd, map[string]any{"quoteId": "nope", "flightId": flight}, 404, "not_found", ""},
		{"unknown flight", fwd, map[string]any{"quoteId": q.ID, "flightId": "LH1-2020-01-01"}, 400, "validation_error", "flightId"},
		{"no quote", fwd, map[string]any{"flightId": flight}, 400, "validation_error", "quoteId"},
		{"wrong chargeable weight", fwd, map[string]any{"quoteId": q.ID, "flightId": flight, "chargeableWeightKg": 100}, 400, "validation_error", "chargeableWeightKg"},
		{"bad AWB check digit", fwd, map[string]any{"quoteId": q.ID, "flightId": flight, "awb": map[string]any{"prefix": "020", "number": "81140744"}}, 400, "validation_error", "awb.number"},
		{"airline cannot book", s.demoToken(t, "demo-airline-lh"), map[string]any{"quoteId": q.ID, "flightId": flight}, 403, "forbidden", ""},
		{"bad routing leg", fwd, map[string]any{"quoteId": q.ID, "flightId": flight,
			"routing": []any{map[string]any{"from": "FRA", "to": "JFK", "carrier": "LH", "flightNumber": ".....", "date": "soon"}}}, 400, "validation_error", "routing[0].flightNumber"},
		{"endless commodity", fwd, map[string]any{"quoteId": q.ID, "flightId": flight, "commodity": strings.Repeat("x", 200000)}, 400, "validation_error", "commodity"},
		{"other goods than quoted", fwd, map[string]any{"quoteId": q.ID, "flightId": flight, "commodity": "UN3480"}, 400, "validation_error", "commodity"},
		{"a handling code not quoted", fwd, map[string]any{"quoteId": q.ID, "flightId": flight, "shc": []string{"eap", "EAP", "AVI"}}, 400, "validation_error", "shc[2]"},
		{"more pieces than the dimension lines", fwd, map[string]any{"quoteId": q.ID, "flightId": flight, "pieces": 5}, 400, "validation_error", "pieces"},
		{"a volume of nothing", fwd, map[string]any{"quoteId": q.ID, "flightId": flight, "volume": 0}, 400, "validation_error", "volume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "POST", path: "/api/bookings", token: tt.token, body: tt.body})
			e := r.apiError(t)
			if r.status != tt.status || e.Error != tt.error {
				t.Fatalf("= %d %s", r.status, r.body)
			}
			if tt.field != "" && (len(e.ValidationErrors) == 0 || e.ValidationErrors[0].Field != tt.field) {
				t.Errorf("validation errors = %+v", e.ValidationErrors)
			}
		})
	}
	// A flight that exists, still open, but was not offered: filed, then
	// rejected. (One closed already is refused at once.)
	var other2 struct{ Flights []struct{ ID string } }
	open := time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly)
	s.do(t, request{method: "GET", path: "/api/flights?origin=DXB&destination=FRA&limit=1&date=" + open, token: fwd}).json(t, &other2)
	var b booking
	s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": q.ID, "flightId": other2.Flights[0].ID}).json(t, &b)
	if b = s.bookingOutcome(t, fwd, b.ID); b.Status != "rejected" || *b.RejectionReason != "no_option_for_flight" {
		t.Errorf("booking of a flight not offered = %+v", b)
	}
	// Far more cargo than was quoted: filed, then rejected.
	s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": q.ID, "flightId": flight, "grossWeightKg": 15000}).json(t, &b)
	if b = s.bookingOutcome(t, fwd, b.ID); b.Status != "rejected" || *b.RejectionReason != "exceeds_quote" {
		t.Errorf("booking of 15 t on a 350 kg quote = %+v", b)
	}
	// Nothing changed: the quote is still priced and bookable.
	var still pricedQuote
	s.do(t, request{method: "GET", path: "/api/quotes/" + q.ID, token: fwd}).json(t, &still)
	if still.Status != "priced" {
		t.Errorf("quote after refusals = %s", still.Status)
	}
}

func TestRejectedQuoteHasAReason(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	tests := []struct {
		name   string
		change func(m map[string]any)
		reason string
	}{
		{"no flights on the route", func(m map[string]any) { m["routing"] = map[string]any{"origin": "SYD", "destination": "SCL"} }, "no_route"},
		{"heavier than any flight", func(m map[string]any) { m["grossWeightKg"] = 200000; m["dimensionsCm"] = []any{} }, "no_capacity"},
		{"live animals on EK only", func(m map[string]any) {
			m["routing"] = map[string]any{"origin": "DXB", "destination": "FRA"}
			m["shc"] = []any{"AVI"}
		}, "commodity_not_accepted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := rfq()
			tt.change(body)
			q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, body).ID)
			if q.Status != "rejected" || q.RejectionReason == nil || *q.RejectionReason != tt.reason || len(q.PriceOptions) != 0 {
				t.Errorf("quote = %+v", q)
			}
		})
	}
}

// Lithium batteries on their own (commodity RLI, UN3480; RLM, UN3090)
// are forbidden on passenger aircraft whatever their handling codes say:
// their quote offers the demo's freighters alone, not LH630 (A359) nor
// EK202 (B77W), whose manifests would refuse them, and is rejected where
// only a passenger aircraft flies. General cargo is offered both.
func TestLithiumBatteriesAreQuotedOnFreightersAlone(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	tests := []struct {
		name, origin, destination, commodity string
		want                                 string // the flight numbers offered, or the rejection reason
	}{
		{"general cargo to Dubai", "FRA", "DXB", "GEN", "EK9902 LH630"},
		{"lithium ion batteries to Dubai", "FRA", "DXB", "RLI", "EK9902"},
		{"lithium metal batteries to Dubai", "FRA", "DXB", "RLM", "EK9902"},
		{"general cargo where a passenger aircraft alone flies", "JFK", "DXB", "GEN", "EK202"},
		{"lithium ion batteries where a passenger aircraft alone flies", "JFK", "DXB", "RLI", "commodity_not_accepted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := rfq()
			body["routing"] = map[string]any{"origin": tt.origin, "destination": tt.destination}
			body["commodity"] = map[string]any{"code": tt.commodity, "description": "Goods"}
			q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, body).ID)
			offered := map[string]bool{}
			for _, o := range q.PriceOptions {
				offered[o.FlightNumber] = true
			}
			got := strings.Join(slices.Sorted(maps.Keys(offered)), " ")
			if q.RejectionReason != nil {
				got = *q.RejectionReason
			}
			if got != tt.want {
				t.Errorf("quote %s offers %q, want %s", q.Status, got, tt.want)
			}
		})
	}
}

func TestBookingStoredBeforeACrashIsConfirmedOnRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	fwd := s.demoToken(t, "demo-forwarder")
	q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, rfq()).ID)
	s.stop()

	// The booking reaches the stream, but no reactor runs before the
	// process dies.
	ctx := context.Background()
	store, err := eventstore.Open(ctx, eventstore.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	who := domain.Principal{Subject: "client:demo-forwarder", OrganizationID: "demo-forwarder", Role: domain.RoleForwarder}
	res, err := commands.New(store, 4, nil).RequestBooking(ctx, commands.NewMeta(who, "", ""),
		domain.RequestBooking{QuoteID: q.ID, FlightID: q.PriceOptions[0].FlightID})
	store.Close()
	if err != nil {
		t.Fatal(err)
	}

	s = startServer(t, dir, nil)
	fwd = s.demoToken(t, "demo-forwarder")
	if b := s.bookingOutcome(t, fwd, res.State.ID); b.Status != "confirmed" {
		t.Errorf("booking after restart = %+v", b)
	}
}

// An airline whose card counts volume weight at 5000 cm³ a kg, as express
// products do, prices its options at that weight, and a booking of them is
// weighed so: the RFQ's two crates of 120×80×100 cm are 384 kg of volume
// weight there, 320 kg at the standard 6000 (350.5 kg gross).
func TestACarriersVolumeDivisorPricesAndWeighsItsBookings(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	card := func(divisor any) map[string]any {
		return map[string]any{"currency": "EUR", "weightBreaks": map[string]any{"N": 3}, "validFrom": "2026-01-01", "validTo": "2099-12-31",
			"volumeDivisor": divisor}
	}
	checkFields(t, s.do(t, request{method: "PUT", path: "/api/rates/FRA/JFK", token: lh, body: card(500)}), "volumeDivisor:INVALID_RANGE")
	var set struct{ VolumeDivisor int }
	s.do(t, request{method: "PUT", path: "/api/rates/FRA/JFK", token: lh, body: card(5000)}).json(t, &set)
	if set.VolumeDivisor != 5000 {
		t.Fatalf("the card set shows a divisor of %d", set.VolumeDivisor)
	}
	body := rfq()
	body["airlineFilter"], body["shc"] = []any{"LH"}, []any{}
	q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, body).ID)
	if q.Status != "priced" || q.ChargeableWeightKg == nil || *q.ChargeableWeightKg != 350.5 {
		t.Fatalf("quote = %+v", q)
	}
	opt := q.PriceOptions[0]
	if opt.ChargeableWeightKg != 384 || opt.VolumeDivisor != 5000 || opt.TotalAmount != 1152 || opt.PricePerKg != 3 {
		t.Fatalf("option = %+v; want 384 kg at 5000 cm³/kg, 1152 EUR", opt)
	}
	booked := map[string]any{"quoteId": q.ID, "flightId": opt.FlightID, "awb": map[string]any{"prefix": "020", "number": "81140743"},
		"chargeableWeightKg": 350.5}
	checkFields(t, s.do(t, request{method: "POST", path: "/api/bookings", token: fwd, body: booked}), "chargeableWeightKg:MISMATCH")
	s.approvedStock(t, fwd, "020", 1, "020-81140743", "020-81140743")
	booked["chargeableWeightKg"] = 384
	var b booking
	s.mustCreate(t, fwd, "/api/bookings", booked).json(t, &b)
	if b = s.bookingOutcome(t, fwd, b.ID); b.Status != "confirmed" {
		t.Errorf("booking = %+v", b)
	}
}

func TestFlightsAndRates(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	lh := s.demoToken(t, "demo-airline-lh")
	date, today := time.Now().UTC().AddDate(0, 0, 5).Format(time.DateOnly), time.Now().UTC().Format(time.DateOnly)
	flightOn := func(date, number, origin, dest string) map[string]any {
		return map[string]any{"flightNumber": number, "origin": origin, "destination": dest, "departureDate": date,
			"departureTime": "09:00", "arrivalDate": date, "arrivalTime": "10:10", "aircraftType": "A333"}
	}
	flight := func(number, origin, dest string) map[string]any { return flightOn(date, number, origin, dest) }
	var batch struct{ Flights []struct{ ID, Status string } }
	s.mustCreate(t, lh, "/api/flights", []any{flight("LH1000", "FRA", "LHR"), flight("LH1001", "FRA", "CDG")}).json(t, &batch)
	if len(batch.Flights) != 2 || batch.Flights[0].Status != "scheduled" {
		t.Fatalf("batch = %+v", batch)
	}
	tests := []struct {
		name   string
		token  string
		method string
		path   string
		body   any
		status int
	}{
		{"another carrier's flight number", lh, "POST", "/api/flights", flight("EK1000", "FRA", "LHR"), 400},
		{"unknown airport", lh, "POST", "/api/flights", flight("LH1002", "FRA", "XXX"), 400},
		{"arrival before departure", lh, "POST", "/api/flights", map[string]any{"flightNumber": "LH1003", "origin": "FRA", "destination": "LHR",
			"departureDate": date, "departureTime": "09:00", "arrivalDate": date, "arrivalTime": "07:00", "aircraftType": "A333"}, 400},
		{"same flight again", lh, "POST", "/api/flights", flight("LH1000", "FRA", "LHR"), 201},
		{"a zero-padded flight number", lh, "POST", "/api/flights", flight("LH0123", "FRA", "LHR"), 201},
		{"is that flight, unpadded", lh, "GET", "/api/flights/LH123-" + date, nil, 200},
		{"and padded", lh, "GET", "/api/flights/LH0123-" + date, nil, 200},
		{"the same flight, padded otherwise", lh, "POST", "/api/flights", flight("lh 123", "FRA", "LHR"), 201},
		{"one flight twice in a batch", lh, "POST", "/api/flights", []any{flight("LH1006", "FRA", "LHR"), flightOn(date, "LH1006", "FRA", "CDG")}, 400},
		{"a batch with a flight scheduled otherwise", lh, "POST", "/api/flights", []any{flight("LH1007", "FRA", "LHR"), flight("LH1000", "FRA", "CDG")}, 409},
		{"nothing of it was stored", lh, "GET", "/api/flights/LH1007-" + date, nil, 404},
		{"forwarders do not publish", s.demoToken(t, "demo-forwarder"), "POST", "/api/flights", flight("LH1004", "FRA", "LHR"), 403},
		{"delay", lh, "PATCH", "/api/flights/" + batch.Flights[0].ID, map[string]any{"status": "delayed"}, 200},
		{"depart five days early", lh, "PATCH", "/api/flights/" + batch.Flights[0].ID, map[string]any{"status": "departed"}, 409},
		{"today's flight", lh, "POST", "/api/flights", flightOn(today, "LH1005", "FRA", "LHR"), 201},
		{"depart", lh, "PATCH", "/api/flights/LH1005-" + today, map[string]any{"status": "departed"}, 200},
		{"cannot be cancelled once departed", lh, "PATCH", "/api/flights/LH1005-" + today, map[string]any{"status": "cancelled"}, 409},
		{"another airline's flight", s.demoToken(t, "demo-airline-ek"), "PATCH", "/api/flights/" + batch.Flights[1].ID, map[string]any{"status": "cancelled"}, 403},
		{"unknown flight", lh, "PATCH", "/api/flights/LH9-2020-01-01", map[string]any{"status": "cancelled"}, 404},
		{"rate card", lh, "PUT", "/api/rates/FRA/LHR", map[string]any{"currency": "eur", "minimumCharge": 60,
			"weightBreaks": map[string]any{"N": 2.5, "100": 2}, "validFrom": "2026-01-01", "validTo": "2099-12-31"}, 200},
		{"bad rate card", lh, "PUT", "/api/rates/FRA/LHR", map[string]any{"currency": "euro", "weightBreaks": map[string]any{"45": 0, "7": 1},
			"validFrom": "2027-01-01", "validTo": "2026-01-01"}, 400},
		{"forwarders keep no rates", s.demoToken(t, "demo-forwarder"), "PUT", "/api/rates/FRA/LHR", map[string]any{}, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := s.do(t, request{method: tt.method, path: tt.path, token: tt.token, body: tt.body}); r.status != tt.status {
				t.Errorf("= %d %s, want %d", r.status, r.body, tt.status)
			}
		})
	}
	// A problem of a batch names its item, in a batch of one too; one of
	// a single flight names the field alone.
	for fields, body := range map[string]any{
		"[0].destination:UNKNOWN_AIRPORT": []any{flight("LH1008", "FRA", "XXX")},
		"destination:UNKNOWN_AIRPORT":     flight("LH1008", "FRA", "XXX"),
	} {
		checkFields(t, s.do(t, request{method: "POST", path: "/api/flights", token: lh, body: body}), fields)
	}
	// A rate card's airports are ones the reference data knows, as a
	// flight's are; "*" stands for any.
	card := map[string]any{"currency": "EUR", "weightBreaks": map[string]any{"N": 2.5}, "validFrom": "2026-01-01", "validTo": "2099-12-31"}
	s.runCases(t, "PUT", []apiCase{
		{"a rate card to an unknown airport", lh, "/api/rates/FRA/XXX", card, 400, "destination:UNKNOWN_AIRPORT"},
		{"a rate card from an unknown airport, in lower case, to any", lh, "/api/rates/qqq/*", card, 400, "origin:UNKNOWN_AIRPORT"},
		{"a rate card between two unknown airports", lh, "/api/rates/XXX/QQQ", card, 400, "destination:UNKNOWN_AIRPORT origin:UNKNOWN_AIRPORT"},
		{"a rate card of an airport of no airport's shape", lh, "/api/rates/FRA/X1X", card, 400, "destination:INVALID_FORMAT"},
		{"a rate card from any airport to a known one", lh, "/api/rates/*/lhr", card, 200, ""},
	})
	var list struct {
		Flights    []struct{ ID, Status, OriginTimezone string }
		Pagination struct{ Total int }
	}
	s.do(t, request{method: "GET", path: "/api/flights?origin=FRA&date=" + today + "&status=departed", token: lh}).json(t, &list)
	if list.Pagination.Total != 1 || list.Flights[0].OriginTimezone != "Europe/Berlin" {
		t.Errorf("departed flights = %+v", list)
	}
	// Both moments in UTC too, from the local times at either end.
	var lh1000 struct{ DepartsAt, ArrivesAt time.Time }
	s.do(t, request{method: "GET", path: "/api/flights/" + batch.Flights[0].ID, token: lh}).json(t, &lh1000)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	london, _ := time.LoadLocation("Europe/London")
	day, _ := time.Parse(time.DateOnly, date)
	departs, arrives := time.Date(day.Year(), day.Month(), day.Day(), 9, 0, 0, 0, berlin), time.Date(day.Year(), day.Month(), day.Day(), 10, 10, 0, 0, london)
	if !lh1000.DepartsAt.Equal(departs) || !lh1000.ArrivesAt.Equal(arrives) || lh1000.DepartsAt.Location() != time.UTC {
		t.Errorf("LH1000 departs at %s and arrives at %s, want %s and %s in UTC", lh1000.DepartsAt, lh1000.ArrivesAt, departs.UTC(), arrives.UTC())
	}
	var rates struct {
		Rates []struct{ Carrier, Origin, Destination, Currency string }
	}
	s.do(t, request{method: "GET", path: "/api/rates", token: lh}).json(t, &rates)
	found := false
	for _, r := range rates.Rates {
		found = found || (r.Origin == "FRA" && r.Destination == "LHR" && r.Currency == "EUR")
		if r.Carrier != "LH" {
			t.Errorf("LH sees a %s rate card", r.Carrier)
		}
	}
	if !found {
		t.Errorf("rates = %+v", rates)
	}
}

func TestABookingShowsThePriceItWasConfirmedAtToWhoeverMaySeeIt(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	flight := raceFlight(t, s)
	quote := pricedToMIA(t, s, fwd)
	var q pricedQuote
	s.do(t, request{method: "GET", path: "/api/quotes/" + quote, token: fwd}).json(t, &q)
	var option priceOption
	for _, o := range q.PriceOptions {
		if o.FlightID == flight["id"] {
			option = o
		}
	}
	if option.FlightID == "" {
		t.Fatalf("quote %s has no option for %s: %+v", quote, flight["id"], q.PriceOptions)
	}
	// Rejected first (the quote is still priced), then confirmed.
	var rejected, confirmed booking
	s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": quote, "flightId": flight["id"], "grossWeightKg": 15000}).json(t, &rejected)
	if rejected = s.bookingOutcome(t, fwd, rejected.ID); rejected.Status != "rejected" {
		t.Fatalf("booking of 15 t = %+v", rejected)
	}
	s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": quote, "flightId": flight["id"]}).json(t, &confirmed)
	if confirmed = s.bookingOutcome(t, fwd, confirmed.ID); confirmed.Status != "confirmed" {
		t.Fatalf("booking = %+v", confirmed)
	}
	quoted := map[string]any{"pricePerKg": option.PricePerKg, "currency": option.Currency, "quotedTotal": option.TotalAmount}
	tests := []struct {
		name, token, booking string
		want                 any // the price shown, nil for none
	}{
		{"the forwarder, of the confirmed booking", fwd, confirmed.ID, quoted},
		{"the flight's airline, of the confirmed booking", lh, confirmed.ID, quoted},
		{"the admin, of the confirmed booking", s.demoToken(t, "demo-admin"), confirmed.ID, quoted},
		{"the forwarder, of the rejected booking", fwd, rejected.ID, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "GET", path: "/api/bookings/" + tt.booking, token: tt.token})
			if r.status != http.StatusOK {
				t.Fatalf("%d %s", r.status, r.body)
			}
			var b map[string]any
			r.json(t, &b)
			if got := b["price"]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("price = %v, want %v", got, tt.want)
			}
		})
	}
}

// An airline whose organisation an admin disabled takes no bookings: a
// booking on an option it priced before is refused at once, 409, as on a
// flight closed; it was filed, and rejected moments later.
// nextNightSummerTimeEnds is the next date, from tomorrow on, on which
// the clocks in zone go back (the hour before is shown twice).
func nextNightSummerTimeEnds(t *testing.T, zone string) string {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	for day := time.Now().In(loc).AddDate(0, 0, 1); ; day = day.AddDate(0, 0, 1) {
		midnight := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
		_, before := midnight.Zone()
		if _, after := midnight.Add(24 * time.Hour).Zone(); after < before {
			return midnight.Format(time.DateOnly)
		}
	}
}

// A flight landing in Frankfurt in the hour its clocks show twice, the
// second time, is published with the arrival's UTC offset, and lands
// then; an offset Frankfurt's clock does not have then is refused.
func TestAFlightIsPublishedAtTheUTCOffsetOfItsLocalTimes(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	lh := s.demoToken(t, "demo-airline-lh")
	date := nextNightSummerTimeEnds(t, "Europe/Berlin")
	// LHR 01:30 in summer time to FRA 02:15 in winter time: 45 minutes.
	flight := func(offset string) map[string]any {
		return map[string]any{"flightNumber": "LH4711", "origin": "LHR", "destination": "FRA", "departureDate": date,
			"departureTime": "01:30", "arrivalDate": date, "arrivalTime": "02:15", "arrivalUtcOffset": offset, "aircraftType": "A333"}
	}
	s.runCases(t, "POST", []apiCase{
		{"without its offset, landing before it left", lh, "/api/flights", flight(""), 400, "arrivalTime:INVALID_VALUE"},
		{"at an offset Frankfurt's clock does not have then", lh, "/api/flights", flight("+02:30"), 400, "arrivalUtcOffset:MISMATCH"},
		{"at an offset that is none", lh, "/api/flights", flight("1 hour"), 400, "arrivalUtcOffset:INVALID_FORMAT"},
		{"at the offset of winter time", lh, "/api/flights", flight("+01:00"), 201, ""},
		{"sent again", lh, "/api/flights", flight("+01:00"), 201, ""},
		{"sent again at the offset of summer time, landing before it left", lh, "/api/flights", flight("+02:00"), 400, "arrivalTime:INVALID_VALUE"},
	})
	again := flight("+01:00")
	again["departureUtcOffset"] = "+01:00" // London's summer time: the departure on record
	s.runCases(t, "POST", []apiCase{{"sent again with both offsets", lh, "/api/flights", again, 201, ""}})
	var got struct{ DepartsAt, ArrivesAt time.Time }
	s.do(t, request{method: "GET", path: "/api/flights/LH4711-" + date, token: lh}).json(t, &got)
	if d := got.ArrivesAt.Sub(got.DepartsAt); d != 45*time.Minute {
		t.Errorf("departs at %s and arrives at %s: %s, want 45 minutes", got.DepartsAt, got.ArrivesAt, d)
	}
}

func TestABookingOnTheFlightOfADisabledAirlineIsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, admin := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-admin")
	q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, rfq()).ID)
	if len(q.PriceOptions) == 0 {
		t.Fatalf("quote %+v has no option", q)
	}
	if r := s.do(t, request{method: "POST", path: "/api/admin/organizations/demo-airline-lh/disable", token: admin}); r.status != http.StatusOK {
		t.Fatalf("disabling LH: %d %s", r.status, r.body)
	}
	r := s.do(t, request{method: "POST", path: "/api/bookings", token: fwd, body: map[string]any{"quoteId": q.ID, "flightId": q.PriceOptions[0].FlightID}})
	if r.status != http.StatusConflict || !strings.Contains(string(r.body), "takes no bookings: its airline's organisation is disabled") {
		t.Errorf("booking on LH's flight once LH is disabled = %d %s, want 409 naming why", r.status, r.body)
	}
}
