package commands

import (
	"context"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/storetest"
)

func TestAChangeNamingAVersionIsStoredOnlyIfTheAggregateIsStillAtIt(t *testing.T) {
	store := storetest.Open(t)
	ctx := context.Background()
	lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	// Two replicas on one store: each keeps its own cache of the flight.
	here, there := New(store, 4, builtinReference()), New(store, 4, builtinReference())
	date := time.Now().UTC().AddDate(0, 0, 5).Format(time.DateOnly)
	scheduled, err := here.ScheduleFlights(ctx, NewMeta(lh, "", ""), []domain.ScheduleFlight{{FlightNumber: "LH100", Origin: "FRA", Destination: "LHR",
		DepartureDate: date, DepartureTime: "09:00", ArrivalDate: date, ArrivalTime: "10:10", AircraftType: "A333"}})
	if err != nil {
		t.Fatal(err)
	}
	id, v1 := scheduled[0].State.ID, scheduled[0].Version
	if v1 == 0 || v1 != scheduled[0].Sequence {
		t.Fatalf("a new flight's version = %d, its sequence %d", v1, scheduled[0].Sequence)
	}
	at := func(v uint64) Meta { m := NewMeta(lh, "", ""); m.IfVersion = &v; return m }

	// The other replica changes it; this one's cache still holds v1.
	delayed, err := there.ChangeFlightStatus(ctx, at(v1), id, domain.ChangeFlightStatus{Status: domain.FlightStatusDelayed})
	if err != nil || delayed.Version <= v1 {
		t.Fatalf("a change at the current version = %+v, %v", delayed, err)
	}
	if _, err := here.ChangeFlightStatus(ctx, at(v1), id, domain.ChangeFlightStatus{Status: domain.FlightStatusCancelled}); domain.ErrorCode(err) != domain.PreconditionFailed {
		t.Errorf("a change at a version another replica moved past = %v, want precondition_failed", err)
	}
	if _, err := there.ChangeFlightStatus(ctx, at(v1+1000), id, domain.ChangeFlightStatus{Status: domain.FlightStatusCancelled}); domain.ErrorCode(err) != domain.PreconditionFailed {
		t.Errorf("a change at a version never reached = %v, want precondition_failed", err)
	}
	recs, err := store.Load(ctx, flightAggregate(id))
	if err != nil || len(recs) != 2 || recs[1].Sequence != delayed.Version {
		t.Fatalf("the flight's events = %d (%v); want the schedule and the delay only", len(recs), err)
	}
	// Without a version, a change applies to the flight as it is.
	cancelled, err := here.ChangeFlightStatus(ctx, NewMeta(lh, "", ""), id, domain.ChangeFlightStatus{Status: domain.FlightStatusCancelled})
	if err != nil || cancelled.State.Status != domain.FlightStatusCancelled || cancelled.Version <= delayed.Version {
		t.Errorf("a change without a version = %+v, %v", cancelled, err)
	}
}
