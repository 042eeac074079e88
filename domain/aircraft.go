package domain

import "slices"

// AircraftCapacity is what an aircraft type typically offers for cargo.
type AircraftCapacity struct {
	PayloadKg float64
	VolumeM3  float64
	// Passenger: the type carries passengers, and cargo in its lower
	// deck, none of it for cargo aircraft only (CAO).
	Passenger bool
}

// aircraftTypes are typical cargo capacities: the full payload of
// freighters, the lower-deck capacity of passenger wide-bodies. Airlines
// override them per flight when they know better.
//
// A type is known by its ICAO designator (A359) and by its IATA code
// (359), which timetables in SSIM print. ICAO gives a freighter and its
// passenger model one designator (B748 is the 747-8F and the 747-8I), so
// the freighters are also known by the designator with an F (B748F), and
// the bare designator is the passenger model: goods for cargo aircraft
// only are then never offered on a passenger aircraft published by its
// designator. IATA codes tell them apart (74N, 74H).
var aircraftTypes = map[string]AircraftCapacity{
	"B77F":  {PayloadKg: 102000, VolumeM3: 653},
	"B744F": {PayloadKg: 112000, VolumeM3: 700},
	"B748F": {PayloadKg: 134000, VolumeM3: 858},
	"B763F": {PayloadKg: 52000, VolumeM3: 438},
	"MD11F": {PayloadKg: 91000, VolumeM3: 600},
	"A332F": {PayloadKg: 64000, VolumeM3: 475},
	"A359":  {PayloadKg: 16000, VolumeM3: 120, Passenger: true},
	"A35K":  {PayloadKg: 18000, VolumeM3: 140, Passenger: true},
	"A333":  {PayloadKg: 15000, VolumeM3: 110, Passenger: true},
	"A388":  {PayloadKg: 12000, VolumeM3: 90, Passenger: true},
	"B77W":  {PayloadKg: 20000, VolumeM3: 160, Passenger: true},
	"B789":  {PayloadKg: 14000, VolumeM3: 110, Passenger: true},
	"B788":  {PayloadKg: 12000, VolumeM3: 95, Passenger: true},
	"B748":  {PayloadKg: 15000, VolumeM3: 120, Passenger: true},
}

// iataAircraftCodes are the IATA codes of the types in aircraftTypes.
var iataAircraftCodes = map[string]string{
	"77X": "B77F", "74Y": "B744F", "74N": "B748F", "76X": "B763F", "M1F": "MD11F", "33X": "A332F",
	"359": "A359", "351": "A35K", "333": "A333", "388": "A388", "77W": "B77W", "789": "B789", "788": "B788",
	"74H": "B748",
}

// AircraftTypeCapacity returns the typical capacity of an aircraft type.
func AircraftTypeCapacity(typ string) (AircraftCapacity, bool) {
	if designator, ok := iataAircraftCodes[typ]; ok {
		typ = designator
	}
	c, ok := aircraftTypes[typ]
	return c, ok
}

// cargoAircraftOnly is the special handling code of goods forbidden on
// passenger aircraft, such as lithium ion batteries on their own (UN3480).
const cargoAircraftOnly = "CAO"

// passengerAircraftForbidden are the dangerous goods whose entries in the
// IATA DGR list forbid them on passenger aircraft whatever their packing,
// known without reference data: lithium metal and lithium ion batteries on
// their own, the built-in commodities RLM and RLI. The loaded dangerous-
// goods table names the others (KnownCommodity.PassengerAircraftForbidden).
var passengerAircraftForbidden = []string{"UN3090", "UN3480"}

// PassengerAircraft reports whether the flight's aircraft type is one the
// service knows to carry passengers. A type the service does not know is
// the airline's to judge, as its rate card's codes are.
func (f Flight) PassengerAircraft() bool {
	t, _ := AircraftTypeCapacity(f.AircraftType)
	return t.Passenger
}

// forbiddenOnPassengerAircraft reports whether goods may fly on no
// passenger aircraft: those marked for cargo aircraft only (special
// handling code CAO in shc), and dangerous goods of a UN number no packing
// lets on one (unNumber: of the goods' e-DGD or reference commodity, ""
// for none), as the built-in list or the reference data ref (nil for
// none) says. Pricing and the e-DGD ask this one rule, and the manifest
// what the e-DGD recorded of it, so that no quote offers a flight whose
// manifest would refuse the goods.
func forbiddenOnPassengerAircraft(ref Lookup, shc []string, unNumber string) bool {
	if slices.Contains(shc, cargoAircraftOnly) || slices.Contains(passengerAircraftForbidden, unNumber) {
		return true
	}
	if unNumber == "" {
		return false
	}
	known, ok := lookupDangerousGood(ref, unNumber)
	return ok && known.PassengerAircraftForbidden
}

// RefuseOnPassengerAircraft is the refusal, commodity_not_accepted, of a
// booking's confirmation on flight f when its goods may fly on no
// passenger aircraft (forbiddenOnPassengerAircraft, by its handling codes
// and the UN number ref knows of its commodity) and a passenger aircraft
// now flies f: the quote was priced while a freighter flew it, the
// pricing offers the flight no more, and its manifest would refuse them.
// A booking confirmed before the aircraft changed stands (it is not asked
// again).
func RefuseOnPassengerAircraft(b Booking, f Flight, ref Lookup) error {
	if !f.PassengerAircraft() {
		return nil
	}
	if !forbiddenOnPassengerAircraft(ref, b.SHC, knownCommodity(ref, b.Commodity).UNNumber) {
		return nil
	}
	return Refusal(ReasonCommodityNotAccepted, "the goods of booking %s are for cargo aircraft only, and flight %s is now flown by a passenger aircraft (%s)",
		b.ID, f.ID, f.AircraftType)
}
