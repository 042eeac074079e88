package commands

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/cargostream/cargostream/domain"
	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"
)

// CreateOrganization creates an organisation.
func (h *Handler) CreateOrganization(ctx context.Context, m Meta, c domain.CreateOrganization) (Result[domain.Organization], error) {
	if c.OrganizationID == "" {
		c.OrganizationID = m.DeriveID("org")
	}
	c.At = h.now().UTC()
	agg := domain.Aggregate{Type: domain.AggregateOrganization, ID: c.OrganizationID}
	if err := c.Validate(); err != nil {
		return Result[domain.Organization]{}, err
	}
	decide := func(o domain.Organization) ([]domain.Event, error) { return domain.DecideCreateOrganization(o, c) }
	if c.Role != domain.RoleAirline {
		return execute(ctx, h, agg, m, domain.EvolveOrganization, decide)
	}
	// An airline claims its prefix and code in the transaction that
	// creates it: of two created at once with either, one is refused.
	var res *Result[domain.Organization]
	err := transact(ctx, h, func(t *transaction) error {
		for _, id := range [][2]string{{"awbPrefix", c.AWBPrefix}, {"iataCode", c.AirlineCode}} {
			claim := domain.Aggregate{Type: domain.AggregateAirlineClaim, ID: domain.AirlineClaimID(id[0], id[1])}
			if _, err := decideIn(t, claim, m.part(id[0]), domain.EvolveAirlineClaim, func(cl domain.AirlineClaim) ([]domain.Event, error) {
				return domain.DecideClaimAirlineIdentifier(cl, id[0], id[1], c.OrganizationID, c.At)
			}); err != nil {
				return err
			}
		}
		var err error
		res, err = decideIn(t, agg, m, domain.EvolveOrganization, decide)
		return err
	})
	if err != nil || res == nil {
		return Result[domain.Organization]{}, err
	}
	return *res, nil
}

// organization loads an organisation; a missing one is the zero value.
func (h *Handler) organization(ctx context.Context, id string) (domain.Organization, error) {
	if !domain.ValidIdentifier(id) {
		return domain.Organization{}, nil
	}
	o, _, _, err := load(ctx, h, domain.Aggregate{Type: domain.AggregateOrganization, ID: id}, domain.EvolveOrganization, "", loadFresh)
	return o, err
}

// NewSecret returns a random secret for a client, or an API key, with a
// prefix that tells what it is.
func NewSecret(prefix string) string {
	b := make([]byte, 32)
	rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// hashSecret validates and hashes a secret chosen for a client or user.
func (h *Handler) hashSecret(field, secret string) (string, error) {
	if err := domain.ValidateSecret(field, secret); err != nil {
		return "", err
	}
	b, err := bcrypt.GenerateFromPassword([]byte(secret), h.hashCost)
	return string(b), err
}

// CreateClient creates an API client with the given secret.
func (h *Handler) CreateClient(ctx context.Context, m Meta, clientID, orgID, secret string, demo bool) (Result[domain.Client], error) {
	var none Result[domain.Client]
	hash, err := h.hashSecret("clientSecret", secret)
	if err != nil {
		return none, err
	}
	org, err := h.organization(ctx, orgID)
	if err != nil {
		return none, err
	}
	cmd := domain.CreateClient{ClientID: clientID, OrganizationID: orgID, SecretHash: hash, Demo: demo, At: h.now().UTC()}
	if !domain.ValidIdentifier(clientID) {
		// Not a valid aggregate id: let the domain say what is wrong.
		_, err := domain.DecideCreateClient(domain.Client{}, org, cmd)
		return none, err
	}
	return execute(ctx, h, domain.Aggregate{Type: domain.AggregateClient, ID: clientID}, m, domain.EvolveClient,
		func(c domain.Client) ([]domain.Event, error) { return domain.DecideCreateClient(c, org, cmd) })
}

// CheckAdminClient tells whether the client clientID is of the admin
// organisation orgID and has the secret: the bootstrap admin's, which a
// start with CARGO_ADMIN_SECRET expects, may have been taken or created
// otherwise.
func (h *Handler) CheckAdminClient(ctx context.Context, clientID, orgID, secret string) error {
	c, _, _, err := load(ctx, h, domain.Aggregate{Type: domain.AggregateClient, ID: clientID}, domain.EvolveClient, "", loadFresh)
	if err != nil {
		return err
	}
	org, err := h.organization(ctx, orgID)
	switch {
	case err != nil:
		return err
	case org.Role != domain.RoleAdmin:
		return fmt.Errorf("organisation %q is a %s organisation, not an admin one", orgID, org.Role)
	case !org.Status.Active():
		return fmt.Errorf("organisation %q is %s", orgID, org.Status.Shown())
	case c.OrganizationID != orgID:
		return fmt.Errorf("client %s is of organisation %q, not %q", clientID, c.OrganizationID, orgID)
	case !c.Status.Active():
		return fmt.Errorf("client %s is %s", clientID, c.Status.Shown())
	case bcrypt.CompareHashAndPassword([]byte(c.SecretHash), []byte(secret)) != nil:
		return fmt.Errorf("client %s has another secret than the one given: a secret is set when its client is created or rotated (POST /api/admin/clients/%s/secret), not on later starts", clientID, clientID)
	}
	return nil
}

// CredentialAggregates are the aggregates whose events may withdraw the
// credential of p, with jti its token's id ("" for none, as for an API
// key): its organisation's (disabled, deleted, its tokens revoked), its
// client's, user's or API key's, and its token's own revocation.
func CredentialAggregates(p domain.Principal, jti string) []domain.Aggregate {
	aggs := []domain.Aggregate{{Type: domain.AggregateOrganization, ID: p.OrganizationID}}
	switch kind, id, _ := strings.Cut(p.Subject, ":"); kind {
	case "client":
		aggs = append(aggs, domain.Aggregate{Type: domain.AggregateClient, ID: id})
	case "user":
		aggs = append(aggs, domain.Aggregate{Type: domain.AggregateUser, ID: UserID(id)})
	case "apikey":
		aggs = append(aggs, domain.Aggregate{Type: domain.AggregateAPIKey, ID: id})
	}
	if jti != "" {
		aggs = append(aggs, domain.Aggregate{Type: domain.AggregateTokenRevocation, ID: jti})
	}
	return aggs
}

// UserID is the aggregate id of a username: usernames may hold characters
// that subjects may not.
func UserID(username string) string {
	return uuid.NewSHA1(idNamespace, []byte("user:"+strings.ToLower(username))).String()
}

// CreateUser creates a user with the given password.
func (h *Handler) CreateUser(ctx context.Context, m Meta, username, orgID, password string, demo bool) (Result[domain.User], error) {
	var none Result[domain.User]
	hash, err := h.hashSecret("password", password)
	if err != nil {
		return none, err
	}
	org, err := h.organization(ctx, orgID)
	if err != nil {
		return none, err
	}
	id := UserID(username)
	cmd := domain.CreateUser{UserID: id, Username: username, OrganizationID: orgID, PasswordHash: hash, Demo: demo, At: h.now().UTC()}
	return execute(ctx, h, domain.Aggregate{Type: domain.AggregateUser, ID: id}, m, domain.EvolveUser,
		func(u domain.User) ([]domain.Event, error) { return domain.DecideCreateUser(u, org, cmd) })
}

// HashAPIKey is how API keys are stored and looked up: a key is random
// and long, so a fast hash is enough.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// CreateAPIKey creates an API key and returns it; the key itself is shown
// only this once.
func (h *Handler) CreateAPIKey(ctx context.Context, m Meta, orgID, name string) (Result[domain.APIKey], string, error) {
	key := NewSecret("csk_")
	org, err := h.organization(ctx, orgID)
	if err != nil {
		return Result[domain.APIKey]{}, "", err
	}
	id := m.DeriveID("apikey")
	cmd := domain.CreateAPIKey{KeyID: id, OrganizationID: orgID, Name: name, KeyHash: HashAPIKey(key), At: h.now().UTC()}
	res, err := create(ctx, h, domain.Aggregate{Type: domain.AggregateAPIKey, ID: id}, m, domain.EvolveAPIKey,
		func(k domain.APIKey) ([]domain.Event, error) { return domain.DecideCreateAPIKey(k, org, cmd) })
	if res.State.KeyHash != cmd.KeyHash {
		key = "" // a repeated command: the key was shown the first time
	}
	return res, key, err
}

// RevokeAPIKey stops a key from authenticating.
func (h *Handler) RevokeAPIKey(ctx context.Context, m Meta, keyID string) (Result[domain.APIKey], error) {
	if !domain.ValidIdentifier(keyID) {
		return Result[domain.APIKey]{}, domain.Errorf(domain.NotFound, "no such API key")
	}
	at := h.now().UTC()
	return execute(ctx, h, domain.Aggregate{Type: domain.AggregateAPIKey, ID: keyID}, m, domain.EvolveAPIKey,
		func(k domain.APIKey) ([]domain.Event, error) { return domain.DecideRevokeAPIKey(k, m.Principal, at) })
}

// SetRateLimits sets an organisation's own request limits.
func (h *Handler) SetRateLimits(ctx context.Context, m Meta, orgID string, l domain.RateLimits) (Result[domain.Organization], error) {
	if !domain.ValidIdentifier(orgID) {
		return Result[domain.Organization]{}, domain.Errorf(domain.NotFound, "no organisation %s", orgID)
	}
	at := h.now().UTC()
	return execute(ctx, h, domain.Aggregate{Type: domain.AggregateOrganization, ID: orgID}, m, domain.EvolveOrganization,
		func(o domain.Organization) ([]domain.Event, error) {
			return domain.DecideSetRateLimits(o, m.Principal, l, at)
		})
}

// RecordAuthorization appends an authorization event for the audit log.
// Each is an aggregate of its own: they never contend with each other.
func (h *Handler) RecordAuthorization(ctx context.Context, m Meta, e domain.AuthorizationRecorded) (uint64, error) {
	e.At = h.now().UTC()
	res, err := create(ctx, h, domain.Aggregate{Type: domain.AggregateAuthorization, ID: m.DeriveID("auth")}, m,
		func(s struct{}, _ domain.Event) struct{} { return s },
		func(struct{}) ([]domain.Event, error) { return []domain.Event{e}, nil })
	return res.Sequence, err
}

// SetClientStatus disables, enables or deletes a client.
func (h *Handler) SetClientStatus(ctx context.Context, m Meta, clientID string, to domain.CredentialStatus) (Result[domain.Client], error) {
	if !domain.ValidIdentifier(clientID) {
		return Result[domain.Client]{}, domain.Errorf(domain.NotFound, "no such client")
	}
	at := h.now().UTC()
	return execute(ctx, h, domain.Aggregate{Type: domain.AggregateClient, ID: clientID}, m, domain.EvolveClient,
		func(c domain.Client) ([]domain.Event, error) {
			return domain.DecideClientStatus(c, m.Principal, to, at)
		})
}

// SetUserStatus disables, enables or deletes a user.
func (h *Handler) SetUserStatus(ctx context.Context, m Meta, username string, to domain.CredentialStatus) (Result[domain.User], error) {
	at := h.now().UTC()
	return execute(ctx, h, domain.Aggregate{Type: domain.AggregateUser, ID: UserID(username)}, m, domain.EvolveUser,
		func(u domain.User) ([]domain.Event, error) { return domain.DecideUserStatus(u, m.Principal, to, at) })
}

// SetOrganizationStatus disables, enables or deletes an organisation.
func (h *Handler) SetOrganizationStatus(ctx context.Context, m Meta, orgID string, to domain.CredentialStatus) (Result[domain.Organization], error) {
	if !domain.ValidIdentifier(orgID) {
		return Result[domain.Organization]{}, domain.Errorf(domain.NotFound, "no such organisation")
	}
	at := h.now().UTC()
	return execute(ctx, h, domain.Aggregate{Type: domain.AggregateOrganization, ID: orgID}, m, domain.EvolveOrganization,
		func(o domain.Organization) ([]domain.Event, error) {
			return domain.DecideOrganizationStatus(o, m.Principal, to, at)
		})
}

// RotateClientSecret gives a client the new secret.
func (h *Handler) RotateClientSecret(ctx context.Context, m Meta, clientID, secret string) (Result[domain.Client], error) {
	var none Result[domain.Client]
	if !domain.ValidIdentifier(clientID) {
		return none, domain.Errorf(domain.NotFound, "no such client")
	}
	hash, err := h.hashSecret("clientSecret", secret)
	if err != nil {
		return none, err
	}
	at := h.now().UTC()
	return execute(ctx, h, domain.Aggregate{Type: domain.AggregateClient, ID: clientID}, m, domain.EvolveClient,
		func(c domain.Client) ([]domain.Event, error) { return domain.DecideRotateClientSecret(c, hash, at) })
}

// SetPassword gives a user the new password.
func (h *Handler) SetPassword(ctx context.Context, m Meta, username, password string) (Result[domain.User], error) {
	hash, err := h.hashSecret("password", password)
	if err != nil {
		return Result[domain.User]{}, err
	}
	at := h.now().UTC()
	return execute(ctx, h, domain.Aggregate{Type: domain.AggregateUser, ID: UserID(username)}, m, domain.EvolveUser,
		func(u domain.User) ([]domain.Event, error) { return domain.DecideSetPassword(u, hash, at) })
}

// RevokeTokens revokes the tokens c names (c.TokenLifetime is how long a
// token issued now may be accepted), and returns the sequence of the revocation. A jti is
// an aggregate of its own; the revocations of a client's, user's or
// organisation's tokens are events of that aggregate.
func (h *Handler) RevokeTokens(ctx context.Context, m Meta, c domain.RevokeTokens) (uint64, error) {
	c.At = h.now().UTC()
	scope, err := c.Validate()
	if err != nil {
		return 0, err
	}
	decide := func(exists bool, orgID string) ([]domain.Event, error) {
		return domain.DecideRevokeTokens(c, exists, orgID)
	}
	var seq uint64
	clientID, isClient := strings.CutPrefix(c.Subject, "client:")
	username, _ := strings.CutPrefix(c.Subject, "user:")
	switch {
	case scope == domain.RevokeToken:
		var res Result[bool]
		res, err = execute(ctx, h, domain.Aggregate{Type: domain.AggregateTokenRevocation, ID: c.JTI}, m,
			func(bool, domain.Event) bool { return true },
			func(done bool) ([]domain.Event, error) {
				if done { // revoked already, and kept as long as the first said
					return nil, nil
				}
				return decide(true, "")
			})
		seq = res.Sequence
	case scope == domain.RevokeOrganization:
		var res Result[domain.Organization]
		res, err = execute(ctx, h, domain.Aggregate{Type: domain.AggregateOrganization, ID: c.OrganizationID}, m, domain.EvolveOrganization,
			func(o domain.Organization) ([]domain.Event, error) { return decide(o.Exists(), o.ID) })
		seq = res.Sequence
	case isClient:
		var res Result[domain.Client]
		res, err = execute(ctx, h, domain.Aggregate{Type: domain.AggregateClient, ID: clientID}, m, domain.EvolveClient,
			func(cl domain.Client) ([]domain.Event, error) { return decide(cl.ClientID != "", cl.OrganizationID) })
		seq = res.Sequence
	default:
		var res Result[domain.User]
		res, err = execute(ctx, h, domain.Aggregate{Type: domain.AggregateUser, ID: UserID(username)}, m, domain.EvolveUser,
			func(u domain.User) ([]domain.Event, error) {
				if u.UserID != "" {
					c.Subject = "user:" + u.Username // as its tokens name it
				}
				return decide(u.UserID != "", u.OrganizationID)
			})
		seq = res.Sequence
	}
	return seq, err
}
