package commands

import (
	"context"
	"errors"
	"time"

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

// recordInStock runs the command m on agg, a filing, document or status
// of the shipment awb that the AWB stock of the forwarder holder alone
// makes its own (domain.ShipmentOwnership.HeldInStockBy), with the number
// held in holder's ledger in the same decision
// (domain.DecideHoldAWBForRecord): so the airline cannot take the number
// back, with its records, while the record is stored or after, no booking
// of the forwarder is given it unless it names it, and a filing of the
// forwarder whose number was taken back meanwhile is refused.
func recordInStock[S any](ctx context.Context, h *Handler, m Meta, holder, awb string, agg domain.Aggregate,
	evolve func(S, domain.Event) S, decide func(S) ([]domain.Event, error)) (Result[S], error) {
	byHolder := m.Principal.OrganizationID == holder
	day := h.now().UTC().Format(time.DateOnly)
	var res *Result[S]
	err := transact(ctx, h, func(t *transaction) (err error) {
		_, err = decideIn(t, ledgerAggregate(holder, awb[:3]), m.part("hold-awb"), domain.EvolveStockLedger,
			func(l domain.StockLedger) ([]domain.Event, error) {
				return domain.DecideHoldAWBForRecord(l, awb, byHolder, day)
			})
		if err != nil {
			return err
		}
		res, err = decideIn(t, agg, m, evolve, decide)
		return err
	})
	if err != nil {
		return Result[S]{}, err
	}
	return *res, nil
}

// ShipmentRecords tells, from the read models, whether the shipment of a
// (canonical) AWB number has anything on record: filings, documents or
// status events.
type ShipmentRecords interface {
	OnRecord(awb string) bool
}

// ReplyStock is the airline's reply to a stock request, in one
// transaction: the prefix aggregate decides the range (the guard against
// overlaps, which gives no number with a shipment on record, as shipments
// tell, to a request that does not hold it), the request records the
// reply, and the ledger the range, which refuses to take back numbers the
// forwarder used, or with a shipment on record. All three are
// stored together or none: a number used while the reply is decided
// conflicts with it at the ledger, and the reply is decided again, or
// refused. Replies to one request queue within a process; each part's
// command id derives from the reply's, so a retried reply repeats
// nothing, and replying again heals a reply cut short by an earlier
// release, which stored its parts one by one.
func (h *Handler) ReplyStock(ctx context.Context, m Meta, requestID string, c domain.ReplyStock, shipments ShipmentRecords) (Result[domain.StockRequest], error) {
	var none Result[domain.StockRequest]
	if !domain.ValidIdentifier(requestID) {
		return none, domain.Errorf(domain.NotFound, "no stock request %s", requestID)
	}
	unlock := h.replies.lock(requestID)
	defer unlock()
	r, _, _, err := load(ctx, h, stockRequestAggregate(requestID), domain.EvolveStockRequest, "", loadFresh)
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
	onRecord := func(serial int) bool { return shipments.OnRecord(domain.AWBNumber(r.AirlinePrefix, serial)) }
	// If-Match is the request's: the prefix and the ledger have versions
	// of their own.
	reply := m.part("reply")
	reply.IfVersion = m.IfVersion
	var prefix *Result[domain.AWBPrefixStock]
	var res *Result[domain.StockRequest]
	var ledger *Result[domain.StockLedger]
	err = transact(ctx, h, func(t *transaction) (err error) {
		prefix, err = decideIn(t, domain.Aggregate{Type: domain.AggregateAWBPrefix, ID: r.AirlinePrefix}, m.part("range"), domain.EvolveAWBPrefixStock,
			func(s domain.AWBPrefixStock) ([]domain.Event, error) {
				return domain.DecideAllocateRange(s, r.AirlinePrefix, requestID, r.OrganizationID, want, count, onRecord)
			})
		if err != nil {
			return err
		}
		allocated := prefix.State.Ranges[requestID]
		res, err = decideIn(t, stockRequestAggregate(requestID), reply, domain.EvolveStockRequest,
			func(req domain.StockRequest) ([]domain.Event, error) {
				return domain.DecideReplyStock(req, c, allocated)
			})
		if err != nil {
			return err
		}
		ledger, err = decideIn(t, ledgerAggregate(r.OrganizationID, r.AirlinePrefix), m.part("ledger"), domain.EvolveStockLedger,
			func(l domain.StockLedger) ([]domain.Event, error) {
				return domain.DecideSetStock(l, r.OrganizationID, r.AirlinePrefix,
					domain.LedgerRange{RequestID: requestID, Range: allocated, ValidFrom: res.State.ValidFrom, ValidTo: res.State.ValidTo}, onRecord)
			})
		return err
	})
	if err != nil {
		return none, err
	}
	res.Sequence = max(res.Sequence, prefix.Sequence, ledger.Sequence)
	return *res, nil
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
