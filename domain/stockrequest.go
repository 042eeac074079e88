package domain

import (
	"strings"
	"time"
)

// Stock request states.
const (
	StockStatusPending           = "pending"
	StockStatusApproved          = "approved"
	StockStatusRejected          = "rejected"
	StockStatusPartiallyApproved = "partially_approved"
)

// Validation codes of the spec for AWB stock, and ours beside them.
const (
	CodeInvalidAllocation FieldCode = "INVALID_ALLOCATION"
	CodeInvalidStatus     FieldCode = "INVALID_STATUS"
	CodeInvalidAWBNumber  FieldCode = "INVALID_AWB_NUMBER"
	CodeInvalidAWBRange   FieldCode = "INVALID_AWB_RANGE"
	CodeRangeOverlap      FieldCode = "RANGE_OVERLAP"
	CodeUnknownAirline    FieldCode = "UNKNOWN_AIRLINE"
)

// AWBRange is a block of consecutive 7-digit serials of a prefix.
type AWBRange struct {
	First int `json:"first"` // 7-digit serial
	Count int `json:"count"`
}

// Last is the range's last serial.
func (r AWBRange) Last() int { return r.First + r.Count - 1 }

// Overlaps reports whether two ranges share a serial.
func (r AWBRange) Overlaps(o AWBRange) bool {
	return r.Count > 0 && o.Count > 0 && r.First <= o.Last() && o.First <= r.Last()
}

// Contains reports whether serial lies in the range.
func (r AWBRange) Contains(serial int) bool { return serial >= r.First && serial <= r.Last() }

// StockRequest is a forwarder's request for AWB numbers of an airline.
type StockRequest struct {
	ID             string
	OrganizationID string
	AirlinePrefix  string
	RequestedStock int
	ValidityPeriod int
	Notes          string
	SubmittedAt    time.Time
	Status         string
	AllocatedStock int
	ValidFrom      string
	ValidTo        string
	Range          AWBRange // what the latest reply allocated
	ProcessedAt    time.Time
	ApprovalNotes  string
}

// ValidUntil is the last day the request asked its numbers be valid: its
// validity period in months from the day it was submitted (UTC), on the
// month's last day where that month is shorter (a month from 31 January
// is the end of February).
func (r StockRequest) ValidUntil() time.Time {
	d := r.SubmittedAt.UTC()
	month := time.Date(d.Year(), d.Month()+time.Month(r.ValidityPeriod), 1, 0, 0, 0, 0, time.UTC)
	return month.AddDate(0, 0, min(d.Day(), month.AddDate(0, 1, -1).Day())-1)
}

// VisibleTo: the requesting forwarder, the airline of the prefix, admins.
func (r StockRequest) VisibleTo(p Principal) bool {
	switch p.Role {
	case RoleAdmin:
		return true
	case RoleForwarder:
		return r.OrganizationID == p.OrganizationID
	case RoleAirline:
		return r.AirlinePrefix == p.AWBPrefix
	}
	return false
}

// StockRequested records a forwarder's request for AWB stock.
type StockRequested struct {
	RequestID      string    `json:"requestId"`
	OrganizationID string    `json:"organizationId"`
	AirlinePrefix  string    `json:"airlinePrefix"`
	RequestedStock int       `json:"requestedStock"`
	ValidityPeriod int       `json:"validityPeriod"`
	Notes          string    `json:"notes,omitempty"`
	SubmittedAt    time.Time `json:"submittedAt"`
}

func (StockRequested) EventType() string  { return "StockRequested" }
func (StockRequested) SetsStatus() string { return StockStatusPending }

// StockReplied records an airline's reply; a later reply replaces it.
type StockReplied struct {
	RequestID       string    `json:"requestId"`
	OrganizationID  string    `json:"organizationId"`
	AirlinePrefix   string    `json:"airlinePrefix"`
	Status          string    `json:"status"`
	AllocatedStock  int       `json:"allocatedStock"`
	ValidFrom       string    `json:"validFrom"`
	ValidTo         string    `json:"validTo"`
	Range           AWBRange  `json:"range"`
	Notes           string    `json:"notes,omitempty"`
	RejectionReason string    `json:"rejectionReason,omitempty"`
	RepliedAt       time.Time `json:"repliedAt"`
}

func (StockReplied) EventType() string { return "StockReplied" }

// RequestStock is a forwarder's stock request. knownPrefix tells whether
// an airline with that prefix uses the service.
type RequestStock struct {
	RequestID      string
	OrganizationID string
	AirlinePrefix  string
	RequestedStock *int
	ValidityPeriod *int
	Notes          string
	At             time.Time
}

// CheckStockRequester: a forwarder requests stock for its own
// organisation. A request may name it, or none; naming another would be
// asking for numbers in that organisation's name.
func CheckStockRequester(p Principal, organizationID string) error {
	if organizationID != "" && organizationID != p.OrganizationID {
		return Errorf(Forbidden, "organizationId must be your own organisation, %s", p.OrganizationID)
	}
	return nil
}

// DecideRequestStock files the request once.
func DecideRequestStock(r StockRequest, c RequestStock, knownPrefix func(string) bool) ([]Event, error) {
	var p Problems
	c.AirlinePrefix = strings.TrimSpace(c.AirlinePrefix)
	switch {
	case c.AirlinePrefix == "":
		p.Add("airlinePrefix", CodeRequired, "is required")
	case !awbPrefixPattern.MatchString(c.AirlinePrefix):
		p.Add("airlinePrefix", CodeInvalidFormat, "invalid airline prefix format: must be three digits")
	case !knownPrefix(c.AirlinePrefix):
		p.Add("airlinePrefix", CodeUnknownAirline, "no airline with prefix %s uses this service", c.AirlinePrefix)
	}
	switch {
	case c.RequestedStock == nil:
		p.Add("requestedStock", CodeRequired, "is required")
	case *c.RequestedStock < 1 || *c.RequestedStock > 10000:
		p.Add("requestedStock", CodeInvalidRange, "must be between 1 and 10000")
	}
	switch {
	case c.ValidityPeriod == nil:
		p.Add("validityPeriod", CodeRequired, "is required")
	case *c.ValidityPeriod < 1 || *c.ValidityPeriod > 24:
		p.Add("validityPeriod", CodeInvalidRange, "must be between 1 and 24 months")
	}
	checkLength(&p, "notes", c.Notes, maxNotes)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if r.ID != "" {
		return nil, Errorf(Conflict, "stock request %s already exists", c.RequestID)
	}
	return []Event{StockRequested{RequestID: c.RequestID, OrganizationID: c.OrganizationID, AirlinePrefix: c.AirlinePrefix,
		RequestedStock: *c.RequestedStock, ValidityPeriod: *c.ValidityPeriod, Notes: c.Notes, SubmittedAt: c.At}}, nil
}

// ReplyStock is an airline's reply to a stock request.
type ReplyStock struct {
	Status          string
	AllocatedStock  *int
	ValidFrom       string
	ValidTo         string
	StartNumber     string
	EndNumber       string
	Notes           string
	RejectionReason string
	At              time.Time
}

// Validate checks the reply against the request on its own; whether the
// range is free is the prefix's business. It returns the requested range,
// if the reply names one.
func (c ReplyStock) Validate(r StockRequest) (AWBRange, error) {
	var p Problems
	switch c.Status {
	case "":
		p.Add("status", CodeRequired, "is required")
	case StockStatusApproved, StockStatusRejected, StockStatusPartiallyApproved:
	default:
		p.Add("status", CodeInvalidStatus, "must be approved, rejected or partially_approved")
	}
	if c.AllocatedStock == nil {
		p.Add("allocatedStock", CodeRequired, "is required")
	} else {
		n := *c.AllocatedStock
		switch {
		case n < 0 || n > r.RequestedStock:
			p.Add("allocatedStock", CodeInvalidAllocation, "must be between 0 and the requested %d", r.RequestedStock)
		case c.Status == StockStatusRejected && n != 0:
			p.Add("allocatedStock", CodeInvalidAllocation, "must be 0 when the request is rejected")
		case c.Status == StockStatusApproved && n < r.RequestedStock:
			// Approved is all that was asked for: the forwarder plans on
			// it, and the request's status is all it reads at a glance.
			p.Add("allocatedStock", CodeInvalidAllocation, "must be the requested %d when approved: allot fewer as partially_approved", r.RequestedStock)
		case c.Status == StockStatusPartiallyApproved && n < 1:
			p.Add("allocatedStock", CodeInvalidAllocation, "must be at least 1 when partially approved")
		case c.Status == StockStatusPartiallyApproved && n >= r.RequestedStock:
			p.Add("allocatedStock", CodeInvalidAllocation, "must be less than the requested %d when partially approved", r.RequestedStock)
		}
	}
	from, errFrom := time.Parse(time.DateOnly, c.ValidFrom)
	to, errTo := time.Parse(time.DateOnly, c.ValidTo)
	for _, d := range []struct {
		field, value string
		err          error
	}{{"validFrom", c.ValidFrom, errFrom}, {"validTo", c.ValidTo, errTo}} {
		if d.value == "" {
			p.Add(d.field, CodeRequired, "is required")
		} else if d.err != nil {
			p.Add(d.field, CodeInvalidDate, "must be a date as YYYY-MM-DD")
		}
	}
	granted := c.Status != StockStatusRejected
	switch {
	case errFrom != nil || errTo != nil:
	case to.Before(from):
		p.Add("validTo", CodeInvalidDate, "must not be before validFrom")
	case granted && to.Before(c.At.Truncate(24*time.Hour)):
		// Stock that expired before it was given would be no stock, and
		// a re-reply taking it back this way would strand the forwarder's
		// bookings: shorten it to today at the earliest.
		p.Add("validTo", CodeInvalidDate, "must not be in the past")
	case granted && to.After(r.ValidUntil()):
		// A reply grants what was asked or less: numbers valid longer
		// than asked for, as more numbers than asked for, are not.
		months := "months"
		if r.ValidityPeriod == 1 {
			months = "month"
		}
		p.Add("validTo", CodeInvalidDate, "must be %s at the latest: the request asked for numbers valid %d %s from %s",
			r.ValidUntil().Format(time.DateOnly), r.ValidityPeriod, months, r.SubmittedAt.UTC().Format(time.DateOnly))
	case granted && from.Before(r.SubmittedAt.UTC().Truncate(24*time.Hour)):
		// Numbers are valid from the request on, at the earliest: a
		// validFrom before it (0000-01-01) says nothing true, and would
		// stand in the ledger.
		p.Add("validFrom", CodeInvalidDate, "must be %s at the earliest, the day the request was submitted (UTC)", r.SubmittedAt.UTC().Format(time.DateOnly))
	}
	checkLength(&p, "notes", c.Notes, maxNotes)
	checkLength(&p, "rejectionReason", c.RejectionReason, maxNotes)

	var rng AWBRange
	if c.StartNumber != "" || c.EndNumber != "" {
		start, errS := ParseAWB(c.StartNumber)
		end, errE := ParseAWB(c.EndNumber)
		for _, n := range []struct {
			field, value, other string
			err                 error
		}{{"startNumber", c.StartNumber, "endNumber", errS}, {"endNumber", c.EndNumber, "startNumber", errE}} {
			switch {
			case n.value == "":
				p.Add(n.field, CodeRequired, "is required with %s", n.other)
			case n.err != nil:
				p.Add(n.field, CodeInvalidAWBNumber, "%s", n.err.Error())
			}
		}
		if errS == nil && errE == nil {
			sp, first := AWBSerial(start)
			ep, last := AWBSerial(end)
			rng = AWBRange{First: first, Count: last - first + 1}
			switch {
			case sp != r.AirlinePrefix || ep != r.AirlinePrefix:
				p.Add("startNumber", CodeInvalidAWBRange, "the range must be of prefix %s", r.AirlinePrefix)
			case c.Status == StockStatusRejected:
				p.Add("startNumber", CodeInvalidAWBRange, "a rejection allocates no range")
			case last < first:
				p.Add("endNumber", CodeInvalidAWBRange, "must not come before startNumber")
			case c.AllocatedStock != nil && rng.Count != *c.AllocatedStock:
				p.Add("endNumber", CodeInvalidAWBRange, "the range %s to %s holds %d numbers, but allocatedStock is %d", start, end, rng.Count, *c.AllocatedStock)
			}
		}
	}
	return rng, p.Err()
}

// DecideReplyStock records the reply, with the range the prefix allocated
// (none for a rejection).
func DecideReplyStock(r StockRequest, c ReplyStock, allocated AWBRange) ([]Event, error) {
	if r.ID == "" {
		return nil, Errorf(NotFound, "no such stock request")
	}
	n := 0
	if c.AllocatedStock != nil {
		n = *c.AllocatedStock
	}
	return []Event{StockReplied{RequestID: r.ID, OrganizationID: r.OrganizationID, AirlinePrefix: r.AirlinePrefix,
		Status: c.Status, AllocatedStock: n, ValidFrom: c.ValidFrom, ValidTo: c.ValidTo, Range: allocated,
		Notes: c.Notes, RejectionReason: c.RejectionReason, RepliedAt: c.At}}, nil
}

// EvolveStockRequest applies an event to a stock request.
func EvolveStockRequest(r StockRequest, e Event) StockRequest {
	switch e := e.(type) {
	case StockRequested:
		return StockRequest{ID: e.RequestID, OrganizationID: e.OrganizationID, AirlinePrefix: e.AirlinePrefix,
			RequestedStock: e.RequestedStock, ValidityPeriod: e.ValidityPeriod, Notes: e.Notes, SubmittedAt: e.SubmittedAt,
			Status: StockStatusPending}
	case StockReplied:
		r.Status, r.AllocatedStock, r.ValidFrom, r.ValidTo, r.Range = e.Status, e.AllocatedStock, e.ValidFrom, e.ValidTo, e.Range
		r.ProcessedAt, r.ApprovalNotes = e.RepliedAt, e.Notes
		// The spec has one field for the airline's words on a reply:
		// a rejection's reason comes first, its notes (if any) after.
		if e.Status == StockStatusRejected && e.RejectionReason != "" {
			r.ApprovalNotes = e.RejectionReason
			if e.Notes != "" {
				r.ApprovalNotes += "; " + e.Notes
			}
		}
	}
	return r
}
