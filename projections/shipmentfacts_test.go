package projections

import (
	"fmt"
	"testing"

	"github.com/cargostream/cargostream/domain"
)

func TestShipmentFacts(t *testing.T) {
	booked, waybilled, stocked, unknown := domain.AWBNumber("020", 31), domain.AWBNumber("020", 50), domain.AWBNumber("020", 35), domain.AWBNumber("020", 99)
	facts := ShipmentFacts{Bookings: NewBookings(), Shipments: NewShipments(), Stock: NewAWBStock(), Flights: NewFlights()}
	apply := func(m ReadModel, aggregate, id string, events ...domain.Event) {
		for _, e := range events {
			m.Apply(domain.Record{Aggregate: domain.Aggregate{Type: aggregate, ID: id}}, e)
		}
	}
	apply(facts.Flights, domain.AggregateFlight, "LH8402-2026-11-25", domain.FlightScheduled{FlightID: "LH8402-2026-11-25", Carrier: "LH", Origin: "FRA"})
	apply(facts.Bookings, domain.AggregateBooking, "b1", domain.BookingRequested{BookingID: "b1", FlightID: "LH8402-2026-11-25", OrganizationID: "f1"},
		domain.BookingConfirmed{BookingID: "b1", FlightID: "LH8402-2026-11-25", AWBNumber: booked})
	apply(facts.Shipments, domain.AggregateWaybill, booked, domain.MAWBCreated{AWBNumber: booked, OrganizationID: "f2", Origin: "FRA"})
	apply(facts.Shipments, domain.AggregateWaybill, waybilled, domain.MAWBCreated{AWBNumber: waybilled, OrganizationID: "f2", Origin: "MUC"})
	apply(facts.Stock, domain.AggregateStockLedger, "f3/020", domain.StockAllocated{OrganizationID: "f3", Prefix: "020",
		Range: domain.LedgerRange{RequestID: "r1", Range: domain.AWBRange{First: 30, Count: 10}}})

	ownership := []struct {
		name, awb string
		want      domain.ShipmentOwnership
	}{
		{"a booked, waybilled and stocked number has all three facts", booked, domain.ShipmentOwnership{AWBNumber: booked, BookedBy: "f1", WaybilledBy: "f2", StockHolder: "f3"}},
		{"a waybilled number has only its MAWB's forwarder", waybilled, domain.ShipmentOwnership{AWBNumber: waybilled, WaybilledBy: "f2"}},
		{"a number of stock has only its holder", stocked, domain.ShipmentOwnership{AWBNumber: stocked, StockHolder: "f3"}},
		{"an unknown number has none", unknown, domain.ShipmentOwnership{AWBNumber: unknown}},
	}
	for _, tt := range ownership {
		if got := facts.Ownership(tt.awb); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}

	manifest := []struct {
		name, awb string
		want      string // booking|its flight|that flight's origin|the MAWB's origin
	}{
		{"a booked number has its booking, the booking's flight and its MAWB", booked, "b1|LH8402-2026-11-25|FRA|FRA"},
		{"a waybilled number has only its MAWB", waybilled, "|||MUC"},
		{"an unknown number has none", unknown, "|||"},
	}
	for _, tt := range manifest {
		f := facts.ForManifest(tt.awb)
		mawbOrigin := ""
		if f.MAWB != nil {
			mawbOrigin = f.MAWB.Origin
		}
		if got := fmt.Sprintf("%s|%s|%s|%s", f.Booking.ID, f.BookedFlight.ID, f.BookedFlight.Origin, mawbOrigin); got != tt.want || f.AWBNumber != tt.awb {
			t.Errorf("%s: %q of %s, want %q", tt.name, got, f.AWBNumber, tt.want)
		}
	}
}
