package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

// demoRoute is a daily flight of a demo airline: the local departure time
// and the block time; the arrival follows from the airports' time zones.
type demoRoute struct {
	flightNumber, origin, destination, departs, aircraft string
	block                                                time.Duration
}

var demoTimetables = map[string][]demoRoute{
	"demo-airline-lh": {
		{"LH8400", "FRA", "JFK", "10:05", "B77F", 8*time.Hour + 50*time.Minute},
		{"LH8401", "JFK", "FRA", "18:30", "B77F", 7*time.Hour + 40*time.Minute},
		{"LH8160", "FRA", "ORD", "13:30", "B77F", 9*time.Hour + 25*time.Minute},
		{"LH8406", "FRA", "PVG", "17:45", "B77F", 11*time.Hour + 10*time.Minute},
		{"LH8388", "FRA", "HKG", "14:15", "B77F", 10*time.Hour + 40*time.Minute},
		{"LH630", "FRA", "DXB", "21:45", "A359", 5*time.Hour + 45*time.Minute},
	},
	"demo-airline-ek": {
		{"EK9901", "DXB", "FRA", "02:35", "B77F", 7*time.Hour + 5*time.Minute},
		{"EK9902", "FRA", "DXB", "13:25", "B77F", 6*time.Hour + 25*time.Minute},
		{"EK9903", "DXB", "JFK", "08:30", "B77F", 14 * time.Hour},
		{"EK202", "JFK", "DXB", "22:55", "B77W", 12*time.Hour + 50*time.Minute},
		{"EK9380", "DXB", "HKG", "03:00", "B77F", 7*time.Hour + 25*time.Minute},
		{"EK1", "DXB", "LHR", "07:45", "B77W", 7*time.Hour + 50*time.Minute},
	},
}

// demoRates are the demo airlines' rate cards, per kg by weight break.
var demoRates = map[string][]domain.SetRateCard{
	"demo-airline-lh": {
		{Origin: "FRA", Destination: "*", Currency: "EUR", MinimumCharge: 75,
			WeightBreaks: map[string]float64{"N": 4.5, "45": 3.8, "100": 3.2, "300": 2.9, "500": 2.6, "1000": 2.3},
			Surcharges:   map[string]float64{"DGR": 0.6, "PER": 0.25, "PIL": 0.3, "AVI": 0.8, "VAL": 1.5, "ICE": 0.15}},
		{Origin: "JFK", Destination: "FRA", Currency: "USD", MinimumCharge: 85,
			WeightBreaks: map[string]float64{"N": 4.9, "45": 4.1, "100": 3.5, "300": 3.1, "500": 2.8, "1000": 2.5},
			Surcharges:   map[string]float64{"DGR": 0.65, "PER": 0.3}},
	},
	"demo-airline-ek": {
		{Origin: "DXB", Destination: "*", Currency: "USD", MinimumCharge: 70,
			WeightBreaks: map[string]float64{"N": 4.1, "45": 3.5, "100": 3.0, "300": 2.7, "500": 2.4, "1000": 2.1},
			Surcharges:   map[string]float64{"DGR": 0.55, "PER": 0.2, "PIL": 0.25, "VAL": 1.4}, NotAccepted: []string{"AVI"}},
		{Origin: "*", Destination: "DXB", Currency: "USD", MinimumCharge: 70,
			WeightBreaks: map[string]float64{"N": 4.3, "45": 3.6, "100": 3.1, "300": 2.8, "500": 2.5, "1000": 2.2},
			Surcharges:   map[string]float64{"DGR": 0.55, "PER": 0.2}, NotAccepted: []string{"AVI"}},
	},
}

// demoRefillEvery is how often a demo that runs for days adds to its
// timetable the days that came into its window.
const demoRefillEvery = time.Hour

// keepDemoTimetable calls seed, with the time, every so often until ctx
// ends. A failure is logged, and the next tick tries again. The time is
// read at each call, not taken from the tick: under load a tick's time
// came 1.7 ms before the time of the tick before it (a CI run), and the
// demo's "now" would have gone back.
func keepDemoTimetable(ctx context.Context, log *slog.Logger, every time.Duration, seed func(now time.Time) error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := seed(time.Now()); err != nil && ctx.Err() == nil {
				log.Warn("demo timetable not refilled; trying again later", "in", every.String(), "err", err)
			}
		}
	}
}

// seedDemoTimetable keeps the demo airlines' timetable filled for the
// next days and their rate cards in place. Flights already scheduled are
// left alone, so a restart adds only the days that came into the window.
func seedDemoTimetable(ctx context.Context, cmds *commands.Handler, flights *projections.Flights, ref domain.Lookup, days int, now time.Time) error {
	for _, o := range demoOrganizations {
		if o.Role != domain.RoleAirline {
			continue
		}
		airline := domain.Principal{Subject: "system:demo", OrganizationID: o.OrganizationID, Role: domain.RoleAirline,
			AirlineCode: o.AirlineCode, AWBPrefix: o.AWBPrefix}
		var batch []domain.ScheduleFlight
		for d := range days {
			for _, rt := range demoTimetables[o.OrganizationID] {
				f, err := demoFlight(rt, now, d, ref)
				if err != nil {
					return err
				}
				if _, ok := flights.Get(domain.FlightID(f.FlightNumber, f.DepartureDate)); !ok {
					batch = append(batch, f)
				}
			}
		}
		if len(batch) > 0 {
			m := commands.NewMeta(airline, fmt.Sprintf("seed:timetable:%s", o.OrganizationID), "")
			if _, err := cmds.ScheduleFlights(ctx, m, batch); err != nil {
				return fmt.Errorf("demo timetable: %w", err)
			}
		}
		for _, card := range demoRates[o.OrganizationID] {
			card.ValidFrom, card.ValidTo = "2020-01-01", "2099-12-31"
			m := commands.NewMeta(airline, fmt.Sprintf("seed:rates:%s:%s-%s", o.OrganizationID, card.Origin, card.Destination), "")
			if _, err := cmds.SetRateCard(ctx, m, card); err != nil {
				return fmt.Errorf("demo rates: %w", err)
			}
		}
	}
	return nil
}

// demoFlight is the departure of a route days after now's local date at
// its origin, with the arrival worked out in the destination's local
// time. The days are counted on the origin's calendar, not in 24 hours
// from now: across the night the clocks go forward, 23:30 plus a day of
// 24 hours is 00:30 two days on, and that day's flight was never seeded.
func demoFlight(rt demoRoute, now time.Time, days int, ref domain.Lookup) (domain.ScheduleFlight, error) {
	origin, _ := ref.Airport(rt.origin)
	destination, _ := ref.Airport(rt.destination)
	from, err1 := time.LoadLocation(origin.Timezone)
	to, err2 := time.LoadLocation(destination.Timezone)
	if err1 != nil || err2 != nil {
		return domain.ScheduleFlight{}, fmt.Errorf("demo timetable: time zones of %s-%s: %v %v", rt.origin, rt.destination, err1, err2)
	}
	date := now.In(from).AddDate(0, 0, days).Format(time.DateOnly)
	dep, err := time.ParseInLocation("2006-01-02 15:04", date+" "+rt.departs, from)
	if err != nil {
		return domain.ScheduleFlight{}, err
	}
	arr := dep.Add(rt.block).In(to)
	return domain.ScheduleFlight{FlightNumber: rt.flightNumber, Origin: rt.origin, Destination: rt.destination,
		DepartureDate: date, DepartureTime: rt.departs, ArrivalDate: arr.Format(time.DateOnly), ArrivalTime: arr.Format("15:04"),
		AircraftType: rt.aircraft}, nil
}
