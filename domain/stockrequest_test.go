package domain

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDecideRequestStock(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	base := func() RequestStock {
		return RequestStock{RequestID: "s1", OrganizationID: "f1", AirlinePrefix: " 020 ", RequestedStock: new(100), ValidityPeriod: new(12), At: at}
	}
	known := func(prefix string) bool { return prefix == "020" }
	tests := []struct {
		name    string
		history []Event
		change  func(c *RequestStock)
		want    string // the request filed, or the first problem's code and field, or the error's code
	}{
		{name: "a request", change: func(*RequestStock) {}, want: "s1 of f1: 100 of 020 for 12 months"},
		{name: "the most for the longest", change: func(c *RequestStock) { c.RequestedStock, c.ValidityPeriod = new(10000), new(24) },
			want: "s1 of f1: 10000 of 020 for 24 months"},
		{name: "no prefix", change: func(c *RequestStock) { c.AirlinePrefix = " " }, want: "REQUIRED airlinePrefix"},
		{name: "a prefix of two digits", change: func(c *RequestStock) { c.AirlinePrefix = "20" }, want: "INVALID_FORMAT airlinePrefix"},
		{name: "an airline not on the service", change: func(c *RequestStock) { c.AirlinePrefix = "176" }, want: "UNKNOWN_AIRLINE airlinePrefix"},
		{name: "no count", change: func(c *RequestStock) { c.RequestedStock = nil }, want: "REQUIRED requestedStock"},
		{name: "none asked for", change: func(c *RequestStock) { c.RequestedStock = new(0) }, want: "INVALID_RANGE requestedStock"},
		{name: "too many asked for", change: func(c *RequestStock) { c.RequestedStock = new(10001) }, want: "INVALID_RANGE requestedStock"},
		{name: "no validity", change: func(c *RequestStock) { c.ValidityPeriod = nil }, want: "REQUIRED validityPeriod"},
		{name: "valid for no month", change: func(c *RequestStock) { c.ValidityPeriod = new(0) }, want: "INVALID_RANGE validityPeriod"},
		{name: "valid for over two years", change: func(c *RequestStock) { c.ValidityPeriod = new(25) }, want: "INVALID_RANGE validityPeriod"},
		{name: "notes too long", change: func(c *RequestStock) { c.Notes = strings.Repeat("n", 2001) }, want: "TOO_LONG notes"},
		{name: "filed already", history: []Event{StockRequested{RequestID: "s1", OrganizationID: "f1", AirlinePrefix: "020"}},
			change: func(*RequestStock) {}, want: "conflict"},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, err := DecideRequestStock(given(EvolveStockRequest, tt.history...), c, known)
		got := outcomeOf(events, err, func(e StockRequested) string {
			return fmt.Sprintf("%s of %s: %d of %s for %d months", e.RequestID, e.OrganizationID, e.RequestedStock, e.AirlinePrefix, e.ValidityPeriod)
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCheckStockRequester(t *testing.T) {
	f1 := Principal{OrganizationID: "f1", Role: RoleForwarder}
	tests := []struct {
		name         string
		organization string
		want         string
	}{
		{"a forwarder names its own organisation", "f1", ""},
		{"or none, which is its own", "", ""},
		{"but never another's", "f2", "forbidden: organizationId must be your own organisation, f1"},
	}
	for _, tt := range tests {
		if got := errText(CheckStockRequester(f1, tt.organization)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDecideReplyStock(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	filed := StockRequested{RequestID: "s1", OrganizationID: "f1", AirlinePrefix: "020", RequestedStock: 100, ValidityPeriod: 12}
	approved := ReplyStock{Status: StockStatusApproved, AllocatedStock: new(100), ValidFrom: "2026-12-01", ValidTo: "2027-11-30", At: at}
	partly := ReplyStock{Status: StockStatusPartiallyApproved, AllocatedStock: new(50), ValidFrom: "2026-12-01", ValidTo: "2027-11-30", At: at}
	rejected := ReplyStock{Status: StockStatusRejected, ValidFrom: "2026-12-01", ValidTo: "2026-12-01", RejectionReason: "no credit", At: at}
	tests := []struct {
		name      string
		history   []Event
		c         ReplyStock
		allocated AWBRange
		want      string // the reply recorded, or the error's code
	}{
		{"approved", []Event{filed}, approved, AWBRange{First: 1, Count: 100},
			`s1 of f1/020 approved: 100 as {First:1 Count:100} from 2026-12-01 to 2027-11-30 ""`},
		{"rejected, without a count", []Event{filed}, rejected, AWBRange{}, `s1 of f1/020 rejected: 0 as {First:0 Count:0} from 2026-12-01 to 2026-12-01 "no credit"`},
		{"partly approved after an approval", []Event{filed, StockReplied{RequestID: "s1", Status: StockStatusApproved, AllocatedStock: 100}},
			partly, AWBRange{First: 1, Count: 50}, `s1 of f1/020 partially_approved: 50 as {First:1 Count:50} from 2026-12-01 to 2027-11-30 ""`},
		{"no request", nil, approved, AWBRange{First: 1, Count: 100}, "not_found"},
	}
	for _, tt := range tests {
		events, err := DecideReplyStock(given(EvolveStockRequest, tt.history...), tt.c, tt.allocated)
		got := outcomeOf(events, err, func(e StockReplied) string {
			return fmt.Sprintf("%s of %s/%s %s: %d as %+v from %s to %s %q", e.RequestID, e.OrganizationID, e.AirlinePrefix, e.Status,
				e.AllocatedStock, e.Range, e.ValidFrom, e.ValidTo, e.RejectionReason)
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A reply grants what its request asked for or less: approved is all the
// numbers asked for (fewer are partially_approved), and numbers granted
// are valid no longer than the request's validity period, in months from
// the day it was filed (to the month's end where the month is shorter).
func TestAStockReplyGrantsNoMoreThanItsRequestAsked(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	request := func(submitted string, months int) StockRequest {
		day, _ := time.Parse(time.DateOnly, submitted)
		return StockRequest{ID: "s1", AirlinePrefix: "020", RequestedStock: 100, ValidityPeriod: months, SubmittedAt: day.Add(23 * time.Hour)}
	}
	reply := func(status string, n int, validTo string) ReplyStock {
		return ReplyStock{Status: status, AllocatedStock: &n, ValidFrom: "2026-11-25", ValidTo: validTo, At: at}
	}
	for _, tt := range []struct {
		name    string
		request StockRequest
		reply   ReplyStock
		want    string // the first problem, with its message
	}{
		{"approved, all of it for as long as asked", request("2026-11-24", 6), reply(StockStatusApproved, 100, "2027-05-24"), ""},
		{"approved, but fewer", request("2026-11-24", 6), reply(StockStatusApproved, 99, "2027-05-24"),
			"allocatedStock INVALID_ALLOCATION must be the requested 100 when approved: allot fewer as partially_approved"},
		{"approved, none", request("2026-11-24", 6), reply(StockStatusApproved, 0, "2027-05-24"),
			"allocatedStock INVALID_ALLOCATION must be the requested 100 when approved: allot fewer as partially_approved"},
		{"partially approved, fewer", request("2026-11-24", 6), reply(StockStatusPartiallyApproved, 99, "2027-05-24"), ""},
		{"partially approved, none", request("2026-11-24", 6), reply(StockStatusPartiallyApproved, 0, "2027-05-24"),
			"allocatedStock INVALID_ALLOCATION must be at least 1 when partially approved"},
		{"valid a day longer than asked", request("2026-11-24", 6), reply(StockStatusApproved, 100, "2027-05-25"),
			"validTo INVALID_DATE must be 2027-05-24 at the latest: the request asked for numbers valid 6 months from 2026-11-24"},
		{"partially approved, valid longer than asked", request("2026-11-24", 6), reply(StockStatusPartiallyApproved, 50, "2027-06-01"),
			"validTo INVALID_DATE must be 2027-05-24 at the latest: the request asked for numbers valid 6 months from 2026-11-24"},
		{"a rejection grants nothing, for no time", request("2026-11-24", 6), reply(StockStatusRejected, 0, "2030-12-31"), ""},
		{"valid from the request's day", request("2026-11-24", 6), ReplyStock{Status: StockStatusApproved, AllocatedStock: new(100),
			ValidFrom: "2026-11-24", ValidTo: "2027-05-24", At: at}, ""},
		{"valid from before the request", request("2026-11-24", 6), ReplyStock{Status: StockStatusApproved, AllocatedStock: new(100),
			ValidFrom: "0000-01-01", ValidTo: "2027-05-24", At: at},
			"validFrom INVALID_DATE must be 2026-11-24 at the earliest, the day the request was submitted (UTC)"},
		{"a rejection valid from before the request", request("2026-11-24", 6), ReplyStock{Status: StockStatusRejected, AllocatedStock: new(0),
			ValidFrom: "2026-01-01", ValidTo: "2026-01-01", At: at}, ""},
		{"a month from 31 October ends on 30 November", request("2026-10-31", 1), reply(StockStatusApproved, 100, "2026-11-30"), ""},
		{"a month from 31 October is not 1 December", request("2026-10-31", 1), reply(StockStatusApproved, 100, "2026-12-01"),
			"validTo INVALID_DATE must be 2026-11-30 at the latest: the request asked for numbers valid 1 month from 2026-10-31"},
		{"two years from 29 February 2028", request("2028-02-29", 24), ReplyStock{Status: StockStatusApproved, AllocatedStock: new(100),
			ValidFrom: "2028-03-01", ValidTo: "2030-03-01", At: time.Date(2028, 3, 1, 0, 0, 0, 0, time.UTC)},
			"validTo INVALID_DATE must be 2030-02-28 at the latest: the request asked for numbers valid 24 months from 2028-02-29"},
	} {
		_, err := tt.reply.Validate(tt.request)
		got := ""
		if e, ok := err.(*Error); ok && len(e.Fields) > 0 {
			got = e.Fields[0].Field + " " + string(e.Fields[0].Code) + " " + e.Fields[0].Message
		} else if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// approvalNotes, the spec's one field for the airline's words on a
// reply, keeps both a rejection's reason and its notes.
func TestAStockRequestShowsTheReplysNotesAndARejectionsReason(t *testing.T) {
	requested := EvolveStockRequest(StockRequest{}, StockRequested{RequestID: "r1", OrganizationID: "f1", AirlinePrefix: "020", RequestedStock: 10})
	tests := []struct {
		name  string
		reply StockReplied
		want  string
	}{
		{"approved with notes", StockReplied{Status: StockStatusApproved, Notes: "valid at FRA only"}, "valid at FRA only"},
		{"rejected with a reason", StockReplied{Status: StockStatusRejected, RejectionReason: "credit limit reached"}, "credit limit reached"},
		{"rejected with notes alone", StockReplied{Status: StockStatusRejected, Notes: "call us"}, "call us"},
		{"rejected with a reason and notes", StockReplied{Status: StockStatusRejected, RejectionReason: "credit limit reached", Notes: "call us"},
			"credit limit reached; call us"},
	}
	for _, tt := range tests {
		if got := EvolveStockRequest(requested, tt.reply).ApprovalNotes; got != tt.want {
			t.Errorf("%s: approvalNotes %q, want %q", tt.name, got, tt.want)
		}
	}
}
