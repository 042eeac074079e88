package domain

import (
	"strings"
	"time"
)

// AirlineIdentifierClaimed records that an airline organisation holds an
// AWB prefix or an IATA code, for good: a second organisation with either
// would see the first one's quotes, rates and stock.
type AirlineIdentifierClaimed struct {
	Identifier     string    `json:"identifier"` // "awbPrefix" or "iataCode"
	Value          string    `json:"value"`
	OrganizationID string    `json:"organizationId"`
	ClaimedAt      time.Time `json:"claimedAt"`
}

func (AirlineIdentifierClaimed) EventType() string { return "AirlineIdentifierClaimed" }

// AirlineClaim is the organisation that holds an airline identifier, ""
// while none does.
type AirlineClaim struct{ OrganizationID string }

// AirlineClaimID is the aggregate id of an airline identifier: one
// aggregate per value, so that two organisations created at once cannot
// both take it, as they could past a check of the read model.
func AirlineClaimID(identifier, value string) string {
	if identifier == "iataCode" {
		return "iata-" + strings.ToUpper(value)
	}
	return "awb-" + value
}

// DecideClaimAirlineIdentifier gives the identifier to organisation orgID,
// unless another holds it; claiming it again changes nothing.
func DecideClaimAirlineIdentifier(c AirlineClaim, identifier, value, orgID string, at time.Time) ([]Event, error) {
	switch c.OrganizationID {
	case orgID:
		return nil, nil
	case "":
		return []Event{AirlineIdentifierClaimed{Identifier: identifier, Value: value, OrganizationID: orgID, ClaimedAt: at}}, nil
	}
	return nil, Errorf(Conflict, "organisation %s is the airline with %s %s already", c.OrganizationID, identifier, value)
}

// EvolveAirlineClaim applies an event to a claim: the first holder keeps it.
func EvolveAirlineClaim(c AirlineClaim, e Event) AirlineClaim {
	if e, ok := e.(AirlineIdentifierClaimed); ok && c.OrganizationID == "" {
		c.OrganizationID = e.OrganizationID
	}
	return c
}
