package views

import (
	"time"

	"github.com/cargostream/cargostream/domain"
)

// OrganizationJSON is an organisation; an admin sends the same to create
// one (the service sets createdAt).
type OrganizationJSON struct {
	ID        string      `json:"id"`
	Name      string      `json:"name"`
	Role      domain.Role `json:"role"`
	AWBPrefix string      `json:"awbPrefix,omitempty"`
	IATACode  string      `json:"iataCode,omitempty"`
	CreatedAt time.Time   `json:"createdAt"`
	// Status is set by the service: active, disabled or deleted.
	Status domain.CredentialStatus `json:"status"`
}

func ToOrganizationJSON(o domain.Organization) OrganizationJSON {
	return OrganizationJSON{ID: o.ID, Name: o.Name, Role: o.Role, AWBPrefix: o.AWBPrefix, IATACode: o.AirlineCode, CreatedAt: o.CreatedAt,
		Status: o.Status.Shown()}
}

// ClientJSON is an API client; its secret is shown once, on creation.
type ClientJSON struct {
	ClientID       string `json:"clientId"`
	OrganizationID string `json:"organizationId"`
	ClientSecret   string `json:"clientSecret,omitempty"`
	// Status is set by the service: active, disabled or deleted.
	Status domain.CredentialStatus `json:"status"`
}

// ToClientJSON is a client with its secret, which only its creation and
// a rotation know.
func ToClientJSON(c domain.Client, secret string) ClientJSON {
	return ClientJSON{ClientID: c.ClientID, OrganizationID: c.OrganizationID, ClientSecret: secret, Status: c.Status.Shown()}
}

// ToClientStatusJSON is a client without its secret (OAuthClientStatus in
// the OpenAPI document), as a list or a change of its status shows it.
func ToClientStatusJSON(c domain.Client) ClientJSON { return ToClientJSON(c, "") }

// UserJSON is a user; the password is only ever sent, never shown.
type UserJSON struct {
	Username       string `json:"username"`
	OrganizationID string `json:"organizationId"`
	Password       string `json:"password,omitempty"`
	// Status is set by the service: active, disabled or deleted.
	Status domain.CredentialStatus `json:"status"`
}

func ToUserJSON(u domain.User) UserJSON {
	return UserJSON{Username: u.Username, OrganizationID: u.OrganizationID, Status: u.Status.Shown()}
}

// APIKeyJSON is an API key; the key itself is shown once, on creation.
type APIKeyJSON struct {
	ID             string `json:"id"`
	OrganizationID string `json:"organizationId"`
	Name           string `json:"name"`
	Revoked        bool   `json:"revoked"`
	APIKey         string `json:"apiKey,omitempty"` // only when created
}

func ToAPIKeyJSON(k domain.APIKey) APIKeyJSON {
	return APIKeyJSON{ID: k.KeyID, OrganizationID: k.OrganizationID, Name: k.Name, Revoked: k.Revoked}
}
