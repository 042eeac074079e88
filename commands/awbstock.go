package commands

import (
	"context"
	"errors"

	"github.com/cargostream/cargostream/domain"
)

func stockRequestAggregate(id string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateStockRequest, ID: id}
}

func ledgerAggregate(orgID, prefix string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateStockLedger, ID: orgID + "-" + prefix}
}

// RequestStock files a forwarder's AWB stock request. knownPrefix tells
// whether an airline with a prefix uses the service.
func (h *Handler) RequestStock(ctx context.Context, m Meta, c domain.RequestStock, knownPrefix func(string) bool) (Result[domain.StockRequest], error) {
	c.RequestID = m.DeriveID("stockrequest")
	c.OrganizationID = m.Principal.OrganizationID
	c.At = h.now().UTC()
	return create(ctx, h, stockRequestAggregate(c.RequestID), m, domain.EvolveStockRequest,
		func(r domain.StockRequest) ([]domain.Event, error) {
			return domain.DecideRequestStock(r, c, knownPrefix)
		})
}

// ReplyStock is the airline's reply to a stock request. The prefix
// aggregate decides the range (the guard against overlaps, which also
// refuses to take back numbers the forwarder used); the request records
// the reply and the ledger the range, each taking the range from the
// prefix as it stands when they decide, so that concurrent replies leave
// all three agreeing with the last. Replies to one request queue within
// a process; each step's command id derives from the reply's, so a
// retried reply repeats nothing, and replying again heals one cut short.
func (h *Handler) ReplyStock(ctx context.Context, m Meta, requestID string, c domain.ReplyStock) (Result[domain.StockRequest], error) {
	var none Result[domain.StockRequest]
	if !domain.ValidIdentifier(requestID) {
		return none, domain.Errorf(domain.NotFound, "no stock request %s", requestID)
	}
	unlock := h.replies.lock(requestID)
	defer unlock()
	r, loaded, _, err := load(ctx, h, stockRequestAggregate(requestID), domain.EvolveStockRequest, "", loadFresh)
	if err != nil {
		return none, err
	}
	if r.ID == "" {
		return none, domain.Errorf(domain.NotFound, "no stock request %s", requestID)
	}
	if m.Principal.Role != domain.RoleAirline || m.Principal.AWBPrefix != r.AirlinePrefix {
		return none, domain.Errorf(domain.Forbidden, "only the airline with prefix %s replies to this request", r.AirlinePrefix)
	}
	// The request's version is checked before the range is taken, so
	// that a stale reply stores nothing; the reply step checks it again
	// where it counts, at its write (a reply from another replica in
	// between fails there, with the range step repeated by the next
	// reply as a reply cut short is).
	ifVersion := m.IfVersion
	if ifVersion != nil && *ifVersion != loaded.last {
		return none, preconditionFailed(loaded.last, *ifVersion)
	}
	m.IfVersion = nil // the prefix and the ledger have versions of their own
	c.At = h.now().UTC()
	want, err := c.Validate(r)
	if err != nil {
		return none, err
	}
	count := 0
	if c.Status != domain.StockStatusRejected {
		count = *c.AllocatedStock
	}
	prefixAgg := domain.Aggregate{Type: domain.AggregateAWBPrefix, ID: r.AirlinePrefix}
	ledgerAgg := ledgerAggregate(r.OrganizationID, r.AirlinePrefix)
	rangeNow := func() (domain.AWBRange, error) {
		p, _, _, err := load(ctx, h, prefixAgg, domain.EvolveAWBPrefixStock, "", loadFresh)
		return p.Ranges[requestID], err
	}

	sub := func(step string) Meta { s := m; s.CommandID = m.CommandID + ":" + step; return s }
	if _, err := execute(ctx, h, prefixAgg, sub("range"), domain.EvolveAWBPrefixStock,
		func(s domain.AWBPrefixStock) ([]domain.Event, error) {
			events, err := domain.DecideAllocateRange(s, r.AirlinePrefix, requestID, r.OrganizationID, want, count)
			if err != nil || len(events) == 0 {
				return events, err
			}
			// Numbers the forwarder used cannot be taken back.
			next := domain.EvolveAWBPrefixStock(s, events[0]).Ranges[requestID]
			ledger, _, _, err := load(ctx, h, ledgerAgg, domain.EvolveStockLedger, "", loadFresh)
			if err != nil {
				return nil, err
			}
			if _, err := domain.DecideSetStock(ledger, r.OrganizationID, r.AirlinePrefix, domain.LedgerRange{RequestID: requestID, Range: next}); err != nil {
				return nil, err
			}
			return events, nil
		}); err != nil {
		return none, err
	}
	reply := sub("reply")
	reply.IfVersion = ifVersion
	res, err := execute(ctx, h, stockRequestAggregate(requestID), reply, domain.EvolveStockRequest,
		func(r domain.StockRequest) ([]domain.Event, error) {
			allocated, err := rangeNow()
			if err != nil {
				return nil, err
			}
			return domain.DecideReplyStock(r, c, allocated)
		})
	if err != nil {
		return none, err
	}
	set, err := execute(ctx, h, ledgerAgg, sub("ledger"), domain.EvolveStockLedger,
		func(l domain.StockLedger) ([]domain.Event, error) {
			allocated, err := rangeNow()
			if err != nil {
				return nil, err
			}
			latest, _, _, err := load(ctx, h, stockRequestAggregate(requestID), domain.EvolveStockRequest, "", loadFresh)
			if err != nil {
				return nil, err
			}
			return domain.DecideSetStock(l, r.OrganizationID, r.AirlinePrefix,
				domain.LedgerRange{RequestID: requestID, Range: allocated, ValidFrom: latest.ValidFrom, ValidTo: latest.ValidTo})
		})
	if err != nil {
		return none, err
	}
	res.Sequence = max(res.Sequence, set.Sequence)
	return res, nil
}

// useAWB takes an AWB number of prefix from the forwarder's stock for
// reference, as a part of t: awb if given (it must be in valid stock and
// unused), else the next free one, or none without any stock of prefix
// (see domain.DecideUseAWB). A retried command gets the same number.
func useAWB(t *transaction, m Meta, orgID, prefix, awb, reference string) (string, error) {
	day := t.h.now().UTC().Format("2006-01-02")
	var number string
	ledger := ledgerAggregate(orgID, prefix)
	_, err := decideIn(t, ledger, m, domain.EvolveStockLedger,
		func(l domain.StockLedger) ([]domain.Event, error) {
			if l.Prefix == "" {
				l.OrganizationID, l.Prefix = orgID, prefix
			}
			events, n, err := domain.DecideUseAWB(l, awb, reference, day)
			if err == nil && len(events) == 0 {
				return nil, errNoNumber
			}
			number = n
			return events, err
		})
	switch {
	case errors.Is(err, errNoNumber):
		return "", nil
	case err != nil:
		return "", err
	case number != "":
		return number, nil
	case awb != "":
		return awb, nil // a repeated command took the number it was given
	default:
		// A repeated command: the number it took is in the history.
		return t.h.numberUsedBy(t.ctx, ledger, m.CommandID)
	}
}

// errNoNumber is useAWB's decision to take no number. It is an error,
// not a decision of no events, so that it tells from a command that ran
// before, whose number is in the history: a decision of none made on a
// cached ledger is made again on the ledger as stored (decideHeld, as
// for a refusal), which may show the command ran before on another
// replica. That second look also lets a replica whose cached ledger
// emptied (stock withdrawn) take a number of stock allocated elsewhere
// since, while a ledger cached with stock costs a confirmation no round
// trip to the store.
var errNoNumber = errors.New("commands: no AWB stock of the prefix")

// numberUsedBy finds the AWB number a command took from a ledger.
func (h *Handler) numberUsedBy(ctx context.Context, agg domain.Aggregate, commandID string) (string, error) {
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
