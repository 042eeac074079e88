package views

import (
	"time"

	"github.com/cargostream/cargostream/domain"
)

// StockRequestJSON is the spec's stock request response, with the
// allocated range beside it. What the spec types as a plain string or
// date is left out while there is none (validFrom, validTo, and the range);
// processedAt and approvalNotes, which it allows to be null, are null
// until the airline replies.
type StockRequestJSON struct {
	RequestID      string     `json:"requestId"`
	Status         string     `json:"status"`
	OrganizationID string     `json:"organizationId"`
	AirlinePrefix  string     `json:"airlinePrefix"`
	RequestedStock int        `json:"requestedStock"`
	ValidityPeriod int        `json:"validityPeriod"`
	SubmittedAt    time.Time  `json:"submittedAt"`
	AllocatedStock int        `json:"allocatedStock"`
	ValidFrom      string     `json:"validFrom,omitempty"`
	ValidTo        string     `json:"validTo,omitempty"`
	ProcessedAt    *time.Time `json:"processedAt"`
	Notes          string     `json:"notes"`
	ApprovalNotes  *string    `json:"approvalNotes"`
	StartNumber    string     `json:"startNumber,omitempty"`
	EndNumber      string     `json:"endNumber,omitempty"`
}

// ToStockRequestJSON shows the airline's reply once there is one.
func ToStockRequestJSON(r domain.StockRequest) StockRequestJSON {
	out := StockRequestJSON{RequestID: r.ID, Status: r.Status, OrganizationID: r.OrganizationID, AirlinePrefix: r.AirlinePrefix,
		RequestedStock: r.RequestedStock, ValidityPeriod: r.ValidityPeriod, SubmittedAt: r.SubmittedAt,
		AllocatedStock: r.AllocatedStock, ValidFrom: r.ValidFrom, ValidTo: r.ValidTo, Notes: r.Notes}
	if !r.ProcessedAt.IsZero() {
		out.ProcessedAt = &r.ProcessedAt
		out.ApprovalNotes = &r.ApprovalNotes
	}
	if r.Range.Count > 0 {
		out.StartNumber = domain.AWBNumber(r.AirlinePrefix, r.Range.First)
		out.EndNumber = domain.AWBNumber(r.AirlinePrefix, r.Range.Last())
	}
	return out
}

// StockReplyJSON is the spec's stock reply response.
type StockReplyJSON struct {
	RequestID      string    `json:"requestId"`
	Status         string    `json:"status"`
	AllocatedStock int       `json:"allocatedStock"`
	RepliedAt      time.Time `json:"repliedAt"`
	StartNumber    string    `json:"startNumber,omitempty"`
	EndNumber      string    `json:"endNumber,omitempty"`
	ValidFrom      string    `json:"validFrom,omitempty"`
	ValidTo        string    `json:"validTo,omitempty"`
	Notes          string    `json:"notes,omitempty"`
}

// ToStockReplyJSON is the airline's reply to a stock request.
func ToStockReplyJSON(r domain.StockRequest) StockReplyJSON {
	out := StockReplyJSON{RequestID: r.ID, Status: r.Status, AllocatedStock: r.AllocatedStock, RepliedAt: r.ProcessedAt,
		ValidFrom: r.ValidFrom, ValidTo: r.ValidTo, Notes: r.ApprovalNotes}
	if r.Range.Count > 0 {
		out.StartNumber = domain.AWBNumber(r.AirlinePrefix, r.Range.First)
		out.EndNumber = domain.AWBNumber(r.AirlinePrefix, r.Range.Last())
	}
	return out
}

// LedgerRangeJSON is one range of AWB numbers a forwarder holds.
type LedgerRangeJSON struct {
	RequestID   string `json:"requestId"`
	StartNumber string `json:"startNumber"`
	EndNumber   string `json:"endNumber"`
	Count       int    `json:"count"`
	Used        int    `json:"used"`
	ValidFrom   string `json:"validFrom"`
	ValidTo     string `json:"validTo"`
}

// LedgerJSON is a forwarder's stock of one airline prefix.
type LedgerJSON struct {
	OrganizationID string            `json:"organizationId"`
	AirlinePrefix  string            `json:"airlinePrefix"`
	Ranges         []LedgerRangeJSON `json:"ranges"`
	Allocated      int               `json:"allocated"`
	Used           int               `json:"used"`
	Held           int               `json:"held"`      // used, and held for a booking that names them
	Available      int               `json:"available"` // unused numbers in ranges valid today
}

// ToLedgerJSON is a ledger with its numbers available on today (a date
// as YYYY-MM-DD).
func ToLedgerJSON(l domain.StockLedger, today string) LedgerJSON {
	out := LedgerJSON{OrganizationID: l.OrganizationID, AirlinePrefix: l.Prefix, Ranges: make([]LedgerRangeJSON, len(l.Ranges)),
		Allocated: l.Allocated(), Used: len(l.Used), Held: len(l.Held), Available: l.Available(today)}
	for i, rg := range l.Ranges {
		out.Ranges[i] = LedgerRangeJSON{RequestID: rg.RequestID, StartNumber: domain.AWBNumber(l.Prefix, rg.Range.First),
			EndNumber: domain.AWBNumber(l.Prefix, rg.Range.Last()), Count: rg.Range.Count, Used: l.UsedIn(rg.Range),
			ValidFrom: rg.ValidFrom, ValidTo: rg.ValidTo}
	}
	return out
}
