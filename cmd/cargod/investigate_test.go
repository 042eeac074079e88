package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore/natstest"
)

// cargoctl builds the cargoctl command once for the test and returns a
// function that runs it with args, as the demo admin against s (and its
// NATS listener, for the commands that read the stream), and returns what
// it printed on stdout.
func cargoctl(t *testing.T, s *testServer, natsURL string) func(args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cargoctl")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "../cargoctl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build cargoctl: %v\n%s", err, out)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CARGOCTL_URL=" + s.base,
		"CARGOCTL_CLIENT_ID=demo-admin", "CARGOCTL_CLIENT_SECRET=demo-admin-secret", "CARGO_NATS_URL=" + natsURL, "CARGO_DATA_DIR=" + s.dataDir}
	return func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("cargoctl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String()
	}
}

// jsonLines decodes output of one JSON object a line.
func jsonLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var all []T
	for line := range strings.Lines(out) {
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		all = append(all, v)
	}
	return all
}

// TestTheInvestigationToolsTellOneShipmentsStory builds a shipment's life
// through the API (quote, booking, MAWB, a status event), keeping what the
// API answered at moments in between, and then asks every investigation
// tool, as an ops engineer would: the shipment's /history, `cargoctl
// shipment`, `cargoctl trace` of the booking request, `?at=` and `cargoctl
// state --at`. They must tell exactly that story, and show each resource
// at each moment exactly as the API showed it then.
func TestTheInvestigationToolsTellOneShipmentsStory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cargoctl")
	}
	t.Parallel()
	natsPort := natstest.FreePorts(t, 1)[0]
	s := startServer(t, t.TempDir(), map[string]string{"CARGO_NATS_LISTEN": fmt.Sprintf("127.0.0.1:%d", natsPort)})
	ctl := cargoctl(t, s, fmt.Sprintf("nats://127.0.0.1:%d", natsPort))
	fwd, lh, admin := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh"), s.demoToken(t, "demo-admin")
	flight := flightWithinTheHour(t, s)
	s.approvedStock(t, fwd, "020", 10, "", "")
	// The forwarder's system hears of its confirmed bookings.
	rc := newReceiver(t)
	hook := s.subscribe(t, fwd, rc, []string{"booking.confirmed"}, "")

	var q quote
	s.mustCreate(t, fwd, "/api/quotes", rfq()).json(t, &q)
	s.quoteOutcome(t, fwd, q.ID)
	r := s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": q.ID, "flightId": flight})
	bookingReq := r.header.Get("X-Request-Id")
	var b booking
	r.json(t, &b)
	if b = s.bookingOutcome(t, fwd, b.ID); b.Status != "confirmed" || b.AWBNumber == nil {
		t.Fatalf("booking = %+v", b)
	}
	awb := *b.AWBNumber
	// A moment is a time between two changes, and what the API answered
	// then, as the admin sees it.
	type moment struct {
		at                string
		booking, shipment map[string]any
	}
	live := func(path string) map[string]any {
		var v map[string]any
		s.do(t, request{method: "GET", path: path, token: admin}).json(t, &v)
		return v
	}
	pause := func() string {
		// Events carry the time they were decided: a moment strictly
		// between two changes needs a little room on either side.
		time.Sleep(5 * time.Millisecond)
		at := time.Now().UTC().Format(time.RFC3339Nano)
		time.Sleep(5 * time.Millisecond)
		return at
	}
	var moments []moment
	snapshot := func() {
		at := pause()
		moments = append(moments, moment{at: at, booking: live("/api/bookings/" + b.ID), shipment: live("/api/shipments/" + awb)})
	}
	snapshot() // confirmed, nothing filed yet

	s.mustCreate(t, fwd, "/api/mawb", mawbBody(awb))
	snapshot() // the MAWB filed
	s.mustCreate(t, lh, "/api/shipments/"+awb+"/events", map[string]any{"eventType": "DEP", "eventDate": time.Now().UTC().Format(time.RFC3339), "location": "FRA"})
	if r := s.do(t, request{method: "POST", path: "/api/bookings/" + b.ID + "/cancel", token: fwd}); r.status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	// The cancellation gives back the capacity with it (stored first, as
	// a confirmation's reservation is), and the reactor reopens the quote.
	history := eventually(t, "the history of "+awb, func() []historyEntry {
		h, _ := s.history(t, admin, "/api/shipments/"+awb)
		return h
	}, func(h []historyEntry) bool { return len(h) >= 11 })
	snapshot() // departed, and the booking cancelled

	// The shipment's history, from the API and from cargoctl.
	type line struct {
		Sequence                                uint64
		Type, AggregateType, AggregateID, Actor string
		CorrelationID                           string
	}
	lineOf := func(e historyEntry) line {
		return line{e.Sequence, e.Type, e.AggregateType, e.AggregateID, e.Actor, e.CorrelationID}
	}
	var story []line
	for _, e := range history {
		story = append(story, lineOf(e))
	}
	types := make([]string, len(story))
	for i, l := range story {
		types[i] = l.Type
	}
	if want := []string{"QuoteRequested", "QuotePriced", "BookingRequested", "CapacityReserved", "QuoteAccepted", "BookingConfirmed",
		"MAWBCreated", "ShipmentStatusRecorded", "CapacityReleased", "BookingCancelled", "QuoteReopened"}; !slices.Equal(types, want) {
		t.Fatalf("the history tells %v, want %v", types, want)
	}
	// Once the webhook delivery of the confirmation is recorded, cargoctl
	// shows it under that event, and under no other.
	eventually(t, "the delivery recorded", func() string {
		var page struct{ Deliveries []struct{ Status string } }
		s.do(t, request{method: "GET", path: "/api/webhooks/" + hook + "/deliveries", token: fwd}).json(t, &page)
		if len(page.Deliveries) != 1 {
			return ""
		}
		return page.Deliveries[0].Status
	}, func(status string) bool { return status == "delivered" })
	type told struct {
		line
		Deliveries []struct{ WebhookID, EventName, Status string }
	}
	var lines []line
	for _, l := range jsonLines[told](t, ctl("shipment", "--json", awb)) {
		lines = append(lines, l.line)
		switch {
		case l.Type == "BookingConfirmed" && (len(l.Deliveries) != 1 || l.Deliveries[0].WebhookID != hook ||
			l.Deliveries[0].EventName != "booking.confirmed" || l.Deliveries[0].Status != "delivered"):
			t.Errorf("the confirmation's deliveries: %+v", l.Deliveries)
		case l.Type != "BookingConfirmed" && len(l.Deliveries) != 0:
			t.Errorf("%s has deliveries: %+v", l.Type, l.Deliveries)
		}
	}
	if !slices.Equal(lines, story) {
		t.Errorf("cargoctl shipment tells\n%v\nthe history\n%v", lines, story)
	}
	if out := ctl("shipment", awb); !strings.Contains(out, "BookingConfirmed") ||
		!strings.Contains(out, "\n    webhook "+hook+"  delivery ") || !strings.Contains(out, "  booking.confirmed  delivered  1 attempts, the last at ") {
		t.Errorf("cargoctl shipment does not show the delivery under its event:\n%s", out)
	}
	// The receiver's log leads back to the request, as cargoctl trace does.
	if got := rc.received(); len(got) != 1 || got[0].Correlation != bookingReq {
		t.Errorf("the receiver got %+v, want the confirmation's, with the booking request's correlation id %s", got, bookingReq)
	}

	// What the booking request caused, as cargoctl trace reads it from
	// the stream: the history's events of that request, and besides them
	// only the AWB number taken from the forwarder's stock (its ledger
	// holds every number, so a shipment's history leaves it out).
	var caused []line
	for _, l := range story {
		if l.CorrelationID == bookingReq {
			caused = append(caused, l)
		}
	}
	var traced []line
	for _, l := range jsonLines[line](t, ctl("trace", "--json", bookingReq)) {
		if l.Type != "AWBNumberUsed" {
			traced = append(traced, l)
		}
	}
	if len(caused) != 4 || !slices.Equal(traced, caused) {
		t.Errorf("cargoctl trace tells\n%v\nthe history\n%v", traced, caused)
	}

	// Each moment, as ?at= and cargoctl state show it: what the API
	// answered then.
	for i, m := range moments {
		for _, res := range []struct {
			kind, path, id string
			then           map[string]any
		}{
			{"booking", "/api/bookings/" + b.ID, b.ID, m.booking},
			{"shipment", "/api/shipments/" + awb, awb, m.shipment},
		} {
			if past := live(res.path + "?at=" + m.at); !reflect.DeepEqual(past, res.then) {
				t.Errorf("moment %d: the %s ?at=%s is\n%v\nthe API answered\n%v", i, res.kind, m.at, past, res.then)
			}
			var state map[string]any
			if err := json.Unmarshal([]byte(ctl("state", res.kind, res.id, "--at", m.at)), &state); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(state, res.then) {
				t.Errorf("moment %d: cargoctl state %s --at %s is\n%v\nthe API answered\n%v", i, res.kind, m.at, state, res.then)
			}
		}
	}
	if moments[0].booking["status"] != "confirmed" || moments[2].booking["status"] != "cancelled" {
		t.Errorf("the moments do not span the story: %v, %v", moments[0].booking["status"], moments[2].booking["status"])
	}
}
