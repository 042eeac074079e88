package projections

import (
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// Documents is the read model of uploaded documents, by id and by AWB
// number, and what each organisation's files take. The files themselves
// are in the object store.
type Documents struct {
	mu     sync.RWMutex
	byID   map[string]domain.DocumentUploaded
	byAWB  map[string][]domain.DocumentUploaded // in upload order
	stored map[string]DocumentsStored           // by the uploader's organisation
}

// DocumentsStored is what an organisation has uploaded: how many
// documents, and the bytes of their files.
type DocumentsStored struct {
	Documents int
	Bytes     int64
}

// NewDocuments returns an empty documents read model.
func NewDocuments() *Documents {
	return &Documents{byID: map[string]domain.DocumentUploaded{}, byAWB: map[string][]domain.DocumentUploaded{},
		stored: map[string]DocumentsStored{}}
}

// Apply implements ReadModel.
func (m *Documents) Apply(_ domain.Record, e domain.Event) {
	d, ok := e.(domain.DocumentUploaded)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.stored[d.OrganizationID]
	st.Documents++
	st.Bytes += d.Size
	m.stored[d.OrganizationID] = st
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

// StoredBy returns what organisation org has uploaded.
func (m *Documents) StoredBy(org string) DocumentsStored {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.stored[org]
}
