package domain

import (
	"regexp"
	"strings"
	"time"
)

// CredentialStatus is where a client, user or organisation is in its life
// cycle. Only an active one authenticates; a disabled one may be enabled
// again; a deleted one is disabled for good: its records stay, as events
// do, and its id or username is not free for another.
type CredentialStatus string

const (
	StatusActive   CredentialStatus = "active"
	StatusDisabled CredentialStatus = "disabled"
	StatusDeleted  CredentialStatus = "deleted"
)

// Shown is the status as the API shows it: records from before the life
// cycle existed have none, and are active.
func (s CredentialStatus) Shown() CredentialStatus {
	if s == "" {
		return StatusActive
	}
	return s
}

// Active reports whether the credential may authenticate.
func (s CredentialStatus) Active() bool { return s.Shown() == StatusActive }

// ClientStatusChanged records that a client was disabled, enabled or
// deleted.
type ClientStatusChanged struct {
	ClientID       string           `json:"clientId"`
	OrganizationID string           `json:"organizationId"`
	Status         CredentialStatus `json:"status"`
	ChangedAt      time.Time        `json:"changedAt"`
}

func (ClientStatusChanged) EventType() string { return "ClientStatusChanged" }

// UserStatusChanged records that a user was disabled, enabled or deleted.
type UserStatusChanged struct {
	UserID         string           `json:"userId"`
	Username       string           `json:"username"`
	OrganizationID string           `json:"organizationId"`
	Status         CredentialStatus `json:"status"`
	ChangedAt      time.Time        `json:"changedAt"`
}

func (UserStatusChanged) EventType() string { return "UserStatusChanged" }

// OrganizationStatusChanged records that an organisation was disabled,
// enabled or deleted: with it go all its clients, users and API keys.
type OrganizationStatusChanged struct {
	OrganizationID string           `json:"organizationId"`
	Status         CredentialStatus `json:"status"`
	ChangedAt      time.Time        `json:"changedAt"`
}

func (OrganizationStatusChanged) EventType() string { return "OrganizationStatusChanged" }

// ClientSecretRotated records a client's new secret; the old one no
// longer authenticates. Only the hash is kept.
type ClientSecretRotated struct {
	ClientID       string    `json:"clientId"`
	OrganizationID string    `json:"organizationId"`
	SecretHash     string    `json:"secretHash"`
	SetAt          time.Time `json:"setAt"`
}

func (ClientSecretRotated) EventType() string { return "ClientSecretRotated" }

// UserPasswordSet records a user's new password; the old one no longer
// authenticates. Only the hash is kept.
type UserPasswordSet struct {
	UserID         string    `json:"userId"`
	Username       string    `json:"username"`
	OrganizationID string    `json:"organizationId"`
	PasswordHash   string    `json:"passwordHash"`
	SetAt          time.Time `json:"setAt"`
}

func (UserPasswordSet) EventType() string { return "UserPasswordSet" }

// What a TokensRevoked event revokes.
const (
	RevokeToken        = "token"        // the one token with the jti
	RevokeSubject      = "subject"      // every token of a client or user issued before IssuedBefore
	RevokeOrganization = "organization" // every token of an organisation's clients and users issued before IssuedBefore
)

// TokensRevoked records that access tokens are refused before they
// expire. A revoked jti need only be remembered until KeepUntil, when
// every token that can carry it has expired.
type TokensRevoked struct {
	Scope          string    `json:"scope"`
	JTI            string    `json:"jti,omitempty"`
	Subject        string    `json:"subject,omitempty"`
	OrganizationID string    `json:"organizationId,omitempty"`
	IssuedBefore   time.Time `json:"issuedBefore"`
	KeepUntil      time.Time `json:"keepUntil,omitzero"`
	RevokedAt      time.Time `json:"revokedAt"`
}

func (TokensRevoked) EventType() string { return "TokensRevoked" }

// checkStatusChange tells whether a credential, what, in status from is
// to change to status to. self is whether the change would lock out the
// caller asking for it: an admin cannot disable or delete the
// credential, or the organisation, it calls with, so that the last way
// in is never closed by accident.
func checkStatusChange(what string, from, to CredentialStatus, self bool) (bool, error) {
	switch {
	case from.Shown() == to:
		return false, nil
	case from == StatusDeleted:
		return false, Errorf(Conflict, "%s is deleted: a deleted credential stays deleted", what)
	case self && to != StatusActive:
		return false, Errorf(Conflict, "%s is what this request authenticates with: use another admin's credential to disable or delete it", what)
	}
	return true, nil
}

// DecideClientStatus disables, enables or deletes a client for by.
func DecideClientStatus(c Client, by Principal, to CredentialStatus, at time.Time) ([]Event, error) {
	if c.ClientID == "" {
		return nil, Errorf(NotFound, "no such client")
	}
	changed, err := checkStatusChange("client "+c.ClientID, c.Status, to, by.Subject == "client:"+c.ClientID)
	if !changed {
		return nil, err
	}
	return []Event{ClientStatusChanged{ClientID: c.ClientID, OrganizationID: c.OrganizationID, Status: to, ChangedAt: at}}, nil
}

// DecideUserStatus disables, enables or deletes a user for by.
func DecideUserStatus(u User, by Principal, to CredentialStatus, at time.Time) ([]Event, error) {
	if u.UserID == "" {
		return nil, Errorf(NotFound, "no such user")
	}
	changed, err := checkStatusChange("user "+u.Username, u.Status, to, strings.EqualFold(by.Subject, "user:"+u.Username))
	if !changed {
		return nil, err
	}
	return []Event{UserStatusChanged{UserID: u.UserID, Username: u.Username, OrganizationID: u.OrganizationID, Status: to, ChangedAt: at}}, nil
}

// DecideOrganizationStatus disables, enables or deletes an organisation
// for by.
func DecideOrganizationStatus(o Organization, by Principal, to CredentialStatus, at time.Time) ([]Event, error) {
	if !o.Exists() {
		return nil, Errorf(NotFound, "no such organisation")
	}
	changed, err := checkStatusChange("organisation "+o.ID, o.Status, to, by.OrganizationID == o.ID)
	if !changed {
		return nil, err
	}
	return []Event{OrganizationStatusChanged{OrganizationID: o.ID, Status: to, ChangedAt: at}}, nil
}

// DecideRotateClientSecret gives a client a new secret (its hash): a
// disabled client's too, so that it comes back with a fresh one.
func DecideRotateClientSecret(c Client, secretHash string, at time.Time) ([]Event, error) {
	if c.ClientID == "" {
		return nil, Errorf(NotFound, "no such client")
	}
	if c.Status == StatusDeleted {
		return nil, Errorf(Conflict, "client %s is deleted: a deleted credential stays deleted", c.ClientID)
	}
	return []Event{ClientSecretRotated{ClientID: c.ClientID, OrganizationID: c.OrganizationID, SecretHash: secretHash, SetAt: at}}, nil
}

// DecideSetPassword gives a user a new password (its hash).
func DecideSetPassword(u User, passwordHash string, at time.Time) ([]Event, error) {
	if u.UserID == "" {
		return nil, Errorf(NotFound, "no such user")
	}
	if u.Status == StatusDeleted {
		return nil, Errorf(Conflict, "user %s is deleted: a deleted credential stays deleted", u.Username)
	}
	return []Event{UserPasswordSet{UserID: u.UserID, Username: u.Username, OrganizationID: u.OrganizationID, PasswordHash: passwordHash, SetAt: at}}, nil
}

// RevokeTokens asks to revoke access tokens: the one with JTI, or those
// of Subject ("client:<id>" or "user:<username>"), or those of
// OrganizationID, issued until At. Exactly one of the three is given.
type RevokeTokens struct {
	JTI, Subject, OrganizationID string
	At                           time.Time
	// TokenLifetime is how long a token issued now may be accepted (its
	// lifetime and the clock skew allowed): a revoked jti is kept that
	// long after At.
	TokenLifetime time.Duration
}

// Validate checks the command on its own, and returns the scope it names.
func (c RevokeTokens) Validate() (string, error) {
	var p Problems
	given := 0
	for _, s := range []string{c.JTI, c.Subject, c.OrganizationID} {
		if s != "" {
			given++
		}
	}
	switch {
	case given == 0:
		p.Add("jti", CodeRequired, "give one of jti, subject or organizationId")
	case given > 1:
		p.Add("jti", CodeInvalidValue, "give only one of jti, subject or organizationId")
	case c.JTI != "" && !jtiPattern.MatchString(c.JTI):
		p.Add("jti", CodeInvalidFormat, "must be a token id (jti) as issued: a UUID in lower case, such as 01a229af-ccdb-7e6d-934f-9137b3a9b1d4")
	case c.Subject != "" && !validTokenSubject(c.Subject):
		p.Add("subject", CodeInvalidFormat, "must be client:<clientId> or user:<username>")
	case c.OrganizationID != "" && !identifierPattern.MatchString(c.OrganizationID):
		p.Add("organizationId", CodeInvalidFormat, "must be 1 to 64 letters, digits, '-' or '_', starting with a letter or digit")
	}
	switch {
	case p.Err() != nil:
		return "", p.Err()
	case c.JTI != "":
		return RevokeToken, nil
	case c.Subject != "":
		return RevokeSubject, nil
	}
	return RevokeOrganization, nil
}

// jtiPattern is the spelling of every jti tokens carry (a UUID in lower
// case: version 7 since 2026-11-26, see tokens; version 4 before, whose
// tokens a revocation must still reach while they live), which a
// revocation is matched with as written: a jti in upper case, cut short or
// mistyped into another form was accepted, and the token it meant went on
// working.
var jtiPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// validTokenSubject reports whether s names a client or user, the only
// subjects tokens are issued to.
func validTokenSubject(s string) bool {
	if id, ok := strings.CutPrefix(s, "client:"); ok {
		return identifierPattern.MatchString(id)
	}
	name, ok := strings.CutPrefix(s, "user:")
	return ok && ValidUsername(name)
}

// DecideRevokeTokens revokes the tokens c names. orgID is the
// organisation of the subject or organisation named, "" when there is
// none (a jti names no organisation the service knows).
func DecideRevokeTokens(c RevokeTokens, exists bool, orgID string) ([]Event, error) {
	scope, err := c.Validate()
	if err != nil {
		return nil, err
	}
	if !exists {
		var p Problems
		if scope == RevokeSubject {
			p.Add("subject", CodeInvalidValue, "no client or user %q", c.Subject)
		} else {
			p.Add("organizationId", CodeInvalidValue, "no organisation %q", c.OrganizationID)
		}
		return nil, p.Err()
	}
	return []Event{TokensRevoked{Scope: scope, JTI: c.JTI, Subject: c.Subject, OrganizationID: orgID,
		IssuedBefore: c.At, KeepUntil: c.At.Add(c.TokenLifetime), RevokedAt: c.At}}, nil
}
