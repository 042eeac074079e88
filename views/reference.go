package views

import (
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/refdata"
)

// AirportJSON has the fields of domain.Airport, so that one converts to
// the other.
type AirportJSON struct {
	IATACode string `json:"iataCode"`
	ICAOCode string `json:"icaoCode"`
	Name     string `json:"name"`
	City     string `json:"city"`
	Country  string `json:"country"`
	Timezone string `json:"timezone"`
}

func ToAirportJSON(a domain.Airport) AirportJSON { return AirportJSON(a) }

// AirlineJSON has the fields of domain.Airline, so that one converts to
// the other.
type AirlineJSON struct {
	IATACode string `json:"iataCode"`
	ICAOCode string `json:"icaoCode"`
	Name     string `json:"name"`
	Country  string `json:"country"`
	Alliance string `json:"alliance"`
	Prefix   string `json:"prefix"`
}

func ToAirlineJSON(a domain.Airline) AirlineJSON { return AirlineJSON(a) }

type CommodityJSON struct {
	Code           string `json:"code"`
	Name           string `json:"name"`
	HSCode         string `json:"hsCode"`
	DangerousGoods bool   `json:"dangerousGoods"`
	UNNumber       string `json:"unNumber"`
}

func ToCommodityJSON(c domain.KnownCommodity) CommodityJSON {
	return CommodityJSON{Code: c.Code, Name: c.Name, HSCode: c.HSCode, DangerousGoods: c.DangerousGoods, UNNumber: c.UNNumber}
}

// ImportReportJSON tells what an import did with each row.
type ImportReportJSON struct {
	Kind      string             `json:"kind"`
	Format    string             `json:"format"`
	Rows      int                `json:"rows"`      // good rows in the file
	Changed   int                `json:"changed"`   // new or different, now stored
	Unchanged int                `json:"unchanged"` // already stored as they are
	Skipped   int                `json:"skipped"`   // left out on purpose (e.g. airports without an IATA code)
	Rejected  []refdata.RowError `json:"rejected"`  // bad rows, with their lines
}
