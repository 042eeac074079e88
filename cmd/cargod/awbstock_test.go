package main

import (
	"cmp"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

// approvedStock has the forwarder request count numbers of prefix and the
// demo airline approve them, with the range start..end if given; it
// returns the request id.
func (s *testServer) approvedStock(t testing.TB, fwd, prefix string, count int, start, end string) string {
	t.Helper()
	var req struct{ RequestID string }
	s.mustCreate(t, fwd, "/api/awb-stock/requests", map[string]any{"airlinePrefix": prefix, "requestedStock": count, "validityPeriod": 6}).json(t, &req)
	airline := map[string]string{"020": "demo-airline-lh", "176": "demo-airline-ek"}[prefix]
	reply := map[string]any{"status": "approved", "allocatedStock": count, "validFrom": today(0), "validTo": today(180)}
	if start != "" {
		reply["startNumber"], reply["endNumber"] = start, end
	}
	if r := s.do(t, request{method: "PUT", path: "/api/awb-stock/reply/" + req.RequestID, token: s.demoToken(t, airline), body: reply}); r.status != 200 {
		t.Fatalf("approve: %d %s", r.status, r.body)
	}
	return req.RequestID
}

func today(days int) string { return time.Now().UTC().AddDate(0, 0, days).Format(time.DateOnly) }

func TestStockRequestValidation(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	tests := []struct {
		name   string
		body   map[string]any
		status int
		fields string // field:CODE, sorted
	}{
		{"too many", map[string]any{"airlinePrefix": "020", "requestedStock": 10001, "validityPeriod": 6}, 400, "requestedStock:INVALID_RANGE"},
		{"none", map[string]any{"airlinePrefix": "020", "requestedStock": 0, "validityPeriod": 6}, 400, "requestedStock:INVALID_RANGE"},
		{"prefix letters", map[string]any{"airlinePrefix": "LH", "requestedStock": 10, "validityPeriod": 6}, 400, "airlinePrefix:INVALID_FORMAT"},
		{"prefix of nobody", map[string]any{"airlinePrefix": "998", "requestedStock": 10, "validityPeriod": 6}, 400, "airlinePrefix:UNKNOWN_AIRLINE"},
		{"validity", map[string]any{"airlinePrefix": "020", "requestedStock": 10, "validityPeriod": 25}, 400, "validityPeriod:INVALID_RANGE"},
		{"nothing", map[string]any{}, 400, "airlinePrefix:REQUIRED requestedStock:REQUIRED validityPeriod:REQUIRED"},
		{"another organisation", map[string]any{"organizationId": "someone-else", "airlinePrefix": "020", "requestedStock": 10, "validityPeriod": 6}, 403, ""},
		{"own organisation named", map[string]any{"organizationId": "demo-forwarder", "airlinePrefix": "020", "requestedStock": 10, "validityPeriod": 6}, 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "POST", path: "/api/awb-stock/requests", token: fwd, body: tt.body})
			if r.status != tt.status {
				t.Fatalf("= %d %s", r.status, r.body)
			}
			if r.status == 400 {
				checkFields(t, r, tt.fields)
			}
		})
	}
	var created struct {
		Status         string
		AllocatedStock int
		ProcessedAt    *string
		ApprovalNotes  *string
		SubmittedAt    time.Time
		OrganizationID string
	}
	r := s.mustCreate(t, fwd, "/api/awb-stock/requests", map[string]any{"airlinePrefix": "176", "requestedStock": 500, "validityPeriod": 12, "notes": "peak season"})
	r.json(t, &created)
	if created.Status != "pending" || created.AllocatedStock != 0 || created.ProcessedAt != nil || created.ApprovalNotes != nil ||
		created.SubmittedAt.IsZero() || created.OrganizationID != "demo-forwarder" {
		t.Errorf("new request = %s", r.body)
	}
}

// checkFields compares a validation error with "field:CODE ..." (sorted),
// and checks the body has the spec's shape.
func checkFields(t *testing.T, r response, want string) {
	t.Helper()
	e := r.apiError(t)
	var got []string
	for _, f := range e.ValidationErrors {
		got = append(got, f.Field+":"+f.Code)
		if f.Message == "" {
			t.Errorf("%s has no message", f.Field)
		}
	}
	sort.Strings(got)
	if e.Error != "validation_error" || e.ErrorDescription == "" || e.ErrorURI == "" || strings.Join(got, " ") != want {
		t.Errorf("= %s, want fields %s", r.body, want)
	}
}

func TestStockReply(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	lh := s.demoToken(t, "demo-airline-lh")
	var req struct{ RequestID string }
	s.mustCreate(t, fwd, "/api/awb-stock/requests", map[string]any{"airlinePrefix": "020", "requestedStock": 100, "validityPeriod": 6}).json(t, &req)
	reply := func(change map[string]any) map[string]any {
		m := map[string]any{"status": "approved", "allocatedStock": 100, "validFrom": today(0), "validTo": today(180)}
		for k, v := range change {
			m[k] = v
		}
		return m
	}
	path := "/api/awb-stock/reply/" + req.RequestID
	tests := []apiCase{
		{"bad status", lh, path, reply(map[string]any{"status": "maybe"}), 400, "status:INVALID_STATUS"},
		{"more than asked", lh, path, reply(map[string]any{"allocatedStock": 101}), 400, "allocatedStock:INVALID_ALLOCATION"},
		{"rejected with numbers", lh, path, reply(map[string]any{"status": "rejected", "allocatedStock": 5}), 400, "allocatedStock:INVALID_ALLOCATION"},
		{"approved with none", lh, path, reply(map[string]any{"allocatedStock": 0}), 400, "allocatedStock:INVALID_ALLOCATION"},
		{"partial but all", lh, path, reply(map[string]any{"status": "partially_approved"}), 400, "allocatedStock:INVALID_ALLOCATION"},
		{"dates backwards", lh, path, reply(map[string]any{"validFrom": today(10), "validTo": today(0)}), 400, "validTo:INVALID_DATE"},
		{"expired before it is given", lh, path, reply(map[string]any{"validFrom": "0001-01-01", "validTo": today(-1)}), 400, "validTo:INVALID_DATE"},
		{"missing fields", lh, path, map[string]any{}, 400, "allocatedStock:REQUIRED status:REQUIRED validFrom:REQUIRED validTo:REQUIRED"},
		{"bad check digit", lh, path, reply(map[string]any{"startNumber": "020-10000010", "endNumber": "020-10001003"}), 400,
			"startNumber:INVALID_AWB_NUMBER"},
		{"range of the wrong size", lh, path, reply(map[string]any{"startNumber": "020-10000012", "endNumber": "020-10000023"}), 400,
			"endNumber:INVALID_AWB_RANGE"},
		{"range of another prefix", lh, path, reply(map[string]any{"startNumber": "176-10000012", "endNumber": "176-10001003"}), 400,
			"startNumber:INVALID_AWB_RANGE"},
		{"wrong airline", s.demoToken(t, "demo-airline-ek"), path, reply(nil), 403, ""},
		{"forwarder", fwd, path, reply(nil), 403, ""},
		{"missing request", lh, "/api/awb-stock/reply/no-such-request", reply(nil), 404, ""},
	}
	s.runCases(t, "PUT", tests)
	// Nothing changed by all that.
	var pending struct{ Status string }
	s.do(t, request{method: "GET", path: "/api/awb-stock/requests/" + req.RequestID, token: fwd}).json(t, &pending)
	if pending.Status != "pending" {
		t.Fatalf("after refused replies the request is %s", pending.Status)
	}

	// Approve with a range: 020-10000012 (serial 1000001) + 99 more.
	var ok struct {
		RequestID, Status, StartNumber, EndNumber, ValidFrom, ValidTo string
		AllocatedStock                                                int
		RepliedAt                                                     time.Time
	}
	r := s.do(t, request{method: "PUT", path: path, token: lh, body: reply(map[string]any{"startNumber": "020-10000012", "endNumber": "020-10001003", "notes": "welcome"})})
	r.json(t, &ok)
	if r.status != 200 || ok.Status != "approved" || ok.AllocatedStock != 100 || ok.StartNumber != "020-10000012" || ok.EndNumber != "020-10001003" || ok.RepliedAt.IsZero() {
		t.Fatalf("approval = %d %s", r.status, r.body)
	}
	// Another forwarder's request cannot take an overlapping range.
	admin := s.demoToken(t, "demo-admin")
	s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "other-fwd", "name": "Other", "role": "forwarder"})
	s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "other-fwd", "clientId": "other", "clientSecret": "other-secret-long"})
	other := s.token(t, "other", "other-secret-long")
	var req2 struct{ RequestID string }
	s.mustCreate(t, other, "/api/awb-stock/requests", map[string]any{"airlinePrefix": "020", "requestedStock": 10, "validityPeriod": 6}).json(t, &req2)
	r = s.do(t, request{method: "PUT", path: "/api/awb-stock/reply/" + req2.RequestID, token: lh,
		body: reply(map[string]any{"allocatedStock": 10, "startNumber": "020-10000502", "endNumber": "020-10000594"})})
	if r.status != 400 {
		t.Fatalf("overlap = %d %s", r.status, r.body)
	}
	checkFields(t, r, "startNumber:RANGE_OVERLAP")
	// Without a range the service allocates the next free one, clear of
	// the first.
	r = s.do(t, request{method: "PUT", path: "/api/awb-stock/reply/" + req2.RequestID, token: lh, body: reply(map[string]any{"allocatedStock": 10})})
	r.json(t, &ok)
	if r.status != 200 || ok.StartNumber != "020-00000011" || ok.EndNumber != "020-00000103" {
		t.Errorf("service-allocated range = %d %s", r.status, r.body)
	}
	// The other forwarder sees its own request, not the first.
	if r := s.do(t, request{method: "GET", path: "/api/awb-stock/requests/" + req.RequestID, token: other}); r.status != 404 {
		t.Errorf("another forwarder's request = %d", r.status)
	}
	var list struct {
		Requests   []struct{ RequestID, Status string }
		Pagination struct{ Total int }
	}
	s.do(t, request{method: "GET", path: "/api/awb-stock/requests?status=approved&airlinePrefix=020", token: lh}).json(t, &list)
	if list.Pagination.Total != 2 {
		t.Errorf("the airline's approved requests = %+v", list)
	}

	// A later reply may change the allocation, but not take back numbers
	// already used.
	q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, rfq()).ID)
	var b booking
	s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": q.ID, "flightId": q.PriceOptions[0].FlightID}).json(t, &b)
	if b = s.bookingOutcome(t, fwd, b.ID); b.Status != "confirmed" || *b.AWBNumber != "020-10000012" {
		t.Fatalf("booking from stock = %+v", b)
	}
	r = s.do(t, request{method: "PUT", path: path, token: lh, body: reply(map[string]any{"status": "rejected", "allocatedStock": 0, "rejectionReason": "credit hold"})})
	if r.status != http.StatusConflict {
		t.Errorf("taking back used numbers = %d %s", r.status, r.body)
	}
	r = s.do(t, request{method: "PUT", path: path, token: lh, body: reply(map[string]any{"status": "partially_approved", "allocatedStock": 50,
		"startNumber": "020-10000012", "endNumber": "020-10000502"})})
	if r.status != 200 {
		t.Errorf("shrinking around the used number = %d %s", r.status, r.body)
	}
	var after struct {
		Status, ApprovalNotes string
		AllocatedStock        int
	}
	s.do(t, request{method: "GET", path: "/api/awb-stock/requests/" + req.RequestID, token: fwd}).json(t, &after)
	if after.Status != "partially_approved" || after.AllocatedStock != 50 {
		t.Errorf("after the second reply: %+v", after)
	}
}

// A reply grants what the request asked for or less: approved is all the
// numbers asked for (fewer are partially_approved), valid no longer than
// the months the request asked for from the day it was filed.
func TestAStockReplyGrantsNoMoreThanItsRequestAsked(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	var req struct{ RequestID string }
	s.mustCreate(t, fwd, "/api/awb-stock/requests", map[string]any{"airlinePrefix": "020", "requestedStock": 100, "validityPeriod": 1}).json(t, &req)
	path := "/api/awb-stock/reply/" + req.RequestID
	// A month is 28 to 31 days.
	reply := func(status string, count, days int) map[string]any {
		return map[string]any{"status": status, "allocatedStock": count, "validFrom": today(0), "validTo": today(days)}
	}
	for _, tt := range []struct {
		name           string
		body           map[string]any
		status         int
		field, message string // of the refusal
	}{
		{"approved, but fewer than asked", reply("approved", 99, 27), 400, "allocatedStock:INVALID_ALLOCATION",
			"must be the requested 100 when approved: allot fewer as partially_approved"},
		{"approved, valid longer than asked", reply("approved", 100, 40), 400, "validTo:INVALID_DATE", "at the latest: the request asked for numbers valid 1 month from " + today(0)},
		{"partially approved, valid longer than asked", reply("partially_approved", 99, 40), 400, "validTo:INVALID_DATE", "at the latest"},
		{"partially approved, fewer for as long as asked", reply("partially_approved", 99, 27), 200, "", ""},
		{"approved, all of it for as long as asked", reply("approved", 100, 27), 200, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "PUT", path: path, token: lh, body: tt.body})
			if r.status != tt.status {
				t.Fatalf("= %d %s", r.status, r.body)
			}
			if r.status == 400 {
				checkFields(t, r, tt.field)
				if e := r.apiError(t); !strings.Contains(e.ValidationErrors[0].Message, tt.message) {
					t.Errorf("message %q does not say %q", e.ValidationErrors[0].Message, tt.message)
				}
			}
		})
	}
}

// A number with a shipment on record (here an e-DGD filed before any
// MAWB) is the forwarder's shipment: a reply may not take it back, else
// the prefix would give it to another forwarder, who would own and read
// that record.
func TestANumberWithAShipmentOnRecordIsNotTakenBack(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	rival := s.rivalForwarder(t)
	filed := "020-00000011" // the first number of the first range of 020
	path := "/api/awb-stock/reply/" + s.approvedStock(t, fwd, "020", 5, "", "")
	s.mustCreate(t, fwd, "/api/dangerous-goods", dgdBody(filed, nil))
	reply := func(status string, count int) map[string]any {
		return map[string]any{"status": status, "allocatedStock": count, "validFrom": today(0), "validTo": today(30)}
	}
	s.runCases(t, "PUT", []apiCase{
		{"a rejection would take it back", lh, path, reply("rejected", 0), 409, ""},
		{"a range elsewhere would take it back", lh, path, withFields(reply("approved", 5), map[string]any{
			"startNumber": "020-00001002", "endNumber": "020-00001046"}), 409, ""},
		{"a partial approval keeping it passes", lh, path, reply("partially_approved", 4), 200, ""},
	})
	var req struct{ RequestID string }
	s.mustCreate(t, rival, "/api/awb-stock/requests", map[string]any{"airlinePrefix": "020", "requestedStock": 5, "validityPeriod": 6}).json(t, &req)
	if r := s.do(t, request{method: "PUT", path: "/api/awb-stock/reply/" + req.RequestID, token: lh, body: reply("approved", 5)}); r.status != 200 {
		t.Fatalf("the rival's approval = %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		who    string
		token  string
		status int
	}{{"the forwarder that filed", fwd, 200}, {"the rival given the numbers released", rival, 404}} {
		if r := s.do(t, request{method: "GET", path: "/api/shipments/" + filed, token: c.token}); r.status != c.status {
			t.Errorf("%s reads %s: %d, want %d", c.who, filed, r.status, c.status)
		}
	}
}

// A number of a forwarder's stock the airline records a status or an
// e-CSD of, before any booking (cargo the forwarder labelled with it), is
// held for the booking that names it: a booking naming none is given the
// next free number, where the first was given, with the RCS of a 7-piece
// consignment on it, to a booking of one piece.
func TestANumberInAForwardersStockThatTheAirlineRecordedIsHeldForTheBookingNamingIt(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	s.approvedStock(t, fwd, "020", 3, "", "")
	const received, screened, free = "020-00000011", "020-00000022", "020-00000033" // the range's three numbers
	s.mustCreate(t, lh, "/api/shipments/"+received+"/events", map[string]any{"eventType": "RCS",
		"eventDate": time.Now().UTC().Format(time.RFC3339), "location": "FRA", "pieces": 7, "weight": 700})
	s.mustCreate(t, lh, "/api/csd", map[string]any{"awbNumber": screened, "securityStatus": "SPX", "screeningMethod": "XRY",
		"screeningDate": time.Now().UTC().Add(-time.Hour).Format(time.RFC3339), "screeningResult": "pass"})
	for _, tt := range []struct {
		name string
		awb  map[string]any
		want string
	}{
		{"a booking naming no number", nil, free},
		{"a booking naming the number received", map[string]any{"prefix": "020", "number": received[4:]}, received},
		{"a booking naming the number screened", map[string]any{"prefix": "020", "number": screened[4:]}, screened},
	} {
		b := s.decidedBooking(t, fwd, tt.awb)
		if got := b.Status + " " + *cmp.Or(b.AWBNumber, b.RejectionReason, new(string)); got != "confirmed "+tt.want {
			t.Errorf("%s: %s, want confirmed %s", tt.name, got, tt.want)
		}
	}
}

// A number the airline reported on (or filed for) while no forwarder held
// it is a shipment of the airline's own: stock given to a forwarder leaves
// it out, else the forwarder would own that shipment, read its record and
// book its own cargo under the same number.
func TestANumberWithAShipmentOnRecordGoesToNoForwarder(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	own := "020-00000011" // the first number of prefix 020, held by nobody
	s.mustCreate(t, lh, "/api/shipments/"+own+"/events", map[string]any{"eventType": "RCS",
		"eventDate": time.Now().UTC().Format(time.RFC3339), "location": "FRA"})
	requestFor := func(count int) string {
		var req struct{ RequestID string }
		s.mustCreate(t, fwd, "/api/awb-stock/requests", map[string]any{"airlinePrefix": "020", "requestedStock": count, "validityPeriod": 6}).json(t, &req)
		return "/api/awb-stock/reply/" + req.RequestID
	}
	reply := map[string]any{"status": "approved", "allocatedStock": 3, "validFrom": today(0), "validTo": today(30)}
	tests := []struct {
		name  string
		body  map[string]any
		start string // the range's first number, or the error's code
	}{
		{"a range asked for that holds it is refused", withFields(reply, map[string]any{"status": "partially_approved", "allocatedStock": 2,
			"startNumber": "020-00000000", "endNumber": own}),
			"startNumber:RANGE_OVERLAP"},
		{"the lowest free range starts past it", reply, "020-00000022"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "PUT", path: requestFor(3), token: lh, body: tt.body})
			var got struct{ StartNumber string }
			if r.status == 400 {
				checkFields(t, r, tt.start)
			} else if r.json(t, &got); r.status != 200 || got.StartNumber != tt.start {
				t.Errorf("= %d %s, want the range from %s", r.status, r.body, tt.start)
			}
		})
	}
	if r := s.do(t, request{method: "GET", path: "/api/shipments/" + own, token: fwd}); r.status != 404 {
		t.Errorf("the forwarder reads the airline's shipment %s: %d", own, r.status)
	}
}

func TestLargeApprovalIsQuickAndValid(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	var req struct{ RequestID string }
	s.mustCreate(t, fwd, "/api/awb-stock/requests", map[string]any{"airlinePrefix": "176", "requestedStock": 10000, "validityPeriod": 24}).json(t, &req)
	start := time.Now()
	r := s.do(t, request{method: "PUT", path: "/api/awb-stock/reply/" + req.RequestID, token: s.demoToken(t, "demo-airline-ek"),
		body: map[string]any{"status": "approved", "allocatedStock": 10000, "validFrom": today(0), "validTo": today(700)}})
	t.Logf("approving 10,000 numbers took %s", time.Since(start))
	var ok struct{ StartNumber, EndNumber string }
	r.json(t, &ok)
	if r.status != 200 || ok.StartNumber != "176-00000011" || ok.EndNumber != "176-00100004" {
		t.Fatalf("= %d %s", r.status, r.body)
	}
	var first, last int
	fmt.Sscanf(ok.StartNumber[4:11], "%d", &first)
	fmt.Sscanf(ok.EndNumber[4:11], "%d", &last)
	if last-first+1 != 10000 {
		t.Errorf("the range holds %d numbers", last-first+1)
	}
}
