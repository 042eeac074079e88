package projections

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

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

	// Token revocation, checked on every request with a token after its
	// signature: tokens issued before revokedBefore of their subject
	// ("client:<id>", "user:<username>") or of "org:<id>" are refused, and
	// so are the revoked ids (jti), each kept only until every token that
	// can carry it has expired.
	revokedBefore map[string]time.Time
	revokedIDs    map[string]time.Time // jti → when to forget it
}

// NewIdentity returns an empty identity read model.
func NewIdentity() *Identity {
	return &Identity{
		orgs: map[string]domain.Organization{}, clients: map[string]domain.Client{},
		users: map[string]domain.User{}, keys: map[string]domain.APIKey{}, keyByHash: map[string]string{},
		revokedBefore: map[string]time.Time{}, revokedIDs: map[string]time.Time{},
	}
}

// Apply implements ReadModel.
func (m *Identity) Apply(r domain.Record, e domain.Event) {
	// Only identity events take the write lock: every request reads
	// this model to authenticate, and need not wait for other events.
	change := m.change(r, e)
	if change == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	change()
}

// change is what e, stored as r, does to the model, or nil for an event
// of another kind.
func (m *Identity) change(r domain.Record, e domain.Event) func() {
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
	// Disabling, deleting and a new secret or password revoke the tokens
	// issued before: enabling again does not bring them back. Enabling
	// revokes them too: a replica that had not yet applied the disable
	// may have issued a token while it held, which the enable must not
	// make good.
	case domain.OrganizationStatusChanged:
		return func() {
			m.orgs[e.OrganizationID] = domain.EvolveOrganization(m.orgs[e.OrganizationID], e)
			m.revokeBefore(orgSubject(e.OrganizationID), e.ChangedAt, r)
		}
	case domain.ClientStatusChanged:
		return func() {
			m.clients[e.ClientID] = domain.EvolveClient(m.clients[e.ClientID], e)
			m.revokeBefore("client:"+e.ClientID, e.ChangedAt, r)
		}
	case domain.ClientSecretRotated:
		return func() {
			m.clients[e.ClientID] = domain.EvolveClient(m.clients[e.ClientID], e)
			m.revokeBefore("client:"+e.ClientID, e.SetAt, r)
		}
	case domain.UserStatusChanged:
		return func() {
			key := strings.ToLower(e.Username)
			m.users[key] = domain.EvolveUser(m.users[key], e)
			m.revokeBefore("user:"+e.Username, e.ChangedAt, r)
		}
	case domain.UserPasswordSet:
		return func() {
			key := strings.ToLower(e.Username)
			m.users[key] = domain.EvolveUser(m.users[key], e)
			m.revokeBefore("user:"+e.Username, e.SetAt, r)
		}
	case domain.TokensRevoked:
		return func() { m.revoke(e, r) }
	}
	return nil
}

// orgSubject is the key of an organisation's tokens in revokedBefore.
func orgSubject(id string) string { return "org:" + id }

// revokeBefore revokes the tokens of subject issued before the revocation
// r was decided, and those issued before it was stored too: a token
// request that read a secret or password while its change waited to be
// stored, and checked it against the old one, was granted on a credential
// already withdrawn. Both times are in the stream, the same on every
// replica.
func (m *Identity) revokeBefore(subject string, decided time.Time, r domain.Record) {
	at := decided
	if r.StoredAt.After(at) {
		at = r.StoredAt
	}
	if at.After(m.revokedBefore[subject]) {
		m.revokedBefore[subject] = at
	}
}

// revoke applies a revocation. Each revoked jti forgets those that have
// expired by now (the event's time, the same on every replica): there are
// never more of them than were revoked within a token's lifetime.
func (m *Identity) revoke(e domain.TokensRevoked, r domain.Record) {
	switch e.Scope {
	case domain.RevokeToken:
		for id, until := range m.revokedIDs {
			if until.Before(e.RevokedAt) {
				delete(m.revokedIDs, id)
			}
		}
		m.revokedIDs[e.JTI] = e.KeepUntil
	case domain.RevokeSubject:
		m.revokeBefore(e.Subject, e.IssuedBefore, r)
	case domain.RevokeOrganization:
		m.revokeBefore(orgSubject(e.OrganizationID), e.IssuedBefore, r)
	}
}

// TokenRefusal is why a token with a good signature is refused: it was
// revoked, or its client or user is no longer active (its organisation's
// status is checked with every credential's); "" when it is not. Issue
// times have whole milliseconds (whole seconds for tokens from before):
// a token issued in the millisecond of a revocation counts as issued
// before it (see IssueTime).
func (m *Identity) TokenRefusal(subject, orgID, jti string, issuedAt time.Time) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if _, ok := m.revokedIDs[jti]; ok && jti != "" {
		return "the access token has been revoked"
	}
	for _, key := range []string{subject, orgSubject(orgID)} {
		if before, ok := m.revokedBefore[key]; ok && !issuedAt.After(before.Truncate(time.Millisecond)) {
			return "the access token has been revoked: request a new one"
		}
	}
	if id, ok := strings.CutPrefix(subject, "client:"); ok {
		if c, ok := m.clients[id]; ok && !c.Status.Active() {
			return "the access token's client is " + string(c.Status.Shown())
		}
	}
	if name, ok := strings.CutPrefix(subject, "user:"); ok {
		if u, ok := m.users[strings.ToLower(name)]; ok && !u.Status.Active() {
			return "the access token's user is " + string(u.Status.Shown())
		}
	}
	return ""
}

// IssueTime is when a token for subject of organisation orgID, issued
// now, says it was issued. It is now, unless tokens of either were
// revoked in this millisecond, or later by the clock of the replica that
// revoked them: then the millisecond after, so that the new token is not
// taken for one revoked. Verification allows for clock skew
// (tokens.ClockSkew), so a token may say it was issued a little from now.
func (m *Identity) IssueTime(subject, orgID string, now time.Time) time.Time {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, key := range []string{subject, orgSubject(orgID)} {
		if before := m.revokedBefore[key].Truncate(time.Millisecond); !now.Truncate(time.Millisecond).After(before) {
			now = before.Add(time.Millisecond)
		}
	}
	return now
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
	return ofOrganization(m.keys, orgID, func(k domain.APIKey) string { return k.OrganizationID })
}

// Clients lists an organisation's API clients (all clients for orgID
// ""), whatever their status, by client id.
func (m *Identity) Clients(orgID string) []domain.Client {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return ofOrganization(m.clients, orgID, func(c domain.Client) string { return c.OrganizationID })
}

// Users lists an organisation's users (all users for orgID ""), whatever
// their status, by username ignoring case.
func (m *Identity) Users(orgID string) []domain.User {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return ofOrganization(m.users, orgID, func(u domain.User) string { return u.OrganizationID })
}

// ofOrganization is the credentials of byKey that belong to organisation
// orgID (all of them for ""), in the order of their keys.
func ofOrganization[T any](byKey map[string]T, orgID string, org func(T) string) []T {
	var out []T
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		if c := byKey[key]; orgID == "" || org(c) == orgID {
			out = append(out, c)
		}
	}
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
