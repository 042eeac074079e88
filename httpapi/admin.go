package httpapi

import (
	"net/http"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/views"
	"github.com/gorilla/mux"
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
		// code would see the first one's quotes, rates and stock.
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
	return func(w http.ResponseWriter, r *http.Request) error {
		var p domain.Problems
		org := idParam(r.URL.Query(), &p, "organizationId")
		if err := p.Err(); err != nil {
			return err
		}
		writeList(w, "apiKeys", s.identity.APIKeys(org), views.ToAPIKeyJSON)
		return nil
	}
}

func (s *Server) handleRevokeAPIKey() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := s.commands.RevokeAPIKey(r.Context(), meta(r), mux.Vars(r)["id"])
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
		res, err := s.commands.SetRateLimits(r.Context(), meta(r), mux.Vars(r)["id"],
			domain.RateLimits{PerMinute: req.RequestsPerMinute, PerHour: req.RequestsPerHour, PerDay: req.RequestsPerDay})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeJSON(w, http.StatusOK, views.ToRateLimitsJSON(s.limitsOf(res.State.ID)))
		return nil
	}
}
