package eventstore

import (
	"fmt"

	"github.com/cargostream/cargostream/domain"
)

// Upcaster turns the payload of an event stored with an older schema
// version into the payload of the next version. History is never
// rewritten: upcasters run each time an old event is read.
type Upcaster func(data []byte) ([]byte, error)

type upcasterKey struct {
	eventType   string
	fromVersion int
}

// RegisterUpcaster makes events of eventType stored at fromVersion readable
// as fromVersion+1. Chains of upcasters bring old events to the newest
// version. Register before reading.
func (s *Store) RegisterUpcaster(eventType string, fromVersion int, u Upcaster) {
	s.upcasters[upcasterKey{eventType, fromVersion}] = u
}

func (s *Store) upcast(r domain.Record) (domain.Record, error) {
	for {
		u, ok := s.upcasters[upcasterKey{r.Type, r.SchemaVersion}]
		if !ok {
			return r, nil
		}
		data, err := u(r.Data)
		if err != nil {
			return r, fmt.Errorf("eventstore: upcasting %s v%d at sequence %d: %w", r.Type, r.SchemaVersion, r.Sequence, err)
		}
		r.Data = data
		r.SchemaVersion++
	}
}
