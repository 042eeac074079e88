package projections

import (
	"strings"
	"testing"

	"github.com/cargostream/cargostream/domain"
)

func TestStockLedgersAreListedByOrganisationThenPrefix(t *testing.T) {
	admin := domain.Principal{OrganizationID: "ops", Role: domain.RoleAdmin}
	tests := []struct {
		name    string
		ledgers [][2]string // organisation, prefix
		want    string
	}{
		{"one organisation's prefixes in order", [][2]string{{"f1", "176"}, {"f1", "020"}}, "f1/020 f1/176"},
		{"organisations in order", [][2]string{{"f2", "020"}, {"f1", "020"}}, "f1/020 f2/020"},
		{"an organisation before those its id begins", [][2]string{{"f1", "020"}, {"f", "176"}}, "f/176 f1/020"},
		{"an organisation with a digit after another's id", [][2]string{{"acme1", "020"}, {"acme", "999"}}, "acme/999 acme1/020"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewAWBStock()
			for _, l := range tt.ledgers {
				m.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateStockLedger, ID: l[0] + "-" + l[1]}},
					domain.StockAllocated{OrganizationID: l[0], Prefix: l[1],
						Range: domain.LedgerRange{RequestID: "r-" + l[0] + l[1], Range: domain.AWBRange{First: 1, Count: 1}}})
			}
			var got []string
			for _, l := range m.Ledgers(admin) {
				got = append(got, l.OrganizationID+"/"+l.Prefix)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("ledgers = %v, want %s", got, tt.want)
			}
		})
	}
}
