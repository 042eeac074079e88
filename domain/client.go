package domain

import "time"

// Client is an API client: a machine credential of an organisation, used
// with the client_credentials grant.
type Client struct {
	ClientID       string
	OrganizationID string
	SecretHash     string
	Demo           bool
	Status         CredentialStatus // "" before any change: active
	CreatedAt      time.Time
	SecretSetAt    time.Time // of its last rotation; zero if never rotated
}

// ClientCreated records a new API client. Only the secret's hash is kept.
type ClientCreated struct {
	ClientID       string    `json:"clientId"`
	OrganizationID string    `json:"organizationId"`
	SecretHash     string    `json:"secretHash"`
	Demo           bool      `json:"demo,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
}

func (ClientCreated) EventType() string  { return "ClientCreated" }
func (ClientCreated) SetsStatus() string { return string(StatusActive) }

// CreateClient asks for a new API client of an existing organisation.
type CreateClient struct {
	ClientID       string
	OrganizationID string
	SecretHash     string
	Demo           bool
	At             time.Time
}

// DecideCreateClient creates the client once; org is its organisation.
func DecideCreateClient(c Client, org Organization, cmd CreateClient) ([]Event, error) {
	var p Problems
	if !identifierPattern.MatchString(cmd.ClientID) {
		p.Add("clientId", CodeInvalidFormat, "must be 1 to 64 letters, digits, '-' or '_', starting with a letter or digit")
	}
	requireOrganization(&p, org, cmd.OrganizationID)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if c.ClientID != "" {
		return nil, Errorf(Conflict, "client %s already exists", cmd.ClientID)
	}
	return []Event{ClientCreated{ClientID: cmd.ClientID, OrganizationID: cmd.OrganizationID,
		SecretHash: cmd.SecretHash, Demo: cmd.Demo, CreatedAt: cmd.At}}, nil
}

// EvolveClient applies an event to a client.
func EvolveClient(c Client, e Event) Client {
	switch e := e.(type) {
	case ClientCreated:
		return Client{ClientID: e.ClientID, OrganizationID: e.OrganizationID, SecretHash: e.SecretHash, Demo: e.Demo, CreatedAt: e.CreatedAt}
	case ClientStatusChanged:
		c.Status = e.Status
	case ClientSecretRotated:
		c.SecretHash, c.SecretSetAt = e.SecretHash, e.SetAt
	}
	return c
}
