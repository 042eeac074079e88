package domain

import "testing"

// A timetable in SSIM prints IATA's codes: each names the same type, with
// the same capacity and passenger deck, as the designator the service
// knows it by. ICAO's B748 is the passenger model, as 74H is; the
// freighter is 74N or B748F.
func TestAnAircraftTypeIsKnownByItsIATACodeAsByItsDesignator(t *testing.T) {
	tests := []struct {
		iata, designator string
		passenger        bool
	}{
		{"77X", "B77F", false},
		{"74Y", "B744F", false},
		{"74N", "B748F", false},
		{"76X", "B763F", false},
		{"M1F", "MD11F", false},
		{"33X", "A332F", false},
		{"359", "A359", true},
		{"351", "A35K", true},
		{"333", "A333", true},
		{"388", "A388", true},
		{"77W", "B77W", true},
		{"789", "B789", true},
		{"788", "B788", true},
		{"74H", "B748", true},
	}
	for _, tt := range tests {
		t.Run(tt.iata, func(t *testing.T) {
			byCode, ok := AircraftTypeCapacity(tt.iata)
			if !ok {
				t.Fatalf("%s is not known", tt.iata)
			}
			byDesignator, _ := AircraftTypeCapacity(tt.designator)
			if byCode != byDesignator || byCode.Passenger != tt.passenger {
				t.Errorf("%s is %+v, want %s's %+v with passenger %v", tt.iata, byCode, tt.designator, byDesignator, tt.passenger)
			}
		})
	}
}

// Every IATA code names a type the service knows: a code added with a
// designator misspelt would be a type of no capacity.
func TestEveryIATACodeNamesAKnownType(t *testing.T) {
	for code, designator := range iataAircraftCodes {
		if _, ok := aircraftTypes[designator]; !ok {
			t.Errorf("%s names %s, which is no known type", code, designator)
		}
	}
}
