package domain

import (
	"regexp"
	"time"
)

var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$`)

// User is a person who signs in with the password grant.
type User struct {
	UserID         string
	Username       string
	OrganizationID string
	PasswordHash   string
	Demo           bool
	Status         CredentialStatus // "" before any change: active
	CreatedAt      time.Time
	PasswordSetAt  time.Time // of its last change; zero if never changed
}

// UserCreated records a new user. Only the password's hash is kept.
type UserCreated struct {
	UserID         string    `json:"userId"`
	Username       string    `json:"username"`
	OrganizationID string    `json:"organizationId"`
	PasswordHash   string    `json:"passwordHash"`
	Demo           bool      `json:"demo,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
}

func (UserCreated) EventType() string  { return "UserCreated" }
func (UserCreated) SetsStatus() string { return string(StatusActive) }

// CreateUser asks for a new user of an existing organisation.
type CreateUser struct {
	UserID         string
	Username       string
	OrganizationID string
	PasswordHash   string
	Demo           bool
	At             time.Time
}

// ValidUsername reports whether name can be a username.
func ValidUsername(name string) bool { return usernamePattern.MatchString(name) }

// DecideCreateUser creates the user once; org is the user's organisation.
func DecideCreateUser(u User, org Organization, cmd CreateUser) ([]Event, error) {
	var p Problems
	if !ValidUsername(cmd.Username) {
		p.Add("username", CodeInvalidFormat, "must be 1 to 128 letters, digits, '.', '_', '@' or '-'")
	}
	requireOrganization(&p, org, cmd.OrganizationID)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if u.UserID != "" {
		return nil, Errorf(Conflict, "user %s already exists", cmd.Username)
	}
	return []Event{UserCreated{UserID: cmd.UserID, Username: cmd.Username, OrganizationID: cmd.OrganizationID,
		PasswordHash: cmd.PasswordHash, Demo: cmd.Demo, CreatedAt: cmd.At}}, nil
}

// EvolveUser applies an event to a user.
func EvolveUser(u User, e Event) User {
	switch e := e.(type) {
	case UserCreated:
		return User{UserID: e.UserID, Username: e.Username, OrganizationID: e.OrganizationID,
			PasswordHash: e.PasswordHash, Demo: e.Demo, CreatedAt: e.CreatedAt}
	case UserStatusChanged:
		u.Status = e.Status
	case UserPasswordSet:
		u.PasswordHash, u.PasswordSetAt = e.PasswordHash, e.SetAt
	}
	return u
}
