package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
)

const (
	typeStockRequest = "stockrequest"
	typeAWBPrefix    = "awbprefix"
	typeStockLedger  = "awbledger"
)

func stockRequestAggregate(id string) eventstore.Aggregate {
	return eventstore.Aggregate{Type: typeStockRequest, ID: id}
}

func ledgerAggregate(orgID, prefix string) eventstore.Aggregate {
	return eventstore.Aggregate{Type: typeStockLedger, ID: orgID + "-" + prefix}
}

// RequestStock files a forwarder's AWB stock request. knownPrefix tells
// whether an airline with a prefix uses the service.
func (h *Handler) RequestStock(ctx context.Context, m Meta, c domain.RequestStock, knownPrefix func(string) bool) (Result[domain.StockRequest], error) {
	c.RequestID = m.DeriveID("stockrequest")
	c.OrganizationID = m.Principal.OrganizationID
	c.At = h.now().UTC()
	return execute(ctx, h, stockRequestAggregate(c.RequestID), m, domain.EvolveStockRequest,
		func(r domain.StockRequest) ([]domain.Event, error) {
			return domain.DecideRequestStock(r, c, knownPrefix)
		})
}

// ReplyStock is the airline's reply to a stock request. It allocates the
// range on the prefix (the guard against overlaps), records the reply on
// the request, and puts the range into the forwarder's ledger. Each step
// has a command id derived from the reply's, so a retried reply repeats
// nothing; replying again heals a reply cut short by a crash.
func (h *Handler) ReplyStock(ctx context.Context, m Meta, requestID string, c domain.ReplyStock) (Result[domain.StockRequest], error) {
	var none Result[domain.StockRequest]
	if !domain.ValidIdentifier(requestID) {
		return none, domain.Errorf(domain.NotFound, "no stock request %s", requestID)
	}
	r, _, _, err := load(ctx, h, stockRequestAggregate(requestID), domain.EvolveStockRequest, "")
	if err != nil {
		return none, err
	}
	if r.ID == "" {
		return none, domain.Errorf(domain.NotFound, "no stock request %s", requestID)
	}
	if m.Principal.Role != domain.RoleAirline || m.Principal.AWBPrefix != r.AirlinePrefix {
		return none, domain.Errorf(domain.Forbidden, "only the airline with prefix %s replies to this request", r.AirlinePrefix)
	}
	c.At = h.now().UTC()
	want, err := c.Validate(r)
	if err != nil {
		return none, err
	}
	count := 0
	if c.Status != domain.StockStatusRejected {
		count = *c.AllocatedStock
	}

	// Numbers the forwarder used cannot be taken back: the new range
	// (the one asked for, or the same one again) must keep them.
	ledger, _, _, err := load(ctx, h, ledgerAggregate(r.OrganizationID, r.AirlinePrefix), domain.EvolveStockLedger, "")
	if err != nil {
		return none, err
	}
	keep := want
	if keep.Count == 0 && count > 0 && r.Range.Count == count {
		keep = r.Range
	}
	if _, err := domain.DecideSetStock(ledger, r.OrganizationID, r.AirlinePrefix, domain.LedgerRange{RequestID: requestID, Range: keep}); err != nil {
		return none, err
	}

	sub := func(step string) Meta { s := m; s.CommandID = m.CommandID + ":" + step; return s }
	prefix, err := execute(ctx, h, eventstore.Aggregate{Type: typeAWBPrefix, ID: r.AirlinePrefix}, sub("range"), domain.EvolveAWBPrefixStock,
		func(s domain.AWBPrefixStock) ([]domain.Event, error) {
			return domain.DecideAllocateRange(s, r.AirlinePrefix, requestID, r.OrganizationID, want, count)
		})
	if err != nil {
		return none, err
	}
	allocated := prefix.State.Ranges[requestID]
	res, err := execute(ctx, h, stockRequestAggregate(requestID), sub("reply"), domain.EvolveStockRequest,
		func(r domain.StockRequest) ([]domain.Event, error) { return domain.DecideReplyStock(r, c, allocated) })
	if err != nil {
		return none, err
	}
	set, err := execute(ctx, h, ledgerAggregate(r.OrganizationID, r.AirlinePrefix), sub("ledger"), domain.EvolveStockLedger,
		func(l domain.StockLedger) ([]domain.Event, error) {
			return domain.DecideSetStock(l, r.OrganizationID, r.AirlinePrefix,
				domain.LedgerRange{RequestID: requestID, Range: allocated, ValidFrom: c.ValidFrom, ValidTo: c.ValidTo})
		})
	if err != nil {
		return none, err
	}
	res.Sequence = max(res.Sequence, set.Sequence)
	return res, nil
}

// UseAWB takes an AWB number of prefix from the forwarder's stock for
// reference: awb if given (it must be in valid stock and unused), else the
// next free one. A retried command gets the same number.
func (h *Handler) UseAWB(ctx context.Context, m Meta, orgID, prefix, awb, reference string) (string, error) {
	day := h.now().UTC().Format("2006-01-02")
	var number string
	_, err := execute(ctx, h, ledgerAggregate(orgID, prefix), m, domain.EvolveStockLedger,
		func(l domain.StockLedger) ([]domain.Event, error) {
			if l.Prefix == "" {
				l.OrganizationID, l.Prefix = orgID, prefix
			}
			events, n, err := domain.DecideUseAWB(l, awb, reference, day)
			number = n
			return events, err
		})
	if err != nil {
		return "", err
	}
	if number == "" {
		// A repeated command: the number it took is in the history.
		return h.numberUsedBy(ctx, ledgerAggregate(orgID, prefix), m.CommandID)
	}
	return number, nil
}

// numberUsedBy finds the AWB number a command took from a ledger.
func (h *Handler) numberUsedBy(ctx context.Context, agg eventstore.Aggregate, commandID string) (string, error) {
	recs, err := h.store.Load(ctx, agg)
	if err != nil {
		return "", err
	}
	for _, r := range recs {
		if r.CommandID == commandID && r.Type == (domain.AWBNumberUsed{}).EventType() {
			e, err := domain.DecodeEvent(r.Type, r.Data)
			if err != nil {
				return "", err
			}
			return e.(domain.AWBNumberUsed).AWBNumber, nil
		}
	}
	return "", nil
}
