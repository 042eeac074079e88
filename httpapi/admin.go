package httpapi

import (
	"net/http"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/tokens"
	"github.com/cargostream/cargostream/views"
)

// Admin endpoints: enough to run a real deployment without demo data.

// The bodies that create an organisation, a client, a user or an API key
// are what the API shows of them: fields the service sets are read and
// ignored.
type (
	organizationRequest views.OrganizationJSON
	clientRequest       views.ClientJSON
	userRequest         views.UserJSON
	apiKeyRequest       views.APIKeyJSON
)

func (s *Server) handleCreateOrganization() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req organizationRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		// One organisation per airline: a second one with its prefix or
		// code would see the first one's quotes, rates and stock. The
		// command claims both (against airlines created at the same
		// time); this check finds airlines created before claims were
		// recorded, which hold none.
		if o, ok := s.identity.Airline(req.AWBPrefix, req.IATACode); ok && req.Role == domain.RoleAirline && o.ID != req.ID {
			return domain.Errorf(domain.Conflict, "organisation %s is the airline %s with AWB prefix %s already", o.ID, o.AirlineCode, o.AWBPrefix)
		}
		res, err := s.commands.CreateOrganization(r.Context(), meta(r), domain.CreateOrganization{
			OrganizationID: req.ID, Name: req.Name, Role: req.Role, AWBPrefix: req.AWBPrefix, AirlineCode: req.IATACode,
		})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeJSON(w, http.StatusCreated, views.ToOrganizationJSON(res.State))
		return nil
	}
}

func (s *Server) handleListOrganizations() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		writeList(w, "organizations", s.identity.Organizations(), views.ToOrganizationJSON)
		return nil
	}
}

// handleCreateClient creates an API client. Without a clientSecret the
// service generates one; either way the secret is in this response only.
func (s *Server) handleCreateClient() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req clientRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		if req.ClientSecret == "" {
			req.ClientSecret = commands.NewSecret("cs_")
		}
		res, err := s.commands.CreateClient(r.Context(), meta(r), req.ClientID, req.OrganizationID, req.ClientSecret, false)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeJSON(w, http.StatusCreated, views.ToClientJSON(res.State, req.ClientSecret))
		return nil
	}
}

func (s *Server) handleCreateUser() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req userRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		res, err := s.commands.CreateUser(r.Context(), meta(r), req.Username, req.OrganizationID, req.Password, false)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeJSON(w, http.StatusCreated, views.ToUserJSON(res.State))
		return nil
	}
}

func (s *Server) handleCreateAPIKey() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req apiKeyRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		res, key, err := s.commands.CreateAPIKey(r.Context(), meta(r), req.OrganizationID, req.Name)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		out := views.ToAPIKeyJSON(res.State)
		out.APIKey = key
		writeJSON(w, http.StatusCreated, out)
		return nil
	}
}

func (s *Server) handleListAPIKeys() handlerFunc {
	return handleListOfOrganization(s, "apiKeys", s.identity.APIKeys, views.ToAPIKeyJSON)
}

// handleListClients lists API clients with their status, never a secret.
func (s *Server) handleListClients() handlerFunc {
	return handleListOfOrganization(s, "clients", s.identity.Clients, views.ToClientStatusJSON)
}

// handleListUsers lists users with their status, never a password.
func (s *Server) handleListUsers() handlerFunc {
	return handleListOfOrganization(s, "users", s.identity.Users, views.ToUserJSON)
}

// handleListOfOrganization answers GET of a list of credentials (API
// keys, clients, users) as {<key>: [...]}: those of the organisation of
// the organizationId filter, or all. A mistyped id would list none, as if
// the organisation had none: an organisation that does not exist is 404.
func handleListOfOrganization[T, J any](s *Server, key string, list func(orgID string) []T, toJSON func(T) J) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var p domain.Problems
		org := idParam(r.URL.Query(), &p, "organizationId")
		if err := p.Err(); err != nil {
			return err
		}
		if _, known := s.identity.Organization(org); org != "" && !known {
			return domain.Errorf(domain.NotFound, "no organisation %s", org)
		}
		writeList(w, key, list(org), toJSON)
		return nil
	}
}

func (s *Server) handleRevokeAPIKey() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := s.commands.RevokeAPIKey(r.Context(), meta(r), r.PathValue("id"))
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// rateLimitsRequest is an organisation's limits as the API shows them.
type rateLimitsRequest views.RateLimitsJSON

// handleSetRateLimits sets an organisation's own request limits (0: the
// service's default).
func (s *Server) handleSetRateLimits() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req rateLimitsRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		res, err := s.commands.SetRateLimits(r.Context(), meta(r), r.PathValue("id"),
			domain.RateLimits{PerMinute: req.RequestsPerMinute, PerHour: req.RequestsPerHour, PerDay: req.RequestsPerDay})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeJSON(w, http.StatusOK, views.ToRateLimitsJSON(s.limitsOf(res.State.ID)))
		return nil
	}
}

// The life cycle of organisations, clients and users: disable, enable,
// delete (a terminal disable), a new secret or password, and revoking
// tokens. Each is an event: every replica's identity read model applies
// it, and it is in the audit log.

// handleSetOrganizationStatus answers with the organisation, or 204 for a
// deletion, after which there is nothing to show.
func (s *Server) handleSetOrganizationStatus(to domain.CredentialStatus) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := s.commands.SetOrganizationStatus(r.Context(), meta(r), r.PathValue("id"), to)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeStatusChange(w, to, views.ToOrganizationJSON(res.State))
		return nil
	}
}

func (s *Server) handleSetClientStatus(to domain.CredentialStatus) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := s.commands.SetClientStatus(r.Context(), meta(r), r.PathValue("id"), to)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeStatusChange(w, to, views.ToClientStatusJSON(res.State))
		return nil
	}
}

func (s *Server) handleSetUserStatus(to domain.CredentialStatus) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := s.commands.SetUserStatus(r.Context(), meta(r), r.PathValue("username"), to)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeStatusChange(w, to, views.ToUserJSON(res.State))
		return nil
	}
}

// writeStatusChange answers a deletion with 204, and a change that leaves
// something to use with what it is now.
func writeStatusChange(w http.ResponseWriter, to domain.CredentialStatus, now any) {
	if to == domain.StatusDeleted {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusOK, now)
}

// rotateSecretRequest may choose the new secret; without one the service
// generates it. An empty body is the same as {}.
type rotateSecretRequest struct {
	ClientSecret string `json:"clientSecret"`
}

// handleRotateClientSecret gives a client a new secret, shown in this
// response only. The old one stops at once, and so do the client's
// tokens issued before.
func (s *Server) handleRotateClientSecret() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req rotateSecretRequest
		if err := decodeOptionalJSON(r, &req); err != nil {
			return err
		}
		if req.ClientSecret == "" {
			req.ClientSecret = commands.NewSecret("cs_")
		}
		res, err := s.commands.RotateClientSecret(r.Context(), meta(r), r.PathValue("id"), req.ClientSecret)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeJSON(w, http.StatusOK, views.ToClientJSON(res.State, req.ClientSecret))
		return nil
	}
}

type setPasswordRequest struct {
	Password string `json:"password"`
}

// handleSetPassword gives a user a new password; the user's tokens issued
// before stop.
func (s *Server) handleSetPassword() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req setPasswordRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		res, err := s.commands.SetPassword(r.Context(), meta(r), r.PathValue("username"), req.Password)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

type revokeTokensRequest struct {
	JTI            string `json:"jti"`
	Subject        string `json:"subject"`
	OrganizationID string `json:"organizationId"`
}

// handleRevokeTokens revokes a token by its jti, or every token of a
// client, user or organisation issued until now.
func (s *Server) handleRevokeTokens() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req revokeTokensRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		seq, err := s.commands.RevokeTokens(r.Context(), meta(r), domain.RevokeTokens{JTI: req.JTI, Subject: req.Subject,
			OrganizationID: req.OrganizationID, TokenLifetime: s.tokens.TTL() + tokens.ClockSkew})
		if err != nil {
			return err
		}
		s.settle(w, r, seq)
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}
