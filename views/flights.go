package views

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// FlightJSON is the spec's flight, with the capacity and time zones a
// cargo system needs beside it.
type FlightJSON struct {
	ID              string `json:"id"`
	FlightNumber    string `json:"flightNumber"`
	Origin          string `json:"origin"`
	Destination     string `json:"destination"`
	DepartureDate   string `json:"departureDate"`
	DepartureTime   string `json:"departureTime"`
	ArrivalDate     string `json:"arrivalDate"`
	ArrivalTime     string `json:"arrivalTime"`
	AircraftType    string `json:"aircraftType"`
	Status          string `json:"status"`
	OriginZone      string `json:"originTimezone"`
	DestinationZone string `json:"destinationTimezone"`
	// DepartsAt and ArrivesAt are the local times above in UTC, for
	// systems that order or compare flights across time zones.
	DepartsAt time.Time `json:"departsAt,omitzero"`
	ArrivesAt time.Time `json:"arrivesAt,omitzero"`
	// The estimate of the flight's latest delay report, if it gave one
	// (see domain.Flight).
	EstimatedDepartsAt time.Time `json:"estimatedDepartsAt,omitzero"`
	EstimatedArrivesAt time.Time `json:"estimatedArrivesAt,omitzero"`
	// When the airline reported it departed and arrived.
	DepartedAt time.Time `json:"departedAt,omitzero"`
	ArrivedAt  time.Time `json:"arrivedAt,omitzero"`
	CapacityKg float64   `json:"capacityKg"`
	CapacityM3 float64   `json:"capacityM3"`
}

func ToFlightJSON(f domain.Flight) FlightJSON {
	return FlightJSON{ID: f.ID, FlightNumber: f.FlightNumber, Origin: f.Origin, Destination: f.Destination,
		DepartureDate: f.DepartureDate, DepartureTime: f.DepartureTime, ArrivalDate: f.ArrivalDate, ArrivalTime: f.ArrivalTime,
		AircraftType: f.AircraftType, Status: f.Status, OriginZone: f.OriginZone, DestinationZone: f.DestinationZone,
		DepartsAt: f.DepartsAt, ArrivesAt: f.ArrivesAt(), EstimatedDepartsAt: f.EstimatedDepartsAt, EstimatedArrivesAt: f.EstimatedArrivesAt,
		DepartedAt: f.DepartedAt, ArrivedAt: f.ArrivedAt, CapacityKg: f.CapacityKg, CapacityM3: f.CapacityM3}
}

// FlightStatusJSON is the data of a flight.status webhook: the flight as
// GET /api/flights shows it, with its status before and when it changed,
// and to a forwarder the ids of its own bookings on it.
type FlightStatusJSON struct {
	FlightJSON
	PreviousStatus string    `json:"previousStatus"`
	ChangedAt      time.Time `json:"changedAt"`
	BookingIDs     []string  `json:"bookingIds,omitempty"` // the airline's has none: it lists them with GET /api/bookings
}

// renderFlightStatus is the webhook data of a flight's status change, for
// those it is told to (domain.Flight.StatusToldTo). The flight shows the
// status and the estimate the event set: the read model may hold a later
// one already, as delayed, then cancelled, or delayed again.
func (r *Renderer) renderFlightStatus(e domain.FlightStatusChanged, p domain.Principal) (any, bool) {
	f, ids, told := r.flightToldTo(e.FlightID, e, p)
	if !told {
		return nil, false
	}
	return FlightStatusJSON{FlightJSON: f, PreviousStatus: e.Previous, ChangedAt: e.ChangedAt, BookingIDs: ids}, true
}

// flightToldTo is flight id as event e made it, if p is told of e (see
// domain.Flight.StatusToldTo), with p's own bookings on it.
func (r *Renderer) flightToldTo(id string, e domain.Event, p domain.Principal) (_ FlightJSON, bookingIDs []string, told bool) {
	f, _ := r.Flights.Get(id)
	ids, told := f.StatusToldTo(p, func() []domain.Booking { return r.Bookings.OnFlight(p, f.ID) })
	if !told {
		return FlightJSON{}, nil, false
	}
	return ToFlightJSON(domain.EvolveFlight(f, e)), ids, true
}

// FlightAircraftJSON is the data of a flight.aircraft webhook: the flight
// as GET /api/flights shows it, with the aircraft and capacity it had
// before and when they changed, and to a forwarder the ids of its own
// bookings on it.
type FlightAircraftJSON struct {
	FlightJSON
	PreviousAircraftType string    `json:"previousAircraftType"`
	PreviousCapacityKg   float64   `json:"previousCapacityKg"`
	PreviousCapacityM3   float64   `json:"previousCapacityM3"`
	ChangedAt            time.Time `json:"changedAt"`
	BookingIDs           []string  `json:"bookingIds,omitempty"`
}

// renderFlightAircraft is the webhook data of a flight's change of
// aircraft, for those a change of its status is told to (a forwarder
// booked on it learns that its cargo flies on another aircraft). The
// flight shows the aircraft the event set, as renderFlightStatus does.
func (r *Renderer) renderFlightAircraft(e domain.FlightAircraftChanged, p domain.Principal) (any, bool) {
	f, ids, told := r.flightToldTo(e.FlightID, e, p)
	if !told {
		return nil, false
	}
	return FlightAircraftJSON{FlightJSON: f, PreviousAircraftType: e.PreviousAircraftType, PreviousCapacityKg: e.PreviousCapacityKg,
		PreviousCapacityM3: e.PreviousCapacityM3, ChangedAt: e.ChangedAt, BookingIDs: ids}, true
}

// FlightVersion is the version of flight f, which is at version, as p
// may see it: that version (its last event's stream sequence) to those
// who see its load (domain.Flight.LoadVisibleTo), who send it back as
// If-Match; to everyone else a digest of the flight as shown, which moves
// only when that does. The sequence moves with every booking, manifest
// and offload: polled, it would count a flight's bookings for a
// competitor, which the capacity view's steps hide.
func FlightVersion(f domain.Flight, p domain.Principal, version uint64) uint64 {
	if f.LoadVisibleTo(p) {
		return version
	}
	shown, _ := json.Marshal(ToFlightJSON(f)) // strings and numbers: cannot fail
	h := fnv.New64a()
	h.Write(shown)
	return h.Sum64()
}

// CapacityJSON is the spec's capacity snapshot of a flight. The load
// (projected and actual) is left out for those who may not see it
// (domain.Flight.LoadVisibleTo).
type CapacityJSON struct {
	FlightID        string   `json:"flightId"`
	FlightNumber    string   `json:"flightNumber"`
	DepartureDate   string   `json:"departureDate"`
	ProjectedWeight *float64 `json:"projectedWeight,omitempty"`
	ActualWeight    *float64 `json:"actualWeight,omitempty"`
	ProjectedVolume *float64 `json:"projectedVolume,omitempty"`
	ActualVolume    *float64 `json:"actualVolume,omitempty"`
	AvailableWeight float64  `json:"availableWeight"`
	AvailableVolume float64  `json:"availableVolume"`
}

// ToCapacityJSON is a flight's capacity as p may see it at now: the
// booked (projected) and manifested (actual) load, to its airline and
// admins, and what is left (see domain.Flight.Available).
func ToCapacityJSON(fl domain.Flight, p domain.Principal, now time.Time) CapacityJSON {
	c := CapacityJSON{FlightID: fl.ID, FlightNumber: fl.FlightNumber, DepartureDate: fl.DepartureDate}
	c.AvailableWeight, c.AvailableVolume = fl.Available(p, now)
	if fl.LoadVisibleTo(p) {
		c.ProjectedWeight, c.ActualWeight = new(round3(fl.ReservedKg)), new(fl.ActualKg)
		c.ProjectedVolume, c.ActualVolume = new(round3(fl.ReservedM3)), new(fl.ActualM3)
	}
	return c
}

// round3 hides the float noise of sums (to the gram, or the litre). A sum
// of reservations all released may be left a hair below zero, which
// rounds to -0, and JSON would write -0: nothing booked is 0.
func round3(v float64) float64 {
	if r := math.Round(v*1000) / 1000; r != 0 {
		return r
	}
	return 0
}
