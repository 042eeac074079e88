package domain

import (
	"strings"
	"time"
)

// APIKey is a long-lived credential sent in the x-api-key header.
type APIKey struct {
	KeyID          string
	OrganizationID string
	Name           string
	KeyHash        string // SHA-256 of the key, hex
	Revoked        bool
	CreatedAt      time.Time
	RevokedAt      time.Time // zero while not revoked
}

// An API key's statuses as the audit log shows them (the API shows a
// key's revoked flag): a revocation is a change of status there.
const (
	APIKeyStatusActive  = "active"
	APIKeyStatusRevoked = "revoked"
)

// APIKeyCreated records a new API key. Only the key's hash is kept.
type APIKeyCreated struct {
	KeyID          string    `json:"keyId"`
	OrganizationID string    `json:"organizationId"`
	Name           string    `json:"name"`
	KeyHash        string    `json:"keyHash"`
	CreatedAt      time.Time `json:"createdAt"`
}

func (APIKeyCreated) EventType() string  { return "APIKeyCreated" }
func (APIKeyCreated) SetsStatus() string { return APIKeyStatusActive }

// APIKeyRevoked records that a key no longer authenticates.
type APIKeyRevoked struct {
	KeyID     string    `json:"keyId"`
	RevokedAt time.Time `json:"revokedAt"`
}

func (APIKeyRevoked) EventType() string  { return "APIKeyRevoked" }
func (APIKeyRevoked) SetsStatus() string { return APIKeyStatusRevoked }

// CreateAPIKey asks for a new API key of an existing organisation.
type CreateAPIKey struct {
	KeyID          string
	OrganizationID string
	Name           string
	KeyHash        string
	At             time.Time
}

// DecideCreateAPIKey creates the key once; org is its organisation.
func DecideCreateAPIKey(k APIKey, org Organization, cmd CreateAPIKey) ([]Event, error) {
	var p Problems
	requireOrganization(&p, org, cmd.OrganizationID)
	checkLength(&p, "name", strings.TrimSpace(cmd.Name), 200)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if k.KeyID != "" {
		return nil, Errorf(Conflict, "API key %s already exists", cmd.KeyID)
	}
	return []Event{APIKeyCreated{KeyID: cmd.KeyID, OrganizationID: cmd.OrganizationID,
		Name: strings.TrimSpace(cmd.Name), KeyHash: cmd.KeyHash, CreatedAt: cmd.At}}, nil
}

// DecideRevokeAPIKey revokes a key for by; revoking twice changes
// nothing. An admin cannot revoke the key it calls with, as it cannot
// disable its own client or user: the caller's way in stays open.
func DecideRevokeAPIKey(k APIKey, by Principal, at time.Time) ([]Event, error) {
	if k.KeyID == "" {
		return nil, Errorf(NotFound, "no such API key")
	}
	if k.Revoked {
		return nil, nil
	}
	if by.Subject == "apikey:"+k.KeyID {
		return nil, Errorf(Conflict, "API key %s is what this request authenticates with: use another admin's credential to revoke it", k.KeyID)
	}
	return []Event{APIKeyRevoked{KeyID: k.KeyID, RevokedAt: at}}, nil
}

// EvolveAPIKey applies an event to an API key.
func EvolveAPIKey(k APIKey, e Event) APIKey {
	switch e := e.(type) {
	case APIKeyCreated:
		return APIKey{KeyID: e.KeyID, OrganizationID: e.OrganizationID, Name: e.Name, KeyHash: e.KeyHash, CreatedAt: e.CreatedAt}
	case APIKeyRevoked:
		k.Revoked, k.RevokedAt = true, e.RevokedAt
	}
	return k
}
