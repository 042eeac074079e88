package projections

import (
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// Documents is the read model of uploaded documents, by id and by AWB
// number. The files themselves are in the object store.
type Documents struct {
	mu    sync.RWMutex
	byID  map[string]domain.DocumentUploaded
	byAWB map[string][]domain.DocumentUploaded // in upload order
}

// NewDocuments returns an empty documents read model.
func NewDocuments() *Documents {
	return &Documents{byID: map[string]domain.DocumentUploaded{}, byAWB: map[string][]domain.DocumentUploaded{}}
}

// Apply implements ReadModel.
func (m *Documents) Apply(_ domain.Record, e domain.Event) {
	d, ok := e.(domain.DocumentUploaded)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byID[d.DocumentID] = d
	// A slice handed out by ByAWB is never written to again.
	list := m.byAWB[d.AWBNumber]
	m.byAWB[d.AWBNumber] = append(list[:len(list):len(list)], d)
}

// Get returns a document by id.
func (m *Documents) Get(id string) (domain.DocumentUploaded, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.byID[id]
	return d, ok
}

// ByAWB returns the documents of an AWB number in upload order. The
// caller must not change the slice.
func (m *Documents) ByAWB(awb string) []domain.DocumentUploaded {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.byAWB[awb]
}
