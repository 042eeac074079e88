package httpapi

import (
	"net/http"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/views"
)

type stockRequestBody struct {
	OrganizationID string `json:"organizationId"`
	AirlinePrefix  string `json:"airlinePrefix"`
	RequestedStock *int   `json:"requestedStock"`
	ValidityPeriod *int   `json:"validityPeriod"`
	Notes          string `json:"notes"`
}

func (s *Server) handleCreateStockRequest() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req stockRequestBody
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		if err := domain.CheckStockRequester(principal(r.Context()), req.OrganizationID); err != nil {
			return err
		}
		res, err := s.commands.RequestStock(r.Context(), meta(r), domain.RequestStock{AirlinePrefix: req.AirlinePrefix,
			RequestedStock: req.RequestedStock, ValidityPeriod: req.ValidityPeriod, Notes: req.Notes}, s.knownPrefix)
		if err != nil {
			return err
		}
		s.writeCreated(w, r, res.Sequence, res.Version, "/api/awb-stock/requests/"+res.State.ID, views.ToStockRequestJSON(res.State))
		return nil
	}
}

func (s *Server) handleListStockRequests() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var p domain.Problems
		page, limit := pageParams(q, &p)
		status, prefix := q.Get("status"), codeParam(q, &p, "airlinePrefix", domain.ValidAWBPrefix, "a three-digit AWB prefix")
		switch status {
		case "", domain.StockStatusPending, domain.StockStatusApproved, domain.StockStatusRejected, domain.StockStatusPartiallyApproved:
		default:
			p.Add("status", domain.CodeInvalidValue, "must be pending, approved, rejected or partially_approved")
		}
		if err := p.Err(); err != nil {
			return err
		}
		reqs, total := s.stock.Requests(principal(r.Context()), status, prefix, page, limit)
		writePage(w, "requests", reqs, views.ToStockRequestJSON, page, limit, total)
		return nil
	}
}

// handleGetStockRequest is a stock request now, or as it was at a past
// moment (?at=, ?seq=).
func (s *Server) handleGetStockRequest() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, who := r.PathValue("id"), principal(r.Context())
		return answerVersion(s, w, r, domain.Aggregate{Type: domain.AggregateStockRequest, ID: id},
			func(cut projections.Cut) (domain.StockRequest, uint64, error) {
				return s.past.StockRequest(r.Context(), who, id, cut)
			},
			func() (domain.StockRequest, uint64, bool) { return s.stock.Request(who, id) },
			"no stock request "+id, views.ToStockRequestJSON)
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

// handleReplyStock is the airline's reply: approve (with a range, or one
// the service allocates), partially approve, or reject.
func (s *Server) handleReplyStock() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req stockReplyBody
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		m, err := changeMeta(r)
		if err != nil {
			return err
		}
		res, err := s.commands.ReplyStock(r.Context(), m, r.PathValue("requestId"), domain.ReplyStock{
			Status: req.Status, AllocatedStock: req.AllocatedStock, ValidFrom: req.ValidFrom, ValidTo: req.ValidTo,
			StartNumber: req.StartNumber, EndNumber: req.EndNumber, Notes: req.Notes, RejectionReason: req.RejectionReason,
		}, s.shipments)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		setVersion(w, res.Version)
		writeJSON(w, http.StatusOK, views.ToStockReplyJSON(res.State))
		return nil
	}
}

// handleStock is the stock ledger: per forwarder and prefix, the ranges
// held, their validity, and used and available counts.
func (s *Server) handleStock() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		today := time.Now().UTC().Format(time.DateOnly)
		writeList(w, "stock", s.stock.Ledgers(principal(r.Context())), func(l domain.StockLedger) views.LedgerJSON {
			return views.ToLedgerJSON(l, today)
		})
		return nil
	}
}

// knownPrefix reports whether an airline with an AWB prefix is known: in
// the reference data, or as an airline using this service.
func (s *Server) knownPrefix(prefix string) bool {
	_, ok := s.reference.AirlineByPrefix(prefix)
	return ok || s.identity.AirlineWithPrefix(prefix)
}
