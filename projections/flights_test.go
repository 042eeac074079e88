package projections

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// scheduled is the event of a flight from FRA on 2026-12-01, departing at
// hour: "LH1 to JFK at 9" is scheduled("LH1", "JFK", 9).
func scheduled(number, to string, hour int) domain.FlightScheduled {
	id := domain.FlightID(number, "2026-12-01")
	return domain.FlightScheduled{FlightID: id, FlightNumber: number, Origin: "FRA", Destination: to, DepartureDate: "2026-12-01",
		DepartsAt: time.Date(2026, 12, 1, hour, 0, 0, 0, time.UTC)}
}

func publish(m *Flights, flights ...domain.FlightScheduled) {
	for _, f := range flights {
		m.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateFlight, ID: f.FlightID}}, f)
	}
}

// numbers lists the flight numbers of the flights m lists with filter.
func numbers(m *Flights, filter FlightFilter) string {
	page, _ := m.List(filter, 1, 100)
	var out []string
	for _, f := range page {
		out = append(out, f.FlightNumber)
	}
	return strings.Join(out, " ")
}

// Flights are listed by departure, then by id, whatever order they were
// published in, and read between publications.
func TestFlightsAreListedInDepartureOrder(t *testing.T) {
	tests := []struct {
		name         string
		publications [][]domain.FlightScheduled // the list is read after each
		every, toJFK string
	}{
		{"published in departure order",
			[][]domain.FlightScheduled{{scheduled("LH1", "JFK", 7), scheduled("LH2", "ORD", 9), scheduled("LH3", "JFK", 12)}},
			"LH1 LH2 LH3", "LH1 LH3"},
		{"published out of order",
			[][]domain.FlightScheduled{{scheduled("LH0", "JFK", 9), scheduled("LH1", "JFK", 7), scheduled("LH2", "JFK", 12), scheduled("LH3", "JFK", 7)}},
			"LH1 LH3 LH0 LH2", "LH1 LH3 LH0 LH2"},
		{"published later, among those listed",
			[][]domain.FlightScheduled{
				{scheduled("LH1", "JFK", 9), scheduled("LH2", "ORD", 12)},
				{scheduled("LH3", "JFK", 7), scheduled("LH4", "JFK", 10), scheduled("LH5", "ORD", 13)},
				{scheduled("LH6", "JFK", 8)},
			},
			"LH3 LH6 LH1 LH4 LH2 LH5", "LH3 LH6 LH1 LH4"},
		{"published later, at the same time as one listed",
			[][]domain.FlightScheduled{{scheduled("LH2", "JFK", 9)}, {scheduled("LH1", "JFK", 9), scheduled("LH3", "JFK", 9)}},
			"LH1 LH2 LH3", "LH1 LH2 LH3"},
		{"a route's own order apart from the others'",
			[][]domain.FlightScheduled{{scheduled("LH1", "ORD", 6), scheduled("LH2", "JFK", 7)}, {scheduled("LH3", "JFK", 5)}},
			"LH3 LH1 LH2", "LH3 LH2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewFlights()
			for _, p := range tt.publications {
				publish(m, p...)
				numbers(m, FlightFilter{})
			}
			if got := numbers(m, FlightFilter{}); got != tt.every {
				t.Errorf("every flight: %s, want %s", got, tt.every)
			}
			toJFK := FlightFilter{Origin: "FRA", Destination: "JFK"}
			if got := numbers(m, toJFK); got != tt.toJFK {
				t.Errorf("FRA-JFK: %s, want %s", got, tt.toJFK)
			}
			var between []string
			for _, f := range m.FlightsBetween("FRA", "JFK") {
				between = append(between, f.FlightNumber)
			}
			if got := strings.Join(between, " "); got != tt.toJFK {
				t.Errorf("FlightsBetween FRA and JFK: %s, want %s", got, tt.toJFK)
			}
		})
	}
}

// A list read while flights are published out of order holds those
// published so far, in order.
func TestFlightsReadWhileTheyArePublishedAreInOrder(t *testing.T) {
	m := NewFlights()
	season := seasonByFlightNumber(20, 2, 30)
	var wg sync.WaitGroup
	wg.Go(func() { publish(m, season...) })
	byDeparture := func(a, b domain.Flight) int { return a.DepartsAt.Compare(b.DepartsAt) }
	for {
		page, total := m.List(FlightFilter{}, 1, len(season))
		if !slices.IsSortedFunc(page, byDeparture) {
			t.Fatalf("%d flights listed out of departure order", len(page))
		}
		if total == len(season) {
			break
		}
	}
	wg.Wait()
}

// seasonByFlightNumber is a season's timetable as a timetable file (SSIM)
// lists it and an airline publishes it: flight number by flight number,
// each with its every day, so that each flight number's days go in among
// those of the numbers before it.
func seasonByFlightNumber(numbers, routes, days int) []domain.FlightScheduled {
	start := time.Date(2027, 3, 28, 0, 0, 0, 0, time.UTC)
	var out []domain.FlightScheduled
	for n := range numbers {
		for d := range days {
			departs := start.AddDate(0, 0, d).Add(time.Duration(6*60+n*7%960) * time.Minute)
			id := domain.FlightID(fmt.Sprintf("LH%d", 8000+n), departs.Format(time.DateOnly))
			out = append(out, domain.FlightScheduled{FlightID: id, Origin: "FRA", Destination: fmt.Sprintf("X%02d", n%routes),
				DepartureDate: departs.Format(time.DateOnly), DepartsAt: departs})
		}
	}
	return out
}

// BenchmarkFlightsOfASeason replays a season of 300 flight numbers on 10
// routes, 180 days each (54,000 flights), and then lists the first page:
// the work of a start that replays such a timetable. Published flight
// number by flight number, as timetable files list it, and, for a
// baseline, in departure order.
func BenchmarkFlightsOfASeason(b *testing.B) {
	byFlightNumber := seasonByFlightNumber(300, 10, 180)
	byDeparture := slices.SortedStableFunc(slices.Values(byFlightNumber), func(a, b domain.FlightScheduled) int {
		return a.DepartsAt.Compare(b.DepartsAt)
	})
	for _, bm := range []struct {
		name   string
		season []domain.FlightScheduled
	}{{"published by flight number", byFlightNumber}, {"published by departure", byDeparture}} {
		b.Run(bm.name, func(b *testing.B) {
			for b.Loop() {
				m := NewFlights()
				publish(m, bm.season...)
				if page, total := m.List(FlightFilter{}, 1, 10); total != len(bm.season) || len(page) != 10 {
					b.Fatalf("listed %d of %d flights", len(page), total)
				}
			}
			b.ReportMetric(float64(len(bm.season))*float64(b.N)/b.Elapsed().Seconds(), "flights/s")
		})
	}
}
