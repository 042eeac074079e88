package projections

import (
	"testing"

	"github.com/cargostream/cargostream/domain"
)

func TestQuoteVersionIsTheSequenceOfItsLastEvent(t *testing.T) {
	m := NewQuotes()
	record := func(id string, seq uint64) domain.Record {
		return domain.Record{Aggregate: domain.Aggregate{Type: "quote", ID: id}, Sequence: seq}
	}
	m.Apply(record("q1", 3), domain.QuoteRequested{QuoteID: "q1", OrganizationID: "f1"})
	m.Apply(record("q2", 5), domain.QuoteRequested{QuoteID: "q2", OrganizationID: "f2"})
	m.Apply(record("q1", 8), domain.QuoteRejected{Reason: "no flights"})
	for _, c := range []struct {
		name    string
		who     domain.Principal
		id      string
		version uint64
		found   bool
	}{
		{"a changed quote has its last event's sequence", domain.Principal{Role: domain.RoleForwarder, OrganizationID: "f1"}, "q1", 8, true},
		{"an unchanged quote has its first", domain.Principal{Role: domain.RoleAdmin}, "q2", 5, true},
		{"another forwarder's quote is not found", domain.Principal{Role: domain.RoleForwarder, OrganizationID: "f1"}, "q2", 0, false},
		{"an unknown quote is not found", domain.Principal{Role: domain.RoleAdmin}, "q3", 0, false},
	} {
		q, version, found := m.GetVersion(c.who, c.id)
		if found != c.found || version != c.version || (found && q.ID != c.id) {
			t.Errorf("%s: = %s %d %v, want %d %v", c.name, q.ID, version, found, c.version, c.found)
		}
	}
}
