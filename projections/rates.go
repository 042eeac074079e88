package projections

import (
	"slices"
	"strings"
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// Rates is the read model of the airlines' rate cards.
type Rates struct {
	mu    sync.RWMutex
	cards map[string]domain.RateCard // by aggregate id
}

// NewRates returns an empty rates read model.
func NewRates() *Rates { return &Rates{cards: map[string]domain.RateCard{}} }

// Apply implements ReadModel.
func (m *Rates) Apply(r domain.Record, e domain.Event) {
	if e, ok := e.(domain.RateCardSet); ok {
		m.mu.Lock()
		m.cards[r.Aggregate.ID] = e.RateCard
		m.mu.Unlock()
	}
}

// RateCards returns the cards of the carriers (of all, for none), by id.
func (m *Rates) RateCards(carriers []string) []domain.RateCard {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []domain.RateCard
	for _, c := range m.cards {
		if len(carriers) == 0 || slices.Contains(carriers, c.Carrier) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b domain.RateCard) int {
		return strings.Compare(domain.RateCardID(a.Carrier, a.Origin, a.Destination), domain.RateCardID(b.Carrier, b.Origin, b.Destination))
	})
	return out
}
