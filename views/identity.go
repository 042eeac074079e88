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
	// When it was created and its secret last rotated (left out if never):
	// what an operator looks for among credentials due for rotation.
	CreatedAt       time.Time `json:"createdAt"`
	SecretRotatedAt time.Time `json:"secretRotatedAt,omitzero"`
}

// ToClientJSON is a client with its secret, which only its creation and
// a rotation know.
func ToClientJSON(c domain.Client, secret string) ClientJSON {
	return ClientJSON{ClientID: c.ClientID, OrganizationID: c.OrganizationID, ClientSecret: secret, Status: c.Status.Shown(),
		CreatedAt: c.CreatedAt, SecretRotatedAt: c.SecretSetAt}
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
	// When it was created and its password last changed (left out if
	// never), as a client's.
	CreatedAt         time.Time `json:"createdAt"`
	PasswordChangedAt time.Time `json:"passwordChangedAt,omitzero"`
}

func ToUserJSON(u domain.User) UserJSON {
	return UserJSON{Username: u.Username, OrganizationID: u.OrganizationID, Status: u.Status.Shown(), CreatedAt: u.CreatedAt,
		PasswordChangedAt: u.PasswordSetAt}
}

// APIKeyJSON is an API key; the key itself is shown once, on creation.
type APIKeyJSON struct {
	ID             string `json:"id"`
	OrganizationID string `json:"organizationId"`
	Name           string `json:"name"`
	Revoked        bool   `json:"revoked"`
	APIKey         string `json:"apiKey,omitempty"` // only when created
	// When it was created and revoked (left out while it is not).
	CreatedAt time.Time `json:"createdAt"`
	RevokedAt time.Time `json:"revokedAt,omitzero"`
}

func ToAPIKeyJSON(k domain.APIKey) APIKeyJSON {
	return APIKeyJSON{ID: k.KeyID, OrganizationID: k.OrganizationID, Name: k.Name, Revoked: k.Revoked, CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt}
}
