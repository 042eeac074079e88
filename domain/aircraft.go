package domain

// AircraftCapacity is what an aircraft type typically offers for cargo.
type AircraftCapacity struct {
	PayloadKg float64
	VolumeM3  float64
}

// aircraftTypes are typical cargo capacities: the full payload of
// freighters, the lower-deck capacity of passenger wide-bodies. Airlines
// override them per flight when they know better.
var aircraftTypes = map[string]AircraftCapacity{
	"B77F":  {PayloadKg: 102000, VolumeM3: 653},
	"B744F": {PayloadKg: 112000, VolumeM3: 700},
	"B748F": {PayloadKg: 134000, VolumeM3: 858},
	"B763F": {PayloadKg: 52000, VolumeM3: 438},
	"MD11F": {PayloadKg: 91000, VolumeM3: 600},
	"A332F": {PayloadKg: 64000, VolumeM3: 475},
	"A359":  {PayloadKg: 16000, VolumeM3: 120},
	"A35K":  {PayloadKg: 18000, VolumeM3: 140},
	"A333":  {PayloadKg: 15000, VolumeM3: 110},
	"A388":  {PayloadKg: 12000, VolumeM3: 90},
	"B77W":  {PayloadKg: 20000, VolumeM3: 160},
	"B789":  {PayloadKg: 14000, VolumeM3: 110},
	"B788":  {PayloadKg: 12000, VolumeM3: 95},
	"B748":  {PayloadKg: 15000, VolumeM3: 120},
}

// AircraftTypeCapacity returns the typical capacity of an aircraft type.
func AircraftTypeCapacity(typ string) (AircraftCapacity, bool) {
	c, ok := aircraftTypes[typ]
	return c, ok
}
