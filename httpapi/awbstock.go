package httpapi

import (
	"net/http"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/gorilla/mux"
)

type stockRequestBody struct {
	OrganizationID string `json:"organizationId"`
	AirlinePrefix  string `json:"airlinePrefix"`
	RequestedStock *int   `json:"requestedStock"`
	ValidityPeriod *int   `json:"validityPeriod"`
	Notes          string `json:"notes"`
}

// stockRequestJSON is the spec's stock request response, with the
// allocated range beside it.
type stockRequestJSON struct {
	RequestID      string     `json:"requestId"`
	Status         string     `json:"status"`
	OrganizationID string     `json:"organizationId"`
	AirlinePrefix  string     `json:"airlinePrefix"`
	RequestedStock int        `json:"requestedStock"`
	ValidityPeriod int        `json:"validityPeriod"`
	SubmittedAt    time.Time  `json:"submittedAt"`
	AllocatedStock int        `json:"allocatedStock"`
	ValidFrom      *string    `json:"validFrom"`
	ValidTo        *string    `json:"validTo"`
	ProcessedAt    *time.Time `json:"processedAt"`
	Notes          string     `json:"notes"`
	ApprovalNotes  *string    `json:"approvalNotes"`
	StartNumber    *string    `json:"startNumber"`
	EndNumber      *string    `json:"endNumber"`
}

// orNull is a pointer to s, or nil for "".
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toStockRequestJSON(r domain.StockRequest) stockRequestJSON {
	out := stockRequestJSON{RequestID: r.ID, Status: r.Status, OrganizationID: r.OrganizationID, AirlinePrefix: r.AirlinePrefix,
		RequestedStock: r.RequestedStock, ValidityPeriod: r.ValidityPeriod, SubmittedAt: r.SubmittedAt,
		AllocatedStock: r.AllocatedStock, ValidFrom: orNull(r.ValidFrom), ValidTo: orNull(r.ValidTo), Notes: r.Notes}
	if !r.ProcessedAt.IsZero() {
		out.ProcessedAt = &r.ProcessedAt
		out.ApprovalNotes = &r.ApprovalNotes
	}
	if r.Range.Count > 0 {
		out.StartNumber = orNull(domain.AWBNumber(r.AirlinePrefix, r.Range.First))
		out.EndNumber = orNull(domain.AWBNumber(r.AirlinePrefix, r.Range.Last()))
	}
	return out
}

func (s *Server) handleCreateStockRequest() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req stockRequestBody
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		if p := principal(r.Context()); req.OrganizationID != "" && req.OrganizationID != p.OrganizationID {
			return domain.Errorf(domain.Forbidden, "organizationId must be your own organisation, %s", p.OrganizationID)
		}
		res, err := s.commands.RequestStock(r.Context(), meta(r), domain.RequestStock{AirlinePrefix: req.AirlinePrefix,
			RequestedStock: req.RequestedStock, ValidityPeriod: req.ValidityPeriod, Notes: req.Notes}, s.knownPrefix)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/awb-stock/requests/"+res.State.ID)
		writeJSON(w, http.StatusCreated, toStockRequestJSON(res.State))
		return nil
	}
}

func (s *Server) handleListStockRequests() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var p domain.Problems
		page, limit := pageParams(q, &p)
		status, prefix := q.Get("status"), q.Get("airlinePrefix")
		switch status {
		case "", domain.StockStatusPending, domain.StockStatusApproved, domain.StockStatusRejected, domain.StockStatusPartiallyApproved:
		default:
			p.Add("status", domain.CodeInvalidValue, "must be pending, approved, rejected or partially_approved")
		}
		if err := p.Err(); err != nil {
			return err
		}
		reqs, total := s.stock.Requests(principal(r.Context()), status, prefix, page, limit)
		writePage(w, "requests", reqs, toStockRequestJSON, page, limit, total)
		return nil
	}
}

func (s *Server) handleGetStockRequest() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, ok := s.stock.Request(principal(r.Context()), mux.Vars(r)["id"])
		if !ok {
			return domain.Errorf(domain.NotFound, "no stock request %s", mux.Vars(r)["id"])
		}
		writeJSON(w, http.StatusOK, toStockRequestJSON(req))
		return nil
	}
}

type stockReplyBody struct {
	Status          string `json:"status"`
	AllocatedStock  *int   `json:"allocatedStock"`
	ValidFrom       string `json:"validFrom"`
	ValidTo         string `json:"validTo"`
	StartNumber     string `json:"startNumber"`
	EndNumber       string `json:"endNumber"`
	Notes           string `json:"notes"`
	RejectionReason string `json:"rejectionReason"`
}

// stockReplyJSON is the spec's stock reply response.
type stockReplyJSON struct {
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

// handleReplyStock is the airline's reply: approve (with a range, or one
// the service allocates), partially approve, or reject.
func (s *Server) handleReplyStock() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req stockReplyBody
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		res, err := s.commands.ReplyStock(r.Context(), meta(r), mux.Vars(r)["requestId"], domain.ReplyStock{
			Status: req.Status, AllocatedStock: req.AllocatedStock, ValidFrom: req.ValidFrom, ValidTo: req.ValidTo,
			StartNumber: req.StartNumber, EndNumber: req.EndNumber, Notes: req.Notes, RejectionReason: req.RejectionReason,
		})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		st := res.State
		out := stockReplyJSON{RequestID: st.ID, Status: st.Status, AllocatedStock: st.AllocatedStock, RepliedAt: st.ProcessedAt,
			ValidFrom: st.ValidFrom, ValidTo: st.ValidTo, Notes: st.ApprovalNotes}
		if st.Range.Count > 0 {
			out.StartNumber = domain.AWBNumber(st.AirlinePrefix, st.Range.First)
			out.EndNumber = domain.AWBNumber(st.AirlinePrefix, st.Range.Last())
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

type ledgerRangeJSON struct {
	RequestID   string `json:"requestId"`
	StartNumber string `json:"startNumber"`
	EndNumber   string `json:"endNumber"`
	Count       int    `json:"count"`
	Used        int    `json:"used"`
	ValidFrom   string `json:"validFrom"`
	ValidTo     string `json:"validTo"`
}

type ledgerJSON struct {
	OrganizationID string            `json:"organizationId"`
	AirlinePrefix  string            `json:"airlinePrefix"`
	Ranges         []ledgerRangeJSON `json:"ranges"`
	Allocated      int               `json:"allocated"`
	Used           int               `json:"used"`
	Available      int               `json:"available"` // unused numbers in ranges valid today
}

// handleStock is the stock ledger: per forwarder and prefix, the ranges
// held, their validity, and used and available counts.
func (s *Server) handleStock() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		today := time.Now().UTC().Format(time.DateOnly)
		ledgers := s.stock.Ledgers(principal(r.Context()))
		out := struct {
			Stock []ledgerJSON `json:"stock"`
		}{Stock: make([]ledgerJSON, len(ledgers))}
		for i, l := range ledgers {
			lj := ledgerJSON{OrganizationID: l.OrganizationID, AirlinePrefix: l.Prefix, Ranges: make([]ledgerRangeJSON, len(l.Ranges)),
				Allocated: l.Allocated(), Used: len(l.Used), Available: l.Available(today)}
			for j, rg := range l.Ranges {
				lj.Ranges[j] = ledgerRangeJSON{RequestID: rg.RequestID, StartNumber: domain.AWBNumber(l.Prefix, rg.Range.First),
					EndNumber: domain.AWBNumber(l.Prefix, rg.Range.Last()), Count: rg.Range.Count, Used: l.UsedIn(rg.Range),
					ValidFrom: rg.ValidFrom, ValidTo: rg.ValidTo}
			}
			out.Stock[i] = lj
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// knownPrefix reports whether an airline with an AWB prefix is known: in
// the reference data, or as an airline using this service.
func (s *Server) knownPrefix(prefix string) bool {
	_, ok := s.reference.AirlineByPrefix(prefix)
	return ok || s.identity.AirlineWithPrefix(prefix)
}
