package httpapi

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/views"
)

// none is a flight lookup for which no flight is closed.
func none(string) bool { return false }

func TestForgottenQuoteViewsAnswerWhatTheQuoteHoldsNow(t *testing.T) {
	v := quoteViews{max: 10}
	who := domain.Principal{Role: domain.RoleAdmin}
	corrupt := domain.Quote{ID: "q1", Status: domain.QuoteStatusRejected}
	repaired := domain.Quote{ID: "q1", Status: domain.QuoteStatusPending}
	v.of(corrupt, 7, who, none)
	v.forget()
	want := httptest.NewRecorder()
	writeJSON(want, 200, views.ToQuoteJSON(repaired, who, none))
	if got, _ := v.of(repaired, 7, who, none); !bytes.Equal(append(got, '\n'), want.Body.Bytes()) {
		t.Errorf("after forget, the quote at the same version reads %s, want %s", got, want.Body)
	}
}

func TestQuoteViewsAnswerAsEncodingEachTime(t *testing.T) {
	created := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	pending := domain.Quote{ID: "q1", OrganizationID: "f1", Status: domain.QuoteStatusPending, Origin: "FRA", Destination: "JFK",
		Pieces: 2, WeightKg: 350.5, VolumeM3: 1.92, Commodity: domain.Commodity{Code: "GEN"}, CreatedAt: created}
	priced := pending
	priced.Status, priced.PricedAt, priced.ChargeableWeightKg = domain.QuoteStatusPriced, created.Add(time.Minute), 350.5
	priced.Options = []domain.PriceOption{
		{FlightID: "LH8400-2026-11-27", FlightNumber: "LH8400", Carrier: "LH", DepartureDate: "2026-11-27", PricePerKg: 2.9, TotalAmount: 1016.45, Currency: "EUR", ValidityHours: 48},
		{FlightID: "EK9901-2026-11-27", FlightNumber: "EK9901", Carrier: "EK", DepartureDate: "2026-11-27", PricePerKg: 3.1, TotalAmount: 1086.55, Currency: "EUR", ValidityHours: 24},
	}
	rejected := pending
	rejected.Status, rejected.Reason = domain.QuoteStatusRejected, "no flights <FRA & JFK>" // not HTML-escaped
	forwarder := domain.Principal{Role: domain.RoleForwarder, OrganizationID: "f1"}
	lh := domain.Principal{Role: domain.RoleAirline, OrganizationID: "lh", AirlineCode: "LH"}
	ek := domain.Principal{Role: domain.RoleAirline, OrganizationID: "ek", AirlineCode: "EK"}
	codeless := domain.Principal{Role: domain.RoleAirline, OrganizationID: "x"}
	admin := domain.Principal{Role: domain.RoleAdmin}

	lhClosed := func(id string) bool { return id == "LH8400-2026-11-27" }
	bothClosed := func(string) bool { return true }

	v := quoteViews{max: 3}
	// In this order, through one cache: each answer is what encoding the
	// quote for its reader gives, whatever was read before, and its ETag
	// moves when an option's flight closes, though the version does not;
	// only for an option the reader sees: an airline's moves for none of
	// another carrier's, which its view leaves out.
	for i, c := range []struct {
		name    string
		quote   domain.Quote
		version uint64
		who     domain.Principal
		closed  func(string) bool
		etag    string
	}{
		{"a pending quote", pending, 1, forwarder, none, `"1"`},
		{"the same, cached", pending, 1, forwarder, none, `"1"`},
		{"the quote priced", priced, 2, forwarder, none, `"2"`},
		{"an airline sees its own options", priced, 2, lh, none, `"2"`},
		{"another airline its own", priced, 2, ek, none, `"2"`},
		{"an airline without a code none", priced, 2, codeless, none, `"2"`},
		{"the forwarder again, after the cache was full", priced, 2, forwarder, none, `"2"`},
		{"the forwarder once LH8400 is cancelled, the quote unchanged", priced, 2, forwarder, lhClosed, `"2-1"`},
		{"an airline once its flight is cancelled", priced, 2, lh, lhClosed, `"2-1"`},
		{"another airline, its own flight open, once LH8400 is cancelled", priced, 2, ek, lhClosed, `"2"`},
		{"that airline once its flight closes too: its first option", priced, 2, ek, bothClosed, `"2-1"`},
		{"the forwarder once both flights are closed", priced, 2, forwarder, bothClosed, `"2-3"`},
		{"an admin sees all", priced, 2, admin, lhClosed, `"2-1"`},
		{"a reader behind the change", pending, 1, admin, lhClosed, `"1"`},
		{"a reader after it again", priced, 2, admin, lhClosed, `"2-1"`},
		{"the quote rejected", rejected, 3, lh, lhClosed, `"3"`},
	} {
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		writeJSON(want, 200, views.ToQuoteJSON(c.quote, c.who, c.closed))
		view, shut := v.of(c.quote, c.version, c.who, c.closed)
		writeEncoded(got, 200, view)
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("%d, %s: = %s, want %s", i+1, c.name, got.Body, want.Body)
		}
		if tag := quoteETag(c.version, shut); tag != c.etag {
			t.Errorf("%d, %s: ETag %s, want %s", i+1, c.name, tag, c.etag)
		}
		want, got = httptest.NewRecorder(), httptest.NewRecorder()
		writeJSON(want, 200, views.QuoteListJSON{Quotes: []views.QuoteJSON{views.ToQuoteJSON(c.quote, c.who, c.closed)}, Pagination: views.ToPaginationJSON(1, 7, 1)})
		writeQuoteListOfOne(got, view, views.ToPaginationJSON(1, 7, 1))
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Errorf("%d, %s, in a list: = %s, want %s", i+1, c.name, got.Body, want.Body)
		}
		if len(v.views) > v.max {
			t.Fatalf("%d, %s: %d views kept, at most %d wanted", i+1, c.name, len(v.views), v.max)
		}
	}
}

// A long poll on a quote also watches its options' flights' statuses, each once, and
// wakes when the first of those still open closes by its departure time.
func TestAQuoteWakesItsLongPollAtItsOptionsFlights(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	flights := projections.NewFlights()
	schedule := func(id string, departs time.Time, status string) {
		rec := domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateFlight, ID: id}}
		flights.Apply(rec, domain.FlightScheduled{FlightID: id, Carrier: "LH", FlightNumber: id[:6], Origin: "FRA", Destination: "JFK",
			DepartureDate: "2026-11-26", DepartsAt: departs, CapacityKg: 1000, CapacityM3: 10, ScheduledAt: now})
		if status != "" {
			flights.Apply(rec, domain.FlightStatusChanged{FlightID: id, Status: status, Previous: domain.FlightStatusScheduled, ChangedAt: now})
		}
	}
	schedule("LH8400-2026-11-26", now.Add(3*time.Hour), "")
	schedule("LH8402-2026-11-26", now.Add(time.Hour), domain.FlightStatusCancelled) // closed already: no moment to wait for
	schedule("LH8404-2026-11-26", now.Add(2*time.Hour), "")
	s := &Server{flights: flights}
	q := domain.Quote{ID: "q1", Options: []domain.PriceOption{{FlightID: "LH8400-2026-11-26"}, {FlightID: "LH8402-2026-11-26"},
		{FlightID: "LH8404-2026-11-26"}, {FlightID: "LH8400-2026-11-26"}}}
	w := s.quoteWakers(q, now)
	var ids []string
	for _, a := range w.aggs {
		ids = append(ids, a.Type+"/"+a.ID)
	}
	if fmt.Sprint(ids) != "[flight.status/LH8400-2026-11-26 flight.status/LH8402-2026-11-26 flight.status/LH8404-2026-11-26]" || !w.at.Equal(now.Add(2*time.Hour)) {
		t.Errorf("wakers = %v at %s, want the three flights once, at LH8404's departure %s", ids, w.at, now.Add(2*time.Hour))
	}
	if w := s.quoteWakers(domain.Quote{ID: "q2"}, now); len(w.aggs) != 0 || !w.at.IsZero() {
		t.Errorf("a quote without options wakes at %+v, want nothing", w)
	}
}
