package views

import (
	"math"

	"github.com/cargostream/cargostream/domain"
)

// FlightJSON is the spec's flight, with the capacity and time zones a
// cargo system needs beside it.
type FlightJSON struct {
	ID              string  `json:"id"`
	FlightNumber    string  `json:"flightNumber"`
	Origin          string  `json:"origin"`
	Destination     string  `json:"destination"`
	DepartureDate   string  `json:"departureDate"`
	DepartureTime   string  `json:"departureTime"`
	ArrivalDate     string  `json:"arrivalDate"`
	ArrivalTime     string  `json:"arrivalTime"`
	AircraftType    string  `json:"aircraftType"`
	Status          string  `json:"status"`
	OriginZone      string  `json:"originTimezone"`
	DestinationZone string  `json:"destinationTimezone"`
	CapacityKg      float64 `json:"capacityKg"`
	CapacityM3      float64 `json:"capacityM3"`
}

func ToFlightJSON(f domain.Flight) FlightJSON {
	return FlightJSON{ID: f.ID, FlightNumber: f.FlightNumber, Origin: f.Origin, Destination: f.Destination,
		DepartureDate: f.DepartureDate, DepartureTime: f.DepartureTime, ArrivalDate: f.ArrivalDate, ArrivalTime: f.ArrivalTime,
		AircraftType: f.AircraftType, Status: f.Status, OriginZone: f.OriginZone, DestinationZone: f.DestinationZone,
		CapacityKg: f.CapacityKg, CapacityM3: f.CapacityM3}
}

// CapacityJSON is the spec's capacity snapshot of a flight.
type CapacityJSON struct {
	FlightID        string  `json:"flightId"`
	FlightNumber    string  `json:"flightNumber"`
	DepartureDate   string  `json:"departureDate"`
	ProjectedWeight float64 `json:"projectedWeight"`
	ActualWeight    float64 `json:"actualWeight"`
	ProjectedVolume float64 `json:"projectedVolume"`
	ActualVolume    float64 `json:"actualVolume"`
	AvailableWeight float64 `json:"availableWeight"`
	AvailableVolume float64 `json:"availableVolume"`
}

// ToCapacityJSON is a flight's booked (projected) and manifested (actual)
// load, and what is left: capacity less the larger of the two; nothing on
// a flight that takes no more bookings.
func ToCapacityJSON(fl domain.Flight) CapacityJSON {
	c := CapacityJSON{FlightID: fl.ID, FlightNumber: fl.FlightNumber, DepartureDate: fl.DepartureDate,
		ProjectedWeight: round3(fl.ReservedKg), ActualWeight: fl.ActualKg, ProjectedVolume: round3(fl.ReservedM3), ActualVolume: fl.ActualM3}
	if fl.Bookable() {
		c.AvailableWeight = round3(max(0, fl.CapacityKg-max(fl.ReservedKg, fl.ActualKg)))
		c.AvailableVolume = round3(max(0, fl.CapacityM3-max(fl.ReservedM3, fl.ActualM3)))
	}
	return c
}

// round3 hides the float noise of sums (to the gram, or the litre).
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
