package domain

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Organization is a party using the service: a forwarder, an airline or
// the operator.
type Organization struct {
	ID          string
	Name        string
	Role        Role
	AWBPrefix   string
	AirlineCode string
	Demo        bool
	CreatedAt   time.Time
	RateLimits  RateLimits       // 0s: the service's defaults
	Status      CredentialStatus // "" before any change: active
}

// Exists reports whether the organisation has been created.
func (o Organization) Exists() bool { return o.ID != "" }

// UsableInDemoMode reports whether the organisation's clients, users and
// API keys authenticate, and its tokens are accepted, on a service running
// with demo mode on (demoMode) or off. A demo organisation's credentials
// are public, so with demo mode off it is closed whole, credentials an
// admin added to it later included; its records stay, as events do, and
// turning demo mode on again opens it.
func (o Organization) UsableInDemoMode(demoMode bool) bool { return demoMode || !o.Demo }

// Principal is subject acting for the organisation, with the role and
// airline identity the access rules look at.
func (o Organization) Principal(subject string) Principal {
	return Principal{Subject: subject, OrganizationID: o.ID, Role: o.Role, AirlineCode: o.AirlineCode, AWBPrefix: o.AWBPrefix}
}

// OrganizationCreated records a new organisation.
type OrganizationCreated struct {
	OrganizationID string    `json:"organizationId"`
	Name           string    `json:"name"`
	Role           Role      `json:"role"`
	AWBPrefix      string    `json:"awbPrefix,omitempty"`
	AirlineCode    string    `json:"airlineCode,omitempty"`
	Demo           bool      `json:"demo,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
}

func (OrganizationCreated) EventType() string  { return "OrganizationCreated" }
func (OrganizationCreated) SetsStatus() string { return string(StatusActive) }

// CreateOrganization asks for a new organisation.
type CreateOrganization struct {
	OrganizationID string
	Name           string
	Role           Role
	AWBPrefix      string
	AirlineCode    string
	Demo           bool
	At             time.Time
}

// Validate checks the command on its own.
func (c *CreateOrganization) Validate() error {
	var p Problems
	c.Name = strings.TrimSpace(c.Name)
	c.AirlineCode = strings.ToUpper(c.AirlineCode)
	if !identifierPattern.MatchString(c.OrganizationID) {
		p.Add("id", CodeInvalidFormat, "must be 1 to 64 letters, digits, '-' or '_', starting with a letter or digit")
	}
	switch {
	case c.Name == "":
		p.Add("name", CodeRequired, "is required")
	case utf8.RuneCountInString(c.Name) > 200:
		p.Add("name", CodeTooLong, "must be at most 200 characters")
	}
	if !c.Role.Valid() {
		p.Add("role", CodeInvalidValue, "must be forwarder, airline or admin")
	}
	if c.Role == RoleAirline {
		if !awbPrefixPattern.MatchString(c.AWBPrefix) {
			p.Add("awbPrefix", CodeInvalidFormat, "an airline needs its three-digit AWB prefix")
		}
		if !airlineCodePattern.MatchString(c.AirlineCode) {
			p.Add("iataCode", CodeInvalidFormat, "an airline needs its two-character IATA code")
		}
	} else if c.AWBPrefix != "" || c.AirlineCode != "" {
		p.Add("role", CodeInvalidValue, "only an airline has an AWB prefix and IATA code")
	}
	return p.Err()
}

// DecideCreateOrganization creates the organisation once.
func DecideCreateOrganization(o Organization, c CreateOrganization) ([]Event, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if o.Exists() {
		return nil, Errorf(Conflict, "organisation %s already exists", c.OrganizationID)
	}
	return []Event{OrganizationCreated{
		OrganizationID: c.OrganizationID, Name: c.Name, Role: c.Role, AWBPrefix: c.AWBPrefix,
		AirlineCode: c.AirlineCode, Demo: c.Demo, CreatedAt: c.At,
	}}, nil
}

// EvolveOrganization applies an event to an organisation.
func EvolveOrganization(o Organization, e Event) Organization {
	switch e := e.(type) {
	case OrganizationCreated:
		return Organization{ID: e.OrganizationID, Name: e.Name, Role: e.Role, AWBPrefix: e.AWBPrefix,
			AirlineCode: e.AirlineCode, Demo: e.Demo, CreatedAt: e.CreatedAt}
	case OrganizationRateLimitsSet:
		o.RateLimits = e.Limits
	case OrganizationStatusChanged:
		o.Status = e.Status
	}
	return o
}
