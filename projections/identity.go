package projections

import (
	"slices"
	"strings"
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// Identity is the read model of organisations and their credentials, used
// to authenticate every request.
type Identity struct {
	mu        sync.RWMutex
	orgs      map[string]domain.Organization
	orgOrder  []string
	clients   map[string]domain.Client
	users     map[string]domain.User   // by lower-case username
	keys      map[string]domain.APIKey // by key id
	keyByHash map[string]string        // key hash → key id
}

// NewIdentity returns an empty identity read model.
func NewIdentity() *Identity {
	return &Identity{
		orgs: map[string]domain.Organization{}, clients: map[string]domain.Client{},
		users: map[string]domain.User{}, keys: map[string]domain.APIKey{}, keyByHash: map[string]string{},
	}
}

// Apply implements ReadModel.
func (m *Identity) Apply(_ domain.Record, e domain.Event) {
	// Only identity events take the write lock: every request reads
	// this model to authenticate, and need not wait for other events.
	change := m.change(e)
	if change == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	change()
}

// change is what e does to the model, or nil for an event of another kind.
func (m *Identity) change(e domain.Event) func() {
	switch e := e.(type) {
	case domain.OrganizationCreated:
		return func() {
			if _, ok := m.orgs[e.OrganizationID]; !ok {
				m.orgOrder = append(m.orgOrder, e.OrganizationID)
			}
			m.orgs[e.OrganizationID] = domain.EvolveOrganization(m.orgs[e.OrganizationID], e)
		}
	case domain.OrganizationRateLimitsSet:
		return func() { m.orgs[e.OrganizationID] = domain.EvolveOrganization(m.orgs[e.OrganizationID], e) }
	case domain.ClientCreated:
		return func() { m.clients[e.ClientID] = domain.EvolveClient(m.clients[e.ClientID], e) }
	case domain.UserCreated:
		return func() {
			key := strings.ToLower(e.Username)
			m.users[key] = domain.EvolveUser(m.users[key], e)
		}
	case domain.APIKeyCreated:
		return func() {
			m.keys[e.KeyID] = domain.EvolveAPIKey(m.keys[e.KeyID], e)
			m.keyByHash[e.KeyHash] = e.KeyID
		}
	case domain.APIKeyRevoked:
		return func() { m.keys[e.KeyID] = domain.EvolveAPIKey(m.keys[e.KeyID], e) }
	}
	return nil
}

// Organization returns an organisation by id.
func (m *Identity) Organization(id string) (domain.Organization, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.orgs[id]
	return o, ok
}

// Organizations lists every organisation, oldest first.
func (m *Identity) Organizations() []domain.Organization {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]domain.Organization, len(m.orgOrder))
	for i, id := range m.orgOrder {
		out[i] = m.orgs[id]
	}
	return out
}

// Client returns an API client by client id.
func (m *Identity) Client(id string) (domain.Client, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c, ok := m.clients[id]
	return c, ok
}

// User returns a user by username, ignoring case.
func (m *Identity) User(username string) (domain.User, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	u, ok := m.users[strings.ToLower(username)]
	return u, ok
}

// APIKeyByHash returns the API key with that hash.
func (m *Identity) APIKeyByHash(hash string) (domain.APIKey, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	k, ok := m.keys[m.keyByHash[hash]]
	return k, ok
}

// APIKeys lists an organisation's keys (all keys for orgID ""), by id.
func (m *Identity) APIKeys(orgID string) []domain.APIKey {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []domain.APIKey
	for _, k := range m.keys {
		if orgID == "" || k.OrganizationID == orgID {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b domain.APIKey) int { return strings.Compare(a.KeyID, b.KeyID) })
	return out
}

// AirlineWithPrefix reports whether an airline with that AWB prefix uses
// the service.
func (m *Identity) AirlineWithPrefix(prefix string) bool {
	_, ok := m.Airline(prefix, "")
	return ok
}

// Airline is the airline organisation with the AWB prefix or, if code is
// given, the IATA code.
func (m *Identity) Airline(prefix, code string) (domain.Organization, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, o := range m.orgs {
		if o.Role == domain.RoleAirline && (o.AWBPrefix == prefix || (code != "" && strings.EqualFold(o.AirlineCode, code))) {
			return o, true
		}
	}
	return domain.Organization{}, false
}
