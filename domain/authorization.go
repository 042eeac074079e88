package domain

import "time"

// Authorization actions in the audit log.
const (
	ActionTokenIssued   = "token.issued"
	ActionLoginFailed   = "login.failed"
	ActionTokenRejected = "token.rejected"
	ActionAccessDenied  = "access.denied"
)

// AuthorizationRecorded is an authorization event for the audit log: a
// token issued, a failed login, a rejected token, a forbidden attempt.
// Failures of the same kind from the same place are folded: Repeats counts
// the ones left out since the last one recorded, so a flood of failures
// cannot flood the stream.
type AuthorizationRecorded struct {
	Action         string    `json:"action"`
	Subject        string    `json:"subject"` // who, or who was claimed: client:<id>, user:<name>
	OrganizationID string    `json:"organizationId,omitempty"`
	Detail         string    `json:"detail,omitempty"` // the grant, the reason, or the request
	Repeats        int       `json:"repeats,omitempty"`
	At             time.Time `json:"at"`
}

func (AuthorizationRecorded) EventType() string { return "AuthorizationRecorded" }

// CheckOrganizationReader refuses p what of an organisation, unless p
// acts for it: an organisation's usage and rate limits, or its webhook
// subscriptions, are its own business, and the operator's (who sets the
// limits, and re-registers subscriptions after a change of the webhook
// key).
func CheckOrganizationReader(p Principal, organizationID, what string) error {
	if !p.ActsFor(organizationID) {
		return Errorf(Forbidden, "only an admin reads another organisation's %s", what)
	}
	return nil
}

// ReadinessDetailsVisibleTo: a replica's readiness figures (how many events
// the stream holds and its read models applied, how far behind they are,
// why it is not ready) are the operator's. Anyone, unauthenticated load
// balancers and probes among them, learns whether it is ready; the number
// of events would tell outsiders how much business the service does.
func ReadinessDetailsVisibleTo(p Principal) bool {
	return p.Role == RoleAdmin
}

// RateLimits are an organisation's request limits; 0 means the default.
type RateLimits struct {
	PerMinute int `json:"requestsPerMinute"`
	PerHour   int `json:"requestsPerHour"`
	PerDay    int `json:"requestsPerDay"`
}

// Validate checks the limits an admin sets.
func (l RateLimits) Validate() error {
	var p Problems
	for _, f := range []struct {
		name string
		v    int
	}{{"requestsPerMinute", l.PerMinute}, {"requestsPerHour", l.PerHour}, {"requestsPerDay", l.PerDay}} {
		if f.v < 0 || f.v > 10_000_000 {
			p.Add(f.name, CodeInvalidRange, "must be from 0 (the default) to 10000000")
		}
	}
	return p.Err()
}

// OrganizationRateLimitsSet records an organisation's own request limits.
type OrganizationRateLimitsSet struct {
	OrganizationID string     `json:"organizationId"`
	Limits         RateLimits `json:"limits"`
	SetAt          time.Time  `json:"setAt"`
}

func (OrganizationRateLimitsSet) EventType() string { return "OrganizationRateLimitsSet" }

// DecideSetRateLimits changes an existing organisation's limits, for by.
// An admin does not change those of the organisation it calls with: set
// low, they shut every credential of it out until the window ends (a day's
// until midnight UTC), as disabling it would, which is refused too (see
// checkStatusChange); another admin's credential sets them.
func DecideSetRateLimits(o Organization, by Principal, l RateLimits, at time.Time) ([]Event, error) {
	if !o.Exists() {
		return nil, Errorf(NotFound, "no such organisation")
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if o.RateLimits == l {
		return nil, nil
	}
	if by.OrganizationID == o.ID {
		return nil, Errorf(Conflict, "organisation %s is the one this request authenticates with: use another admin organisation's credential to change its rate limits, which set too low would shut it out", o.ID)
	}
	return []Event{OrganizationRateLimitsSet{OrganizationID: o.ID, Limits: l, SetAt: at}}, nil
}
