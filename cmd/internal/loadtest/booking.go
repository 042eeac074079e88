package loadtest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

const (
	// stockBlock is the most numbers one stock request may ask for.
	stockBlock = 10000
	// stockCheckEvery is how often the forwarder's stock is looked at
	// while the bookings run: every confirmed booking uses a number for
	// good (cancelling does not give it back), so a run longer than the
	// stock lasts would end in bookings rejected for want of one.
	stockCheckEvery = 250 * time.Millisecond
)

// bookable is a priced quote and the flight of it a client books.
type bookable struct{ quoteID, flightID string }

// booking: each of cfg.Bookings clients books its own quote, polls the
// booking until it is confirmed (that time is measured), cancels it and
// waits until the quote is priced again, and books it again. Cancelling
// gives back the quote and the capacity, so the run needs neither a quote
// per booking nor a flight's worth of capacity, however long it runs.
func (b *bench) booking(ctx context.Context) ([]Row, error) {
	airline, c, err := login(ctx, b.cfg.URL, b.client, b.cfg.AirlineID, b.cfg.AirlineSecret)
	if err != nil {
		return nil, err
	}
	if c.Role != "airline" || c.Airline == "" || c.AWBPrefix == "" {
		return nil, fmt.Errorf("-airline-id %s is not a client of an airline with an AWB prefix", b.cfg.AirlineID)
	}
	if err := b.ensureStock(ctx, airline, c.AWBPrefix); err != nil {
		return nil, fmt.Errorf("AWB stock of %s for the bookings: %w", c.AWBPrefix, err)
	}
	quotes, err := b.bookables(ctx, c.Airline)
	if err != nil {
		return nil, err
	}
	stockCtx, stopStock := context.WithCancel(ctx)
	stocked := make(chan error, 1)
	go func() { stocked <- b.keepStock(stockCtx, airline, c.AWBPrefix) }()
	name := fmt.Sprintf("POST booking → confirmed on GET, %d in flight", b.cfg.Bookings)
	row := measure(ctx, b.cfg, Booking, name, "bookings/s", b.cfg.Bookings, func(ctx context.Context, worker int) (time.Duration, error) {
		return b.bookOnce(ctx, quotes[worker])
	})
	stopStock()
	if err := <-stocked; err != nil {
		return nil, fmt.Errorf("AWB stock of %s during the bookings: %w", c.AWBPrefix, err)
	}
	return []Row{row}, nil
}

// keepStock tops the forwarder's stock of prefix up (ensureStock) every
// stockCheckEvery until ctx ends.
func (b *bench) keepStock(ctx context.Context, airline *api, prefix string) error {
	tick := time.NewTicker(stockCheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if err := b.ensureStock(ctx, airline, prefix); err != nil && ctx.Err() == nil {
			return err
		}
	}
}

// bookOnce books q, measures until the booking is confirmed, then cancels
// it and waits for the quote to be bookable again.
func (b *bench) bookOnce(ctx context.Context, q bookable) (time.Duration, error) {
	start := time.Now()
	var bk resource
	if err := b.fwd.json(ctx, "POST", "/api/bookings", map[string]string{"quoteId": q.quoteID, "flightId": q.flightID}, http.StatusCreated, &bk); err != nil {
		return 0, err
	}
	if _, err := b.fwd.awaitStatus(ctx, "/api/bookings/"+bk.ID, "confirmed"); err != nil {
		return 0, err
	}
	elapsed := time.Since(start)
	if _, err := b.fwd.do(ctx, "POST", "/api/bookings/"+bk.ID+"/cancel", nil, http.StatusOK); err != nil {
		return 0, err
	}
	_, err := b.fwd.awaitStatus(ctx, "/api/quotes/"+q.quoteID, "priced")
	return elapsed, err
}

// ensureStock tops the forwarder's stock of prefix up to cfg.AWBStock:
// the forwarder asks, the airline approves.
func (b *bench) ensureStock(ctx context.Context, airline *api, prefix string) error {
	// A block short of the floor asked for as many times as it takes,
	// rounded up, and a last look at the stock after the last of them.
	floor, block := b.cfg.AWBStock, min(b.cfg.AWBStock, stockBlock)
	for range (floor+block-1)/block + 1 {
		var ledgers struct {
			Stock []struct {
				AirlinePrefix string `json:"airlinePrefix"`
				Available     int    `json:"available"`
			} `json:"stock"`
		}
		if err := b.fwd.json(ctx, "GET", "/api/awb-stock", nil, http.StatusOK, &ledgers); err != nil {
			return err
		}
		available := 0
		for _, l := range ledgers.Stock {
			if l.AirlinePrefix == prefix {
				available += l.Available
			}
		}
		if available >= floor {
			return nil
		}
		var req struct {
			RequestID string `json:"requestId"`
		}
		ask := map[string]any{"airlinePrefix": prefix, "requestedStock": block, "validityPeriod": 12}
		if err := b.fwd.json(ctx, "POST", "/api/awb-stock/requests", ask, http.StatusCreated, &req); err != nil {
			return err
		}
		reply := map[string]any{"status": "approved", "allocatedStock": block, "validFrom": today(0), "validTo": today(365)}
		if err := airline.json(ctx, "PUT", "/api/awb-stock/reply/"+req.RequestID, reply, http.StatusOK, nil); err != nil {
			return err
		}
	}
	return fmt.Errorf("still below %d numbers after approving more", floor)
}

// bookables files an RFQ per booking client, for the airline's flights
// from tomorrow on (so that none departs during the run), waits until each
// is priced, and spreads the clients over the flights offered.
func (b *bench) bookables(ctx context.Context, airline string) ([]bookable, error) {
	rfq := readmeRFQ()
	// A small shipment, so that the bookings in flight fit a flight.
	rfq["pieces"], rfq["grossWeightKg"] = 1, 50
	rfq["dimensionsCm"] = []any{map[string]any{"l": 60, "w": 40, "h": 40, "pieces": 1}}
	rfq["airlineFilter"] = []string{airline}
	rfq["deliveryToAirlineDate"] = today(1)
	body := mustJSON(rfq)

	out := make([]bookable, b.cfg.Bookings)
	errs := make([]error, len(out))
	var wg sync.WaitGroup
	for w := range min(b.cfg.Clients, len(out)) {
		wg.Go(func() {
			for i := w; i < len(out); i += b.cfg.Clients {
				id, err := b.fileRFQ(ctx, body)
				if err != nil {
					errs[i] = err
					return
				}
				q, err := b.fwd.awaitStatus(ctx, "/api/quotes/"+id, "priced")
				if err != nil {
					errs[i] = fmt.Errorf("the RFQ of the bookings (FRA-JFK on %s's flights) was not priced: %w", airline, err)
					return
				}
				if len(q.PriceOptions) == 0 {
					errs[i] = fmt.Errorf("quote %s is priced without options", id)
					return
				}
				out[i] = bookable{quoteID: id, flightID: q.PriceOptions[i%len(q.PriceOptions)].FlightID}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
