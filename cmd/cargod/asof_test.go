package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore/natstest"
)

// versioned is a resource's body and ETag as a GET answered them.
type versioned struct {
	body []byte
	etag string
}

// read GETs path and expects 200 with an ETag.
func (s *testServer) read(t *testing.T, token, path string) versioned {
	t.Helper()
	r := s.do(t, request{method: "GET", path: path, token: token})
	if r.status != http.StatusOK || r.header.Get("ETag") == "" {
		t.Fatalf("GET %s = %d (ETag %q) %s", path, r.status, r.header.Get("ETag"), r.body)
	}
	return versioned{body: r.body, etag: r.header.Get("ETag")}
}

// moment is a time between the events stored before it and after it.
func moment() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func TestAFlightAtAPastMomentIsTheFlightAsTheAPIShowedItThen(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	lh := s.demoToken(t, "demo-airline-lh")
	beforeIt := moment()
	var f struct{ ID string }
	created := s.mustCreate(t, lh, "/api/flights", shortFlight("LH1200"))
	created.json(t, &f)
	path := "/api/flights/" + f.ID
	scheduled := s.read(t, lh, path)
	if created.header.Get("ETag") != scheduled.etag {
		t.Errorf("created with ETag %q, read back with %q", created.header.Get("ETag"), scheduled.etag)
	}
	between := moment()

	delay := s.do(t, request{method: "PATCH", path: path, token: lh, body: map[string]any{"status": "delayed"}, header: map[string]string{"If-Match": scheduled.etag}})
	if delay.status != http.StatusOK || delay.header.Get("ETag") == "" || delay.header.Get("ETag") == scheduled.etag {
		t.Fatalf("a change with the current version = %d, ETag %q (was %q) %s", delay.status, delay.header.Get("ETag"), scheduled.etag, delay.body)
	}
	delayed := s.read(t, lh, path)
	if delayed.etag != delay.header.Get("ETag") || !strings.Contains(string(delayed.body), `"status":"delayed"`) {
		t.Fatalf("after the change: %s %s, the change answered ETag %s", delayed.etag, delayed.body, delay.header.Get("ETag"))
	}

	t.Run("at a moment between the changes, the earlier flight exactly", func(t *testing.T) {
		then := s.read(t, lh, path+"?at="+url.QueryEscape(between))
		if !bytes.Equal(then.body, scheduled.body) || then.etag != scheduled.etag {
			t.Errorf("at %s = %s %s, want %s %s", between, then.etag, then.body, scheduled.etag, scheduled.body)
		}
	})
	t.Run("after the sequence of its version, the same", func(t *testing.T) {
		then := s.read(t, lh, path+"?seq="+strings.Trim(scheduled.etag, `"`))
		if !bytes.Equal(then.body, scheduled.body) || then.etag != scheduled.etag {
			t.Errorf("seq = %s %s, want %s %s", then.etag, then.body, scheduled.etag, scheduled.body)
		}
	})
	t.Run("now, the flight as it is", func(t *testing.T) {
		now := s.read(t, lh, path+"?at="+url.QueryEscape(moment()))
		if !bytes.Equal(now.body, delayed.body) || now.etag != delayed.etag {
			t.Errorf("now = %s %s, want %s %s", now.etag, now.body, delayed.etag, delayed.body)
		}
	})
	for _, tt := range []struct{ name, at string }{
		{"before it was scheduled, it did not exist", beforeIt},
		{"at the first instant of year 1, it did not exist", "0001-01-01T00:00:00Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "GET", path: path + "?at=" + url.QueryEscape(tt.at), token: lh})
			if e := r.apiError(t); r.status != http.StatusNotFound || !strings.Contains(e.ErrorDescription, "did not exist at") {
				t.Errorf("= %d %s", r.status, r.body)
			}
		})
	}
	t.Run("a stale If-Match is refused and stores nothing", func(t *testing.T) {
		r := s.do(t, request{method: "PATCH", path: path, token: lh, body: map[string]any{"status": "cancelled"}, header: map[string]string{"If-Match": scheduled.etag}})
		if e := r.apiError(t); r.status != http.StatusPreconditionFailed || e.Error != "precondition_failed" {
			t.Errorf("= %d %s", r.status, r.body)
		}
		if now := s.read(t, lh, path); now.etag != delayed.etag || !bytes.Equal(now.body, delayed.body) {
			t.Errorf("after the refusal: %s %s", now.etag, now.body)
		}
	})
	t.Run("the version held answers 304", func(t *testing.T) {
		r := s.do(t, request{method: "GET", path: path, token: lh, header: map[string]string{"If-None-Match": delayed.etag}})
		if r.status != http.StatusNotModified || len(r.body) != 0 || r.header.Get("ETag") != delayed.etag {
			t.Errorf("= %d %q %s", r.status, r.header.Get("ETag"), r.body)
		}
	})
	tests := []struct {
		name, query, ifMatch string
		status               int
		fields               string
	}{
		{"at that is not RFC 3339", "?at=yesterday", "", 400, "at:INVALID_DATE"},
		{"at a date without a time", "?at=2026-01-01", "", 400, "at:INVALID_DATE"},
		{"at in the future", "?at=" + url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339)), "", 400, "at:INVALID_DATE"},
		{"at and seq both", "?at=" + url.QueryEscape(between) + "&seq=1", "", 400, "seq:INVALID_VALUE"},
		{"seq zero", "?seq=0", "", 400, "seq:INVALID_FORMAT"},
		{"seq not a number", "?seq=ten", "", 400, "seq:INVALID_FORMAT"},
		{"If-Match weak", "", `W/` + delayed.etag, 400, ""},
		{"If-Match unquoted", "", strings.Trim(delayed.etag, `"`), 400, ""},
		{"If-Match a list", "", delayed.etag + `, "1"`, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request{method: "GET", path: path + tt.query, token: lh}
			if tt.ifMatch != "" {
				req = request{method: "PATCH", path: path, token: lh, body: map[string]any{"status": "cancelled"}, header: map[string]string{"If-Match": tt.ifMatch}}
			}
			r := s.do(t, req)
			if r.status != tt.status {
				t.Fatalf("= %d %s", r.status, r.body)
			}
			if tt.fields != "" {
				checkFields(t, r, tt.fields)
			} else if e := r.apiError(t); e.Error != "invalid_request" || !strings.Contains(e.ErrorDescription, "If-Match") {
				t.Errorf("= %s", r.body)
			}
		})
	}
	if now := s.read(t, lh, path); now.etag != delayed.etag {
		t.Errorf("the refused changes changed the flight: %s %s", now.etag, now.body)
	}
}

func TestOfTwoChangesNamingTheSameVersionExactlyOneIsStored(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	lh := s.demoToken(t, "demo-airline-lh")
	var f struct{ ID string }
	s.mustCreate(t, lh, "/api/flights", shortFlight("LH1201")).json(t, &f)
	path := "/api/flights/" + f.ID
	base := s.read(t, lh, path)
	statuses := []string{"delayed", "cancelled"}
	results := make([]response, len(statuses))
	var wg sync.WaitGroup
	for i, status := range statuses {
		wg.Go(func() {
			results[i] = s.do(t, request{method: "PATCH", path: path, token: lh, body: map[string]any{"status": status}, header: map[string]string{"If-Match": base.etag}})
		})
	}
	wg.Wait()
	winner := -1
	for i, r := range results {
		switch r.status {
		case http.StatusOK:
			if winner != -1 {
				t.Fatalf("both changes were stored: %s and %s", results[0].body, results[1].body)
			}
			winner = i
		case http.StatusPreconditionFailed:
		default:
			t.Fatalf("%s = %d %s", statuses[i], r.status, r.body)
		}
	}
	if winner == -1 {
		t.Fatalf("neither change was stored: %s, %s", results[0].body, results[1].body)
	}
	now := s.read(t, lh, path)
	if now.etag != results[winner].header.Get("ETag") || !strings.Contains(string(now.body), `"status":"`+statuses[winner]+`"`) {
		t.Errorf("the flight is %s %s, the change stored was %s with ETag %s", now.etag, now.body, statuses[winner], results[winner].header.Get("ETag"))
	}
}

func TestABookingsQuoteAndShipmentReadAtPastMoments(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd)
	var list struct {
		Bookings []struct{ ID, QuoteID string }
	}
	s.do(t, request{method: "GET", path: "/api/bookings?status=confirmed", token: fwd}).json(t, &list)
	if len(list.Bookings) != 1 {
		t.Fatalf("bookings = %+v", list)
	}
	bookingPath, quotePath := "/api/bookings/"+list.Bookings[0].ID, "/api/quotes/"+list.Bookings[0].QuoteID
	confirmed := s.read(t, fwd, bookingPath)
	// The booking reactor accepts the quote moments after it confirms.
	accepted := eventually(t, "the quote accepted", func() versioned { return s.read(t, fwd, quotePath) },
		func(v versioned) bool { return strings.Contains(string(v.body), `"status":"accepted"`) })
	shipmentPath := "/api/shipments/" + awb
	booked := s.read(t, fwd, shipmentPath)
	if booked.etag != `"0"` {
		t.Errorf("a shipment without status events has ETag %s", booked.etag)
	}
	between := moment()

	received := s.do(t, request{method: "POST", path: shipmentPath + "/events", token: lh, header: map[string]string{"If-Match": booked.etag},
		body: map[string]any{"eventType": "RCS", "eventDate": time.Now().UTC().Add(-time.Minute).Format(time.RFC3339), "location": "FRA", "pieces": 2}})
	if received.status != http.StatusCreated || received.header.Get("ETag") == booked.etag {
		t.Fatalf("status event = %d %s (ETag %q)", received.status, received.body, received.header.Get("ETag"))
	}
	stale := s.do(t, request{method: "POST", path: shipmentPath + "/events", token: lh, header: map[string]string{"If-Match": booked.etag},
		body: map[string]any{"eventType": "DEP", "eventDate": time.Now().UTC().Format(time.RFC3339), "location": "FRA"}})
	if stale.status != http.StatusPreconditionFailed {
		t.Errorf("a status event on a stale version = %d %s", stale.status, stale.body)
	}
	if r := s.do(t, request{method: "POST", path: bookingPath + "/cancel", token: fwd, header: map[string]string{"If-Match": accepted.etag}}); r.status != http.StatusPreconditionFailed {
		t.Errorf("cancel naming another resource's version = %d %s", r.status, r.body)
	}
	cancel := s.do(t, request{method: "POST", path: bookingPath + "/cancel", token: fwd, header: map[string]string{"If-Match": confirmed.etag}})
	if cancel.status != http.StatusOK || cancel.header.Get("ETag") == confirmed.etag {
		t.Fatalf("cancel = %d %s", cancel.status, cancel.body)
	}
	if now := s.read(t, fwd, bookingPath); now.etag != cancel.header.Get("ETag") || !strings.Contains(string(now.body), `"status":"cancelled"`) {
		t.Errorf("after the cancel: %s %s", now.etag, now.body)
	}

	for _, tt := range []struct {
		name, path string
		then       versioned
	}{
		{"the booking, confirmed", bookingPath, confirmed},
		{"the quote, accepted", quotePath, accepted},
		{"the shipment, booked, without its status event", shipmentPath, booked},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := s.read(t, fwd, tt.path+"?at="+url.QueryEscape(between))
			if !bytes.Equal(got.body, tt.then.body) || got.etag != tt.then.etag {
				t.Errorf("= %s %s, want %s %s", got.etag, got.body, tt.then.etag, tt.then.body)
			}
		})
	}
	t.Run("another airline sees nothing of the booking at any moment", func(t *testing.T) {
		r := s.do(t, request{method: "GET", path: bookingPath + "?at=" + url.QueryEscape(between), token: s.demoToken(t, "demo-airline-ek")})
		if e := r.apiError(t); r.status != http.StatusNotFound || strings.Contains(e.ErrorDescription, "did not exist") {
			t.Errorf("= %d %s", r.status, r.body)
		}
	})
}

func TestAStockReplyNamingAStaleVersionTakesNoNumbers(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	var req struct{ RequestID string }
	s.mustCreate(t, fwd, "/api/awb-stock/requests", map[string]any{"airlinePrefix": "020", "requestedStock": 5, "validityPeriod": 6}).json(t, &req)
	path := "/api/awb-stock/requests/" + req.RequestID
	pending := s.read(t, fwd, path)
	between := moment()
	reply := map[string]any{"status": "approved", "allocatedStock": 5, "validFrom": today(0), "validTo": today(180)}
	stale := s.do(t, request{method: "PUT", path: "/api/awb-stock/reply/" + req.RequestID, token: lh, body: reply, header: map[string]string{"If-Match": `"1"`}})
	if stale.status != http.StatusPreconditionFailed {
		t.Fatalf("a reply naming a stale version = %d %s", stale.status, stale.body)
	}
	var stock struct{ Stock []any }
	s.do(t, request{method: "GET", path: "/api/awb-stock", token: fwd}).json(t, &stock)
	if now := s.read(t, fwd, path); now.etag != pending.etag || len(stock.Stock) != 0 {
		t.Fatalf("after the refused reply: %s %s, stock %v", now.etag, now.body, stock.Stock)
	}
	approved := s.do(t, request{method: "PUT", path: "/api/awb-stock/reply/" + req.RequestID, token: lh, body: reply, header: map[string]string{"If-Match": pending.etag}})
	if approved.status != http.StatusOK || approved.header.Get("ETag") == pending.etag {
		t.Fatalf("a reply naming the current version = %d %s", approved.status, approved.body)
	}
	if now := s.read(t, fwd, path); now.etag != approved.header.Get("ETag") || !strings.Contains(string(now.body), `"status":"approved"`) {
		t.Errorf("after the reply: %s %s, the reply answered ETag %s", now.etag, now.body, approved.header.Get("ETag"))
	}
	if then := s.read(t, fwd, path+"?at="+url.QueryEscape(between)); !bytes.Equal(then.body, pending.body) || then.etag != pending.etag {
		t.Errorf("before the reply = %s %s, want %s %s", then.etag, then.body, pending.etag, pending.body)
	}
}

func TestIfMatchTellsNothingOfABookingTheCallerMayNotSee(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, ek := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-ek")
	bookedShipment(t, s, fwd)
	var list struct{ Bookings []struct{ ID string } }
	s.do(t, request{method: "GET", path: "/api/bookings", token: fwd}).json(t, &list)
	if len(list.Bookings) != 1 {
		t.Fatalf("bookings = %+v", list)
	}
	for _, tt := range []struct{ name, token, id string }{
		{"another airline's cancel of the forwarder's booking", ek, list.Bookings[0].ID},
		{"a cancel of a booking that does not exist", fwd, "no-such-booking"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "POST", path: "/api/bookings/" + tt.id + "/cancel", token: tt.token, header: map[string]string{"If-Match": `"1"`}})
			if e := r.apiError(t); r.status != http.StatusNotFound || strings.Contains(e.ErrorDescription, "version") {
				t.Errorf("= %d %s, want 404 without a version", r.status, r.body)
			}
		})
	}
}

// A sequence the stream has not reached is refused, as a time to come
// is: what a resource is at it is not known yet, and the answer would
// change as the stream grows.
func TestASequenceThatTheStreamHasNotReachedIsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	lh := s.demoToken(t, "demo-airline-lh")
	var f struct{ ID string }
	created := s.mustCreate(t, lh, "/api/flights", shortFlight("LH1300"))
	created.json(t, &f)
	r := s.do(t, request{method: "GET", path: "/api/flights/" + f.ID + "?seq=18446744073709551615", token: lh})
	if e := r.apiError(t); r.status != http.StatusBadRequest || len(e.ValidationErrors) != 1 || e.ValidationErrors[0].Field != "seq" {
		t.Errorf("= %d %s, want 400 on seq", r.status, r.body)
	}
	if then := s.read(t, lh, "/api/flights/"+f.ID+"?seq="+strings.Trim(created.header.Get("ETag"), `"`)); then.etag != created.header.Get("ETag") {
		t.Errorf("at its own version the flight has ETag %s, created with %s", then.etag, created.header.Get("ETag"))
	}
}

// shortFlight is the body of a flight FRA-LHR in five days, numbered
// flightNumber.
func shortFlight(flightNumber string) map[string]any {
	return map[string]any{"flightNumber": flightNumber, "origin": "FRA", "destination": "LHR",
		"departureDate": today(5), "departureTime": "09:00", "arrivalDate": today(5), "arrivalTime": "10:10", "aircraftType": "A333"}
}

// An event this version cannot decode (a newer version's, during a
// rolling upgrade) is skipped by the live read models; a past state, folded
// by the same code, reads as the live one did: it skips it too, rather than
// fail the whole read.
func TestAPastStateSkipsAnEventThisVersionCannotDecodeAsTheLiveOneDid(t *testing.T) {
	t.Parallel()
	natsURL := natstest.StartServer(t, 0)
	r := startReplica(t.TempDir(), map[string]string{"CARGO_NATS_URL": natsURL, "CARGO_NATS_REPLICAS": "1", "CARGO_DEMO": "true",
		"CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey})
	defer func() { r.stop(); <-r.done }()
	s := &testServer{base: r.base(t), doc: loadDoc(t)}
	lh := s.demoToken(t, "demo-airline-lh")
	for i, unreadable := range unreadableFlightEvents {
		t.Run(unreadable.name, func(t *testing.T) {
			var f struct{ ID string }
			created := s.mustCreate(t, lh, "/api/flights", shortFlight(fmt.Sprint("LH150", i)))
			created.json(t, &f)
			unreadable.publish(t, natsURL, f.ID, "LH1599")
			// The live flight once the replica has passed the unknown event: a
			// write after it is answered once applied.
			s.mustCreate(t, lh, "/api/flights", shortFlight(fmt.Sprint("LH151", i)))
			live := s.read(t, lh, "/api/flights/"+f.ID)
			for _, query := range []string{"?at=" + url.QueryEscape(moment()), "?seq=" + strings.Trim(live.etag, `"`)} {
				got := s.do(t, request{method: "GET", path: "/api/flights/" + f.ID + query, token: lh})
				if got.status != http.StatusOK || !bytes.Equal(got.body, live.body) || got.header.Get("ETag") != live.etag {
					t.Errorf("%s = %d %s %s, want the live flight %s %s", query, got.status, got.header.Get("ETag"), got.body, live.etag, live.body)
				}
			}
			// A change is decided on every event of the flight, which this
			// version cannot: a 503 to retry (on a replica of the newer
			// version), not a 500, and nothing is stored.
			patched := s.do(t, request{method: "PATCH", path: "/api/flights/" + f.ID, token: lh, body: map[string]any{"status": "delayed"}})
			if e := patched.apiError(t); patched.status != http.StatusServiceUnavailable || e.Error != "service_unavailable" || patched.header.Get("Retry-After") == "" {
				t.Errorf("a change of the flight = %d %s", patched.status, patched.body)
			}
			if now := s.read(t, lh, "/api/flights/"+f.ID); now.etag != live.etag {
				t.Errorf("the refused change changed the flight: %s %s", now.etag, now.body)
			}
		})
	}
}
