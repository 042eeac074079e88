package projections

import (
	"fmt"
	"testing"

	"github.com/cargostream/cargostream/domain"
)

// Two airports, or two airlines, may share an ICAO code (OpenFlights gives
// Berlin's old airport and its new one EDDB): a look-up by it finds both,
// and one that takes another code leaves the other found.
func TestALookUpByICAOCodeFindsEveryHolderOfIt(t *testing.T) {
	m := NewReference()
	m.Apply(domain.Record{}, domain.ReferenceChanged{
		Airports: []domain.Airport{
			{IATACode: "BER", ICAOCode: "EDDB", Name: "Berlin Brandenburg", Country: "DE", Timezone: "Europe/Berlin"},
			{IATACode: "SXF", ICAOCode: "EDDB", Name: "Berlin-Schönefeld", Country: "DE", Timezone: "Europe/Berlin"},
		},
		Airlines: []domain.Airline{{IATACode: "OG", ICAOCode: "FPY", Name: "Fly Play"}, {IATACode: "BU", ICAOCode: "FPY", Name: "Other"}},
	})
	airports := func(icao string) string {
		found, total := m.Airports(AirportFilter{ICAOCode: icao}, 1, 10)
		var codes []string
		for _, a := range found {
			codes = append(codes, a.IATACode)
		}
		return fmt.Sprint(codes, total)
	}
	if got := airports("EDDB"); got != "[BER SXF] 2" {
		t.Errorf("EDDB: %s, want BER and SXF", got)
	}
	if found, total := m.Airlines(AirlineFilter{ICAOCode: "FPY"}, 1, 10); total != 2 || len(found) != 2 {
		t.Errorf("FPY: %d airlines, %v", total, found)
	}
	m.Apply(domain.Record{}, domain.ReferenceChanged{Airports: []domain.Airport{
		{IATACode: "SXF", ICAOCode: "EDDX", Name: "Berlin-Schönefeld", Country: "DE", Timezone: "Europe/Berlin"},
	}})
	if got, moved := airports("EDDB"), airports("EDDX"); got != "[BER] 1" || moved != "[SXF] 1" {
		t.Errorf("once SXF is EDDX: EDDB %s, EDDX %s", got, moved)
	}
}
