package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// receiver is a webhook endpoint that verifies every delivery with the
// official Standard Webhooks library.
type receiver struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	verifier *standardwebhooks.Webhook
	fail     int // answer 500 to this many deliveries first
	status   int // answer this instead of 204, if set
	got      []delivery
	attempts map[string]int // webhook-id → deliveries seen
}

type delivery struct {
	ID          string
	Correlation string // the Cargo-Correlation-Id header
	EventID     string // the Cargo-Event-Id header
	Type        string
	Data        map[string]any
}

// byType indexes deliveries by event name: deliveries may arrive in any
// order.
func byType(deliveries []delivery) map[string]delivery {
	m := map[string]delivery{}
	for _, d := range deliveries {
		m[d.Type] = d
	}
	return m
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{t: t, attempts: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if rc.verifier == nil || rc.verifier.Verify(body, r.Header) != nil {
			t.Errorf("a delivery does not verify: %v %s", r.Header, body)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id := r.Header.Get("webhook-id")
		rc.attempts[id]++
		if rc.fail > 0 {
			rc.fail--
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if rc.status != 0 {
			w.WriteHeader(rc.status)
			return
		}
		var d delivery
		json.Unmarshal(body, &d)
		d.ID, d.Correlation, d.EventID = id, r.Header.Get("Cargo-Correlation-Id"), r.Header.Get("Cargo-Event-Id")
		rc.got = append(rc.got, d)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) trust(secret string, plain bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var err error
	if plain {
		rc.verifier, err = standardwebhooks.NewWebhookRaw([]byte(secret))
	} else {
		rc.verifier, err = standardwebhooks.NewWebhook(secret)
	}
	if err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *receiver) received() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

func (s *testServer) subscribe(t *testing.T, token string, rc *receiver, events []string, secret string) string {
	body := map[string]any{"url": rc.srv.URL + "/hooks", "events": events}
	if secret != "" {
		body["secret"] = secret
	}
	var created struct {
		WebhookID, Secret, URL string
		Events                 []string
		CreatedAt              time.Time
	}
	s.mustCreate(t, token, "/api/webhooks", body).json(t, &created)
	if created.WebhookID == "" || created.URL != rc.srv.URL+"/hooks" || created.CreatedAt.IsZero() || len(created.Events) != len(events) {
		t.Fatalf("registration = %+v", created)
	}
	switch {
	case secret == "" && created.Secret == "":
		t.Fatal("no generated secret returned")
	case secret == "":
		rc.trust(created.Secret, false)
	case created.Secret != "":
		t.Error("a chosen secret was echoed back")
	}
	return created.WebhookID
}

// waitForWebhookDisabled waits until the webhook reads as disabled: a
// receiver's 410 disables it in the background, after the delivery, not
// within the request that caused it.
func (s *testServer) waitForWebhookDisabled(t *testing.T, token, id string) {
	t.Helper()
	eventually(t, "the webhook disabled", func() string {
		var w struct{ Status string }
		s.do(t, request{method: "GET", path: "/api/webhooks/" + id, token: token}).json(t, &w)
		return w.Status
	}, func(st string) bool { return st == "disabled" })
}

// deliveryAttempt is one attempt in a webhook's delivery log.
type deliveryAttempt struct {
	Attempt    int
	StatusCode *int
	Outcome    string
	LatencyMs  int
}

// deliveredAttempts waits until the delivery log of webhook id says its
// first delivery was delivered, when no attempt is left to come, and
// returns that delivery's attempts.
func (s *testServer) deliveredAttempts(t *testing.T, token, id string) []deliveryAttempt {
	t.Helper()
	var log struct {
		Deliveries []struct {
			Status   string
			Attempts []deliveryAttempt
		}
	}
	eventually(t, "the delivery log's delivered", func() string {
		s.do(t, request{method: "GET", path: "/api/webhooks/" + id + "/deliveries", token: token}).json(t, &log)
		if len(log.Deliveries) == 0 {
			return ""
		}
		return log.Deliveries[0].Status
	}, func(st string) bool { return st == "delivered" })
	return log.Deliveries[0].Attempts
}

// A subscription deleted is gone, but its delivery log is not: its
// organisation and admins still read what was sent, and nobody else.
func TestADeletedWebhooksDeliveryLogStaysReadableByItsOrganisationAndAdmins(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, admin, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-admin"), s.demoToken(t, "demo-airline-lh")
	id := s.subscribe(t, fwd, newReceiver(t), []string{"quote.created"}, "")
	createQuote(t, s, fwd, rfq())
	s.deliveredAttempts(t, fwd, id)
	if r := s.do(t, request{method: "DELETE", path: "/api/webhooks/" + id, token: fwd}); r.status != http.StatusNoContent {
		t.Fatalf("delete = %d %s", r.status, r.body)
	}

	for _, tt := range []struct {
		name   string
		req    request
		status int
	}{
		{"the subscription", request{method: "GET", path: "/api/webhooks/" + id, token: fwd}, http.StatusNotFound},
		{"a ping", request{method: "POST", path: "/api/webhooks/" + id + "/ping", token: fwd}, http.StatusNotFound},
		{"its organisation's read of the log", request{method: "GET", path: "/api/webhooks/" + id + "/deliveries", token: fwd}, http.StatusOK},
		{"an admin's", request{method: "GET", path: "/api/webhooks/" + id + "/deliveries", token: admin}, http.StatusOK},
		{"an airline's", request{method: "GET", path: "/api/webhooks/" + id + "/deliveries", token: lh}, http.StatusNotFound},
	} {
		r := s.do(t, tt.req)
		if r.status != tt.status {
			t.Errorf("%s after the delete = %d %s, want %d", tt.name, r.status, r.body, tt.status)
			continue
		}
		if r.status == http.StatusOK {
			var log struct {
				Deliveries []struct{ EventName, Status string }
			}
			r.json(t, &log)
			if len(log.Deliveries) != 1 || log.Deliveries[0].EventName != "quote.created" || log.Deliveries[0].Status != "delivered" {
				t.Errorf("%s after the delete = %+v, want the quote.created delivered", tt.name, log.Deliveries)
			}
		}
	}
}

func TestWebhooksAreSignedAndScoped(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	mine := newReceiver(t)
	s.subscribe(t, fwd, mine, []string{"quote.*"}, "")
	// A plain-string secret, verified the documented way.
	plain := newReceiver(t)
	plain.trust("a plain shared secret", true)
	s.subscribe(t, fwd, plain, []string{"quote.created"}, "a plain shared secret")
	// Another forwarder must not hear of our quotes.
	admin := s.demoToken(t, "demo-admin")
	s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "other-fwd", "name": "Other", "role": "forwarder"})
	s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "other-fwd", "clientId": "other", "clientSecret": "other-secret-long"})
	theirs := newReceiver(t)
	other := s.token(t, "other", "other-secret-long")
	s.subscribe(t, other, theirs, []string{"*"}, "")

	q := createQuote(t, s, fwd, rfq())
	got := eventually(t, "quote.created and quote.priced", mine.received, func(d []delivery) bool { return len(d) >= 2 })
	if d := byType(got); d["quote.created"].Data["id"] != q.ID || d["quote.created"].Data["status"] != "pending" ||
		d["quote.priced"].Data["status"] != "priced" {
		t.Errorf("deliveries = %+v", got)
	}
	plainOne := eventually(t, "plain-secret delivery", plain.received, func(d []delivery) bool { return len(d) == 1 })[0]
	// The two subscriptions' deliveries of one event are two messages
	// (webhook-id) of one event (Cargo-Event-Id), which a receiver
	// subscribed twice drops the second of.
	if created := byType(got)["quote.created"]; created.EventID == "" || created.EventID != plainOne.EventID || created.ID == plainOne.ID {
		t.Errorf("quote.created to two subscriptions: event ids %q and %q, webhook-ids %q and %q; want one event, two messages",
			created.EventID, plainOne.EventID, created.ID, plainOne.ID)
	}
	// The other forwarder's own quote, filed after ours was delivered,
	// reaches it: by then the dispatcher has long been past ours, and
	// what the other forwarder heard is its own quote only.
	theirQuote := createQuote(t, s, other, rfq())
	heard := eventually(t, "the other forwarder's own quote.created and quote.priced", theirs.received, func(d []delivery) bool { return len(d) >= 2 })
	for _, d := range heard {
		if d.Data["id"] != theirQuote.ID {
			t.Errorf("another forwarder received %s of quote %v, not its own %s", d.Type, d.Data["id"], theirQuote.ID)
		}
	}
}

// An airline delays, then cancels its flight: the forwarder booked on it
// and the airline hear of both, signed, each change as it made the
// flight; a forwarder with no booking on it hears of neither, though it
// subscribes to everything.
func TestAFlightsStatusGoesToItsAirlineAndTheForwardersBookedOnIt(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh, admin := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh"), s.demoToken(t, "demo-admin")
	s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "other-fwd", "name": "Other", "role": "forwarder"})
	s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "other-fwd", "clientId": "other", "clientSecret": "other-secret-long"})
	other := s.token(t, "other", "other-secret-long")
	flight := raceFlight(t, s)
	b := confirmedOn(t, s, fwd, flight)
	booked, airline, unbooked := newReceiver(t), newReceiver(t), newReceiver(t)
	s.subscribe(t, fwd, booked, []string{"flight.*"}, "")
	s.subscribe(t, lh, airline, []string{"flight.status"}, "")
	s.subscribe(t, other, unbooked, []string{"*"}, "")

	for _, status := range []string{"delayed", "cancelled"} {
		if r := s.do(t, request{method: "PATCH", path: "/api/flights/" + flight["id"].(string), token: lh, body: map[string]any{"status": status}}); r.status != http.StatusOK {
			t.Fatalf("flight %s = %d %s", status, r.status, r.body)
		}
	}
	for _, tt := range []struct {
		name     string
		rc       *receiver
		bookings []any // the bookingIds it is sent
	}{
		{"the forwarder booked on the flight", booked, []any{b.ID}},
		{"the flight's airline", airline, nil},
	} {
		got := eventually(t, tt.name+"'s two flight.status", tt.rc.received, func(d []delivery) bool { return len(d) >= 2 })
		previous := map[string]any{}
		for _, d := range got {
			ids, _ := d.Data["bookingIds"].([]any)
			if d.Type != "flight.status" || !strings.HasPrefix(d.ID, "msg_") || d.Data["id"] != flight["id"] || d.Data["departureTime"] != "11:00" ||
				d.Data["changedAt"] == nil || !slices.Equal(ids, tt.bookings) {
				t.Errorf("%s received %s %s: %v, want flight.status of %s with bookingIds %v", tt.name, d.ID, d.Type, d.Data, flight["id"], tt.bookings)
			}
			previous[d.Data["status"].(string)] = d.Data["previousStatus"]
		}
		if len(got) != 2 || previous["delayed"] != "scheduled" || previous["cancelled"] != "delayed" {
			t.Errorf("%s received the statuses (from the previous) %v, want delayed from scheduled and cancelled from delayed", tt.name, previous)
		}
	}
	// The other forwarder's own quote, filed once both changes were
	// delivered, reaches it: by then the dispatcher is past them, and it
	// heard of its quote alone.
	q := createQuote(t, s, other, rfq())
	heard := eventually(t, "the other forwarder's quote.created", unbooked.received, func(d []delivery) bool {
		return slices.ContainsFunc(d, func(d delivery) bool { return d.Type == "quote.created" })
	})
	for _, d := range heard {
		if d.Type == "flight.status" || d.Data["id"] != q.ID {
			t.Errorf("a forwarder with no booking on the flight received %s: %v", d.Type, d.Data)
		}
	}
}

// An airline flies its flight with another aircraft, then offers less
// than is booked on it: the flight shows each, takes no more bookings
// once full, and the forwarder booked on it and the airline hear of both
// with what the flight had before; the aircraft on record sent again
// changes nothing. A change with a status, a bad type, a type whose
// capacity is unknown, a forwarder's, and one after the flight is
// cancelled, are refused, and nothing is recorded.
func TestAnAirlineFliesAFlightWithAnotherAircraft(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	flight := raceFlight(t, s) // B77F, 1000 kg, 100 m³
	path := "/api/flights/" + flight["id"].(string)
	b := confirmedOn(t, s, fwd, flight)
	booked, airline := newReceiver(t), newReceiver(t)
	s.subscribe(t, fwd, booked, []string{"flight.aircraft"}, "")
	s.subscribe(t, lh, airline, []string{"flight.*"}, "")

	s.runCases(t, "PATCH", []apiCase{
		{"a status with an aircraft", lh, path, map[string]any{"status": "delayed", "aircraftType": "B744F"}, 400, "status:INVALID_VALUE"},
		{"an aircraft type that is none", lh, path, map[string]any{"aircraftType": "Boeing 777"}, 400, "aircraftType:INVALID_FORMAT"},
		{"a type whose capacity is not known", lh, path, map[string]any{"aircraftType": "AN124"}, 400, "capacityKg:REQUIRED capacityM3:REQUIRED"},
		{"a capacity out of range", lh, path, map[string]any{"capacityKg": -5}, 400, "capacityKg:INVALID_RANGE"},
		{"a forwarder's", fwd, path, map[string]any{"aircraftType": "B744F"}, 403, ""},
	})
	aircraft := func() string {
		var f struct {
			AircraftType string
			CapacityKg   float64
		}
		s.do(t, request{method: "GET", path: path, token: lh}).json(t, &f)
		return fmt.Sprint(f.AircraftType, " ", f.CapacityKg, " kg")
	}
	if got := aircraft(); got != "B77F 1000 kg" {
		t.Fatalf("after the refused changes the flight has %s, want B77F with 1000 kg as published", got)
	}

	change := func(body map[string]any) (map[string]any, string) {
		t.Helper()
		r := s.do(t, request{method: "PATCH", path: path, token: lh, body: body})
		if r.status != http.StatusOK {
			t.Fatalf("PATCH %v = %d %s", body, r.status, r.body)
		}
		var f map[string]any
		r.json(t, &f)
		return f, r.header.Get("ETag")
	}
	swapped, etag := change(map[string]any{"aircraftType": "a359", "capacityKg": 800, "capacityM3": 50})
	if swapped["aircraftType"] != "A359" || swapped["capacityKg"] != 800.0 || swapped["capacityM3"] != 50.0 {
		t.Errorf("the flight swapped to an A359 is %v", swapped)
	}
	if _, again := change(map[string]any{"aircraftType": "A359", "capacityKg": 800}); again != etag {
		t.Errorf("the aircraft on record sent again moved the ETag from %s to %s", etag, again)
	}
	change(map[string]any{"capacityKg": 1})
	var capacity struct {
		Capacity []struct {
			ProjectedWeight, AvailableWeight float64
		}
	}
	s.do(t, request{method: "GET", path: "/api/capacity?flightNumber=LH8200&date=" + flight["date"].(string), token: lh}).json(t, &capacity)
	if len(capacity.Capacity) != 1 || capacity.Capacity[0].ProjectedWeight <= 1 || capacity.Capacity[0].AvailableWeight != 0 {
		t.Errorf("the flight offering 1 kg shows %+v, want its booking's weight projected and nothing left", capacity.Capacity)
	}

	for _, tt := range []struct {
		name     string
		rc       *receiver
		bookings []any
	}{
		{"the forwarder booked on the flight", booked, []any{b.ID}},
		{"the flight's airline", airline, nil},
	} {
		// The repeat in between sent nothing: the second delivery is
		// the change from 800 kg to 1.
		got := eventually(t, tt.name+"'s two flight.aircraft", tt.rc.received, func(d []delivery) bool { return len(d) >= 2 })
		var seen []string
		for _, d := range got {
			ids, _ := d.Data["bookingIds"].([]any)
			if d.Type != "flight.aircraft" || d.Data["id"] != flight["id"] || d.Data["changedAt"] == nil || !slices.Equal(ids, tt.bookings) {
				t.Errorf("%s received %s: %v, want flight.aircraft of %s with bookingIds %v", tt.name, d.Type, d.Data, flight["id"], tt.bookings)
			}
			seen = append(seen, fmt.Sprint(d.Data["previousAircraftType"], " ", d.Data["previousCapacityKg"], " → ",
				d.Data["aircraftType"], " ", d.Data["capacityKg"]))
		}
		if want := []string{"B77F 1000 → A359 800", "A359 800 → A359 1"}; !slices.Equal(seen, want) {
			t.Errorf("%s received the changes %q, want %q", tt.name, seen, want)
		}
	}

	// The timetable sent again, as published, changes nothing: the
	// flight keeps the aircraft it flies now.
	date := flight["date"].(string)
	if r := s.do(t, request{method: "POST", path: "/api/flights", token: lh, body: map[string]any{"flightNumber": "LH8200", "origin": "FRA",
		"destination": "MIA", "departureDate": date, "departureTime": "11:00", "arrivalDate": date, "arrivalTime": "15:30",
		"aircraftType": "B77F", "capacityKg": 1000, "capacityM3": 100}}); r.status >= 300 {
		t.Errorf("the flight published again as it was = %d %s", r.status, r.body)
	}
	if got := aircraft(); got != "A359 1 kg" {
		t.Errorf("after the timetable was sent again the flight has %s, want the A359 with 1 kg it flies now", got)
	}

	if r := s.do(t, request{method: "PATCH", path: path, token: lh, body: map[string]any{"status": "cancelled"}}); r.status != http.StatusOK {
		t.Fatalf("cancelling the flight = %d %s", r.status, r.body)
	}
	if r := s.do(t, request{method: "PATCH", path: path, token: lh, body: map[string]any{"capacityKg": 800}}); r.status != http.StatusConflict {
		t.Errorf("another capacity on the cancelled flight = %d %s, want 409", r.status, r.body)
	}
}

// An airline delays its flight with an estimate of its departure and
// arrival: the flight shows it, and the forwarder booked on it hears of
// it with the estimate; a second delay without one withdraws it, and its
// delivery carries none. An estimate that is no delay, or too long a one,
// or with another status, is refused field by field, and nothing is
// recorded.
func TestADelayTellsTheFlightsEstimatedDepartureAndArrival(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	flight := raceFlight(t, s)
	path := "/api/flights/" + flight["id"].(string)
	var scheduled struct{ DepartsAt time.Time }
	s.do(t, request{method: "GET", path: path, token: fwd}).json(t, &scheduled)
	b := confirmedOn(t, s, fwd, flight)
	booked := newReceiver(t)
	s.subscribe(t, fwd, booked, []string{"flight.status"}, "")
	at := func(d time.Duration) string { return scheduled.DepartsAt.Add(d).Format(time.RFC3339) }

	delay := func(fields ...any) map[string]any {
		body := map[string]any{"status": "delayed"}
		for i := 0; i+1 < len(fields); i += 2 {
			body[fields[i].(string)] = fields[i+1]
		}
		return body
	}
	s.runCases(t, "PATCH", []apiCase{
		{"a departure that is no date-time", lh, path, delay("estimatedDepartsAt", "in two hours"), 400, "estimatedDepartsAt:INVALID_DATE"},
		{"a departure as a number", lh, path, delay("estimatedDepartsAt", 1782900000), 400, "estimatedDepartsAt:INVALID_TYPE"},
		{"a departure before the scheduled one", lh, path, delay("estimatedDepartsAt", at(-time.Minute)), 400, "estimatedDepartsAt:INVALID_DATE"},
		{"a departure 73 hours late", lh, path, delay("estimatedDepartsAt", at(73*time.Hour)), 400, "estimatedDepartsAt:INVALID_DATE"},
		{"an arrival alone", lh, path, delay("estimatedArrivesAt", at(10*time.Hour)), 400, "estimatedDepartsAt:REQUIRED"},
		{"an arrival before the departure", lh, path, delay("estimatedDepartsAt", at(2*time.Hour), "estimatedArrivesAt", at(time.Hour)), 400,
			"estimatedArrivesAt:INVALID_VALUE"},
		{"an arrival a day after the departure", lh, path, delay("estimatedDepartsAt", at(2*time.Hour), "estimatedArrivesAt", at(26*time.Hour)), 400,
			"estimatedArrivesAt:INVALID_VALUE"},
		{"an estimate of a cancellation", lh, path, map[string]any{"status": "cancelled", "estimatedDepartsAt": at(2 * time.Hour)}, 400,
			"estimatedDepartsAt:INVALID_VALUE"},
	})

	estimated := map[string]any{"estimatedDepartsAt": at(150 * time.Minute), "estimatedArrivesAt": at(12 * time.Hour)}
	r := s.do(t, request{method: "PATCH", path: path, token: lh, body: delay("estimatedDepartsAt", estimated["estimatedDepartsAt"],
		"estimatedArrivesAt", estimated["estimatedArrivesAt"])})
	if r.status != http.StatusOK {
		t.Fatalf("a delay with an estimate = %d %s", r.status, r.body)
	}
	shown := func() map[string]any {
		var f map[string]any
		s.do(t, request{method: "GET", path: path, token: fwd}).json(t, &f)
		return f
	}
	for _, key := range []string{"estimatedDepartsAt", "estimatedArrivesAt"} {
		if f := shown(); f["status"] != "delayed" || f[key] != estimated[key] {
			t.Errorf("the delayed flight shows %s %v, want %v: %v", key, f[key], estimated[key], f)
		}
	}
	if r := s.do(t, request{method: "PATCH", path: path, token: lh, body: delay()}); r.status != http.StatusOK {
		t.Fatalf("a delay without an estimate = %d %s", r.status, r.body)
	}
	if f := shown(); f["estimatedDepartsAt"] != nil || f["estimatedArrivesAt"] != nil {
		t.Errorf("a delay without an estimate left the flight showing %v and %v", f["estimatedDepartsAt"], f["estimatedArrivesAt"])
	}

	got := eventually(t, "the forwarder's two flight.status", booked.received, func(d []delivery) bool { return len(d) >= 2 })
	for _, d := range got {
		want := map[string]any{"estimatedDepartsAt": nil, "estimatedArrivesAt": nil} // the second delay's
		if d.Data["previousStatus"] == "scheduled" {
			want = estimated
		}
		ids, _ := d.Data["bookingIds"].([]any)
		if d.Type != "flight.status" || d.Data["status"] != "delayed" || !slices.Equal(ids, []any{b.ID}) ||
			d.Data["estimatedDepartsAt"] != want["estimatedDepartsAt"] || d.Data["estimatedArrivesAt"] != want["estimatedArrivesAt"] {
			t.Errorf("the forwarder received %s %v, want a delay with bookingIds [%s] and the estimate %v", d.Type, d.Data, b.ID, want)
		}
	}
	if len(got) != 2 {
		t.Errorf("the forwarder received %d deliveries, want the two delays: %v", len(got), got)
	}
}

func TestWebhookRetriesAndRedeliveriesWithTheSameID(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	rc := newReceiver(t)
	rc.fail = 3 // down for the first three attempts
	id := s.subscribe(t, fwd, rc, []string{"quote.created"}, "")
	createQuote(t, s, fwd, rfq())
	got := eventually(t, "the delivery", rc.received, func(d []delivery) bool { return len(d) == 1 })
	rc.mu.Lock()
	tries := rc.attempts[got[0].ID]
	rc.mu.Unlock()
	if tries != 4 {
		t.Errorf("webhook-id %s came %d times, want 4 (3 failures, then the delivery)", got[0].ID, tries)
	}
	a := s.deliveredAttempts(t, fwd, id)
	if len(a) != 4 || a[0].Outcome != "retrying" || *a[0].StatusCode != 500 || a[3].Outcome != "delivered" || a[3].Attempt != 4 {
		t.Errorf("attempts = %+v", a)
	}
	// A redelivery by hand, and one of it, are the same message again:
	// a new delivery of the log, under the first one's webhook-id.
	redeliver := func(deliveryID string) string {
		var queued struct{ DeliveryID string }
		r := s.do(t, request{method: "POST", path: "/api/webhooks/" + id + "/deliveries/" + deliveryID + "/redeliver", token: fwd})
		if r.status != http.StatusAccepted {
			t.Fatalf("redeliver = %d %s", r.status, r.body)
		}
		r.json(t, &queued)
		return queued.DeliveryID
	}
	logged := func() map[string]string { // delivery id → its messageId
		var log struct {
			Deliveries []struct{ DeliveryID, MessageID string }
		}
		s.do(t, request{method: "GET", path: "/api/webhooks/" + id + "/deliveries", token: fwd}).json(t, &log)
		ids := map[string]string{}
		for _, d := range log.Deliveries {
			ids[d.DeliveryID] = d.MessageID
		}
		return ids
	}
	first := ""
	for deliveryID, messageID := range logged() {
		first = deliveryID
		if messageID != got[0].ID {
			t.Errorf("the log's messageId %s, the receiver's webhook-id %s", messageID, got[0].ID)
		}
	}
	again := redeliver(first)
	eventually(t, "the redelivery in the log", logged, func(ids map[string]string) bool { return ids[again] != "" })
	redeliver(again)
	got = eventually(t, "the redelivery and the redelivery of it", rc.received, func(d []delivery) bool { return len(d) == 3 })
	if got[1].ID != got[0].ID || got[2].ID != got[0].ID || got[1].Type != "quote.created" {
		t.Errorf("webhook-ids of the delivery and its redeliveries: %s %s %s (%s)", got[0].ID, got[1].ID, got[2].ID, got[1].Type)
	}
	ids := eventually(t, "both redeliveries in the log", logged, func(ids map[string]string) bool { return len(ids) == 3 })
	for deliveryID, messageID := range ids {
		if messageID != got[0].ID {
			t.Errorf("delivery %s logged with messageId %s, want %s", deliveryID, messageID, got[0].ID)
		}
	}
	// A ping arrives too, a message of its own.
	if r := s.do(t, request{method: "POST", path: "/api/webhooks/" + id + "/ping", token: fwd}); r.status != http.StatusAccepted {
		t.Fatalf("ping = %d %s", r.status, r.body)
	}
	ping := eventually(t, "the ping", rc.received, func(d []delivery) bool { return len(d) == 4 && d[3].Type == "webhook.ping" })
	if ping[3].ID == got[0].ID {
		t.Errorf("the ping came under the quote's webhook-id %s", got[0].ID)
	}
	// The audit log says who asked for the redeliveries and the ping: the
	// forwarder; the delivery of the event itself is the dispatcher's.
	askedBy := func(subject string) map[string]bool {
		var log struct{ Logs []struct{ ResourceID string } }
		s.do(t, request{method: "GET", path: "/api/audit-logs?resource=delivery&limit=100&userId=" + subject, token: fwd}).json(t, &log)
		ids := map[string]bool{}
		for _, e := range log.Logs {
			ids[e.ResourceID] = true
		}
		return ids
	}
	byForwarder := eventually(t, "the redeliveries and the ping in the audit log", func() map[string]bool { return askedBy("client:demo-forwarder") },
		func(ids map[string]bool) bool { return len(ids) == 3 })
	if !byForwarder[again] || byForwarder[first] || !askedBy("reactor:webhooks")[first] {
		t.Errorf("deliveries the forwarder asked for: %v, want the redeliveries (%s among them) and the ping, not %s, the dispatcher's", byForwarder, again, first)
	}
}

func TestWebhookDeliveryAcrossARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, map[string]string{"CARGO_WEBHOOK_RETRY_SCHEDULE": "1s,1s,1s,1s,1s"})
	fwd := s.demoToken(t, "demo-forwarder")
	rc := newReceiver(t)
	rc.fail = 1
	id := s.subscribe(t, fwd, rc, []string{"quote.created"}, "")
	createQuote(t, s, fwd, rfq())
	eventually(t, "the first, failed attempt", func() int {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return len(rc.attempts)
	}, func(n int) bool { return n == 1 })
	s.stop() // mid-retry

	s = startServer(t, dir, map[string]string{"CARGO_WEBHOOK_RETRY_SCHEDULE": "1s,1s,1s,1s,1s"})
	fwd = s.demoToken(t, "demo-forwarder")
	a := s.deliveredAttempts(t, fwd, id)
	if got := rc.received(); len(got) != 1 || got[0].Type != "quote.created" {
		t.Errorf("received %+v, want quote.created once", got)
	}
	if len(a) != 2 || a[0].Outcome != "retrying" || a[1].Outcome != "delivered" {
		t.Errorf("attempts = %+v, want one failed before the restart and one delivered after", a)
	}
}

func TestWebhookRegistration(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_WEBHOOK_ALLOW_PRIVATE": "false"})
	fwd := s.demoToken(t, "demo-forwarder")
	tests := []struct {
		name   string
		body   map[string]any
		fields string
	}{
		{"loopback", map[string]any{"url": "http://127.0.0.1/", "events": []string{"*"}}, "url:URL_NOT_ALLOWED"},
		{"metadata", map[string]any{"url": "http://169.254.169.254/", "events": []string{"*"}}, "url:URL_NOT_ALLOWED"},
		{"private", map[string]any{"url": "http://10.0.0.1/", "events": []string{"*"}}, "url:URL_NOT_ALLOWED"},
		{"not http", map[string]any{"url": "ftp://x", "events": []string{"*"}}, "url:INVALID_FORMAT"},
		{"port out of range", map[string]any{"url": "https://192.0.2.1:99999/", "events": []string{"*"}}, "url:INVALID_FORMAT"},
		{"port 0", map[string]any{"url": "https://192.0.2.1:0/", "events": []string{"*"}}, "url:INVALID_FORMAT"},
		{"a port and no host", map[string]any{"url": "http://:8080/", "events": []string{"*"}}, "url:INVALID_FORMAT"},
		{"unknown event", map[string]any{"url": "https://192.0.2.1/", "events": []string{"quote.exploded"}}, "events[0]:INVALID_VALUE"},
		{"no events", map[string]any{"url": "https://192.0.2.1/"}, "events:REQUIRED"},
		{"short secret", map[string]any{"url": "https://192.0.2.1/", "events": []string{"booking.*"}, "secret": "short"}, "secret:INVALID_FORMAT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkFields(t, s.do(t, request{method: "POST", path: "/api/webhooks", token: fwd, body: tt.body}), tt.fields)
		})
	}
	// A public address with a pattern is fine; list, read and delete it.
	var created struct{ WebhookID string }
	s.mustCreate(t, fwd, "/api/webhooks", map[string]any{"url": "https://192.0.2.1/hooks", "events": []string{"booking.*", "stock.low"}}).json(t, &created)
	var list struct {
		Webhooks []struct{ WebhookID, Status string }
	}
	s.do(t, request{method: "GET", path: "/api/webhooks", token: fwd}).json(t, &list)
	if len(list.Webhooks) != 1 || list.Webhooks[0].Status != "active" {
		t.Errorf("list = %+v", list)
	}
	// Twenty-five subscriptions an organisation may have, no more.
	for range 24 {
		s.mustCreate(t, fwd, "/api/webhooks", map[string]any{"url": "https://192.0.2.1:8443/hooks", "events": []string{"quote.*"}})
	}
	if r := s.do(t, request{method: "POST", path: "/api/webhooks", token: fwd, body: map[string]any{"url": "https://192.0.2.1/", "events": []string{"*"}}}); r.status != 409 {
		t.Errorf("a 26th webhook = %d %s", r.status, r.body)
	}
	if r := s.do(t, request{method: "GET", path: "/api/webhooks/" + created.WebhookID, token: s.demoToken(t, "demo-airline-lh")}); r.status != 404 {
		t.Errorf("another organisation reads the webhook: %d", r.status)
	}
	if r := s.do(t, request{method: "DELETE", path: "/api/webhooks/" + created.WebhookID, token: fwd}); r.status != 204 {
		t.Errorf("delete = %d", r.status)
	}
	if r := s.do(t, request{method: "GET", path: "/api/webhooks/" + created.WebhookID, token: fwd}); r.status != 404 {
		t.Errorf("a deleted webhook = %d", r.status)
	}
}

func TestGoneDisablesTheWebhook(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	rc := newReceiver(t)
	rc.status = http.StatusGone
	id := s.subscribe(t, fwd, rc, []string{"quote.created"}, "")
	createQuote(t, s, fwd, rfq())
	s.waitForWebhookDisabled(t, fwd, id)
	// Nothing is sent to it any more, and a ping says so.
	if r := s.do(t, request{method: "POST", path: "/api/webhooks/" + id + "/ping", token: fwd}); r.status != http.StatusConflict {
		t.Errorf("ping of a disabled webhook = %d %s", r.status, r.body)
	}
}

// An organisation shut out is sent nothing: an admin's ping of one of its
// subscriptions, or redelivery, is refused and says why, rather than
// answered 202 for a delivery the dispatcher drops untried, which no
// delivery log shows ever (or refused as "no longer visible to you").
func TestAPingOrRedeliveryToAnOrganisationShutOutIsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, admin := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-admin")
	rc := newReceiver(t)
	id := s.subscribe(t, fwd, rc, []string{"quote.created"}, "")
	createQuote(t, s, fwd, rfq())
	s.deliveredAttempts(t, fwd, id)
	var log struct{ Deliveries []struct{ DeliveryID string } }
	s.do(t, request{method: "GET", path: "/api/webhooks/" + id + "/deliveries", token: admin}).json(t, &log)
	if len(log.Deliveries) != 1 {
		t.Fatalf("delivery log = %+v", log)
	}
	if r := s.do(t, request{method: "POST", path: "/api/admin/organizations/demo-forwarder/disable", token: admin}); r.status != http.StatusOK {
		t.Fatalf("disabling the forwarder: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/ping", "/deliveries/" + log.Deliveries[0].DeliveryID + "/redeliver"} {
		r := s.do(t, request{method: "POST", path: "/api/webhooks/" + id + path, token: admin})
		if r.status != http.StatusConflict || !strings.Contains(string(r.body), "demo-forwarder receives no deliveries") {
			t.Errorf("POST …%s once the organisation is disabled = %d %s, want 409 saying why", path, r.status, r.body)
		}
	}
}

func TestARetryDroppedBecauseTheReceiverDisabledTheWebhookIsDeadInTheLog(t *testing.T) {
	t.Parallel()
	// The retry is due long after the second delivery's 410 disables the subscription.
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_WEBHOOK_RETRY_SCHEDULE": "5s,5s"})
	fwd := s.demoToken(t, "demo-forwarder")
	rc := newReceiver(t)
	rc.status = http.StatusInternalServerError
	id := s.subscribe(t, fwd, rc, []string{"quote.created"}, "")
	type attempt struct {
		Outcome string
		Error   *string
	}
	type logged struct {
		DeliveryID, Status string
		Attempts           []attempt
	}
	deliveries := func() []logged {
		var log struct{ Deliveries []logged }
		s.do(t, request{method: "GET", path: "/api/webhooks/" + id + "/deliveries", token: fwd}).json(t, &log)
		return log.Deliveries
	}
	createQuote(t, s, fwd, rfq())
	first := eventually(t, "the first delivery retrying", deliveries, func(ds []logged) bool {
		return len(ds) == 1 && ds[0].Status == "retrying"
	})[0].DeliveryID

	rc.mu.Lock()
	rc.status = http.StatusGone
	rc.mu.Unlock()
	createQuote(t, s, fwd, rfq())
	s.waitForWebhookDisabled(t, fwd, id)

	// Its retry is not sent, and the log says so rather than "retrying" for ever.
	ds := eventually(t, "the first delivery given up", deliveries, func(ds []logged) bool {
		i := slices.IndexFunc(ds, func(d logged) bool { return d.DeliveryID == first })
		return i >= 0 && ds[i].Status != "retrying"
	})
	d := ds[slices.IndexFunc(ds, func(d logged) bool { return d.DeliveryID == first })]
	last := d.Attempts[len(d.Attempts)-1]
	if d.Status != "dead" || len(d.Attempts) != 2 || last.Error == nil || !strings.HasPrefix(*last.Error, "not sent") {
		t.Errorf("the first delivery is %s, its last attempt %+v, want dead, not sent", d.Status, last)
	}
}

// A subscription says whose it is, and an admin lists those of one
// organisation (re-registering them after a change of the webhook key);
// others list their own, and only their own.
func TestAnAdminListsTheWebhooksOfOneOrganisation(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_WEBHOOK_ALLOW_PRIVATE": "false"})
	fwd, lh, admin := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh"), s.demoToken(t, "demo-admin")
	s.mustCreate(t, fwd, "/api/webhooks", map[string]any{"url": "https://192.0.2.1/forwarder", "events": []string{"*"}})
	s.mustCreate(t, lh, "/api/webhooks", map[string]any{"url": "https://192.0.2.1/airline", "events": []string{"*"}})
	for _, tt := range []struct {
		name, token, query string
		status             int
		want               string // each subscription's organisation, by URL
	}{
		{"an admin lists every one", admin, "", 200, "demo-forwarder /forwarder, demo-airline-lh /airline"},
		{"an admin lists one organisation's", admin, "?organizationId=demo-airline-lh", 200, "demo-airline-lh /airline"},
		{"an admin names an organisation that does not exist", admin, "?organizationId=nobody", 404, ""},
		{"an admin names no id", admin, "?organizationId=a%20b", 400, ""},
		{"a forwarder lists its own", fwd, "", 200, "demo-forwarder /forwarder"},
		{"a forwarder names its own", fwd, "?organizationId=demo-forwarder", 200, "demo-forwarder /forwarder"},
		{"a forwarder names another", fwd, "?organizationId=demo-airline-lh", 403, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "GET", path: "/api/webhooks" + tt.query, token: tt.token})
			var list struct {
				Webhooks []struct{ OrganizationID, URL string }
			}
			var got []string
			if r.status == 200 {
				r.json(t, &list)
				for _, w := range list.Webhooks {
					got = append(got, w.OrganizationID+" "+strings.TrimPrefix(w.URL, "https://192.0.2.1"))
				}
			}
			if r.status != tt.status || strings.Join(got, ", ") != tt.want {
				t.Errorf("GET /api/webhooks%s = %d %s, want %d with %s", tt.query, r.status, r.body, tt.status, tt.want)
			}
		})
	}
}

// The limit of 25 subscriptions holds for registrations made at once,
// which all passed a count of the read model before, and a deleted
// subscription frees its place.
func TestWebhooksRegisteredAtOnceStayWithinTheLimit(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	token := s.demoToken(t, "demo-forwarder")
	body := map[string]any{"url": "http://127.0.0.1:9/hooks", "events": []string{"quote.*"}}
	responses := s.doAtOnce(t, 40, func(int) request {
		return request{method: "POST", path: "/api/webhooks", token: token, body: body}
	})
	created, kept := 0, ""
	for _, r := range responses {
		switch r.status {
		case http.StatusCreated:
			created++
			var w struct{ WebhookID string }
			r.json(t, &w)
			kept = w.WebhookID
		case http.StatusConflict:
		default:
			t.Errorf("status %d, want 201 or 409", r.status)
		}
	}
	if created != 25 {
		t.Fatalf("%d webhooks registered at once, want 25", created)
	}
	if r := s.do(t, request{method: "POST", path: "/api/webhooks", token: token, body: body}); r.status != http.StatusConflict {
		t.Errorf("a 26th webhook: %d %s, want 409", r.status, r.body)
	}
	if r := s.do(t, request{method: "DELETE", path: "/api/webhooks/" + kept, token: token}); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	s.mustCreate(t, token, "/api/webhooks", body)
}

// Rotating the webhook key as README says: with the new key and the one it
// replaces (given, or the generated one), the subscriptions registered
// before are still delivered to, signed with their own secrets, and new
// ones are sealed with the new key; the new key alone then opens the new
// ones and not the old.
func TestAWebhookKeyIsReplacedWithoutLosingTheSubscriptionsRegisteredBefore(t *testing.T) {
	t.Parallel()
	newKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	for _, tt := range []struct{ name, oldKey, previous string }{
		{"a key given", base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)), base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))},
		{"the generated key", "", "generated"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			env := map[string]string{}
			if tt.oldKey != "" {
				env["CARGO_WEBHOOK_KEY"] = tt.oldKey
			}
			s := startServer(t, dir, env)
			fwd := s.demoToken(t, "demo-forwarder")
			before := newReceiver(t)
			beforeID := s.subscribe(t, fwd, before, []string{"quote.created"}, "")
			s.stop()

			s = startServer(t, dir, map[string]string{"CARGO_WEBHOOK_KEY": newKey, "CARGO_WEBHOOK_PREVIOUS_KEY": tt.previous})
			fwd = s.demoToken(t, "demo-forwarder")
			after := newReceiver(t)
			s.subscribe(t, fwd, after, []string{"quote.created"}, "")
			createQuote(t, s, fwd, rfq())
			for name, rc := range map[string]*receiver{"registered before": before, "registered after": after} {
				eventually(t, "the delivery to the subscription "+name, rc.received, func(d []delivery) bool { return len(d) == 1 })
			}
			s.stop()

			s = startServer(t, dir, map[string]string{"CARGO_WEBHOOK_KEY": newKey})
			fwd = s.demoToken(t, "demo-forwarder")
			createQuote(t, s, fwd, rfq())
			eventually(t, "the second delivery to the subscription registered after", after.received, func(d []delivery) bool { return len(d) == 2 })
			eventually(t, "the refused attempt of the subscription registered before", func() string {
				var log struct {
					Deliveries []struct{ Attempts []struct{ Error *string } }
				}
				s.do(t, request{method: "GET", path: "/api/webhooks/" + beforeID + "/deliveries", token: fwd}).json(t, &log)
				for _, d := range log.Deliveries {
					for _, a := range d.Attempts {
						if a.Error != nil {
							return *a.Error
						}
					}
				}
				return ""
			}, func(e string) bool { return strings.Contains(e, "the secret cannot be opened") })
			if n := len(before.received()); n != 1 {
				t.Errorf("the subscription registered before got %d deliveries, want the one made while its key was the previous", n)
			}
		})
	}
}

// A receiver behind basic authentication gets the user and password its
// URL was registered with; nobody is shown them again, not in the delivery
// log's errors either, and the stream keeps them sealed, as it keeps the
// signing secret.
func TestAReceiversPasswordIsSentButNeitherShownNorKeptInTheClear(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	fwd := s.demoToken(t, "demo-forwarder")
	authorised := make(chan string, 1)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, _ := r.BasicAuth()
		select {
		case authorised <- user + " " + password:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // nothing listens there now
	register := func(target string) (id, shown string) {
		var created struct{ WebhookID, URL string }
		s.mustCreate(t, fwd, "/api/webhooks", map[string]any{"url": target, "events": []string{"quote.created"}}).json(t, &created)
		return created.WebhookID, created.URL
	}
	host := strings.TrimPrefix(rc.URL, "http://")
	id, shown := register("http://alice:p%40ss%3Aword@" + host + "/hooks")
	if want := "http://xxxxx@" + host + "/hooks"; shown != want {
		t.Errorf("registered as %s, want %s", shown, want)
	}
	if r := s.do(t, request{method: "POST", path: "/api/webhooks/" + id + "/ping", token: fwd}); r.status != http.StatusAccepted {
		t.Fatalf("ping: %d %s", r.status, r.body)
	}
	select {
	case got := <-authorised:
		if got != "alice p@ss:word" {
			t.Errorf("the receiver was sent user and password %q, want alice and p@ss:word", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery within 30 s")
	}

	// A delivery that fails names the URL as it is shown.
	unreachable, _ := register("http://bob:s3cretpw@" + strings.TrimPrefix(closed.URL, "http://") + "/hooks")
	if r := s.do(t, request{method: "POST", path: "/api/webhooks/" + unreachable + "/ping", token: fwd}); r.status != http.StatusAccepted {
		t.Fatalf("ping: %d %s", r.status, r.body)
	}
	logged := eventually(t, "the failed attempt in the delivery log", func() string {
		var log struct {
			Deliveries []struct{ Attempts []struct{ Error *string } }
		}
		s.do(t, request{method: "GET", path: "/api/webhooks/" + unreachable + "/deliveries", token: fwd}).json(t, &log)
		if len(log.Deliveries) == 0 || len(log.Deliveries[0].Attempts) == 0 || log.Deliveries[0].Attempts[0].Error == nil {
			return ""
		}
		return *log.Deliveries[0].Attempts[0].Error
	}, func(e string) bool { return e != "" })
	if strings.Contains(logged, "bob") || strings.Contains(logged, "s3cretpw") || !strings.Contains(logged, "xxxxx@") {
		t.Errorf("the delivery log says %q: it names the user information, or not the URL as shown", logged)
	}

	s.stop()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		for _, clear := range []string{"p%40ss", "p@ss", "s3cretpw"} {
			if bytes.Contains(data, []byte(clear)) {
				t.Errorf("%s holds %s in the clear", path, clear)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A registration whose answer was lost, retried with its Idempotency-Key,
// answers the generated secret again: the subscription's deliveries are
// signed with it, and a client given a replay without it had a
// subscription it could never verify.
func TestARegistrationReplayedWithItsIdempotencyKeyAnswersTheGeneratedSecret(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	rc := newReceiver(t)
	register := func() (response, struct{ WebhookID, Secret string }) {
		r := s.do(t, request{method: "POST", path: "/api/webhooks", token: fwd, header: map[string]string{"Idempotency-Key": "hooks-1"},
			body: map[string]any{"url": rc.srv.URL + "/hooks", "events": []string{"*"}}})
		var created struct{ WebhookID, Secret string }
		r.json(t, &created)
		return r, created
	}
	first, lost := register()
	replay, created := register()
	if first.status != http.StatusCreated || replay.status != http.StatusCreated || replay.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("registration = %d, replay = %d %v", first.status, replay.status, replay.header)
	}
	if created.WebhookID != lost.WebhookID || created.Secret == "" || created.Secret != lost.Secret {
		t.Fatalf("the replay answered %+v, the first answer %+v: want the same subscription and secret", created, lost)
	}
	rc.trust(created.Secret, false)
	if r := s.do(t, request{method: "POST", path: "/api/webhooks/" + created.WebhookID + "/ping", token: fwd}); r.status != http.StatusAccepted {
		t.Fatalf("ping = %d %s", r.status, r.body)
	}
	eventually(t, "the ping, verified with the replayed secret", rc.received, func(d []delivery) bool { return len(d) == 1 && d[0].Type == "webhook.ping" })
}

// A receiver may answer any three-digit status, HTTP's or not: the
// delivery log says what it answered, a failure to retry, and its schema
// allows it (a client that validates the log against it refused the page).
func TestAStatusOutsideHTTPsRangeIsLoggedAsAnsweredAndRetried(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_WEBHOOK_RETRY_SCHEDULE": "1m"})
	fwd := s.demoToken(t, "demo-forwarder")
	rc := newReceiver(t)
	rc.status = 999
	id := s.subscribe(t, fwd, rc, []string{"quote.created"}, "")
	createQuote(t, s, fwd, rfq())
	type logged struct {
		Status   string
		Attempts []struct{ StatusCode *int }
	}
	eventually(t, "the attempt answered 999, to be retried", func() []logged {
		var log struct{ Deliveries []logged }
		s.do(t, request{method: "GET", path: "/api/webhooks/" + id + "/deliveries", token: fwd}).json(t, &log)
		return log.Deliveries
	}, func(ds []logged) bool {
		return len(ds) == 1 && ds[0].Status == "retrying" && len(ds[0].Attempts) == 1 && ds[0].Attempts[0].StatusCode != nil && *ds[0].Attempts[0].StatusCode == 999
	})
}
