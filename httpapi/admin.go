package httpapi

import (
	"net/http"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/gorilla/mux"
)

// Admin endpoints: enough to run a real deployment without demo data.

type organizationJSON struct {
	ID        string      `json:"id"`
	Name      string      `json:"name"`
	Role      domain.Role `json:"role"`
	AWBPrefix string      `json:"awbPrefix,omitempty"`
	IATACode  string      `json:"iataCode,omitempty"`
	CreatedAt time.Time   `json:"createdAt"`
}

func orgJSON(o domain.Organization) organizationJSON {
	return organizationJSON{ID: o.ID, Name: o.Name, Role: o.Role, AWBPrefix: o.AWBPrefix, IATACode: o.AirlineCode, CreatedAt: o.CreatedAt}
}

func (s *Server) handleCreateOrganization() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req organizationJSON
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
		writeJSON(w, http.StatusCreated, orgJSON(res.State))
		return nil
	}
}

func (s *Server) handleListOrganizations() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		writeList(w, "organizations", s.identity.Organizations(), orgJSON)
		return nil
	}
}

type clientJSON struct {
	ClientID       string `json:"clientId"`
	OrganizationID string `json:"organizationId"`
	ClientSecret   string `json:"clientSecret,omitempty"`
}

// handleCreateClient creates an API client. Without a clientSecret the
// service generates one; either way the secret is in this response only.
func (s *Server) handleCreateClient() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req clientJSON
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
		writeJSON(w, http.StatusCreated, clientJSON{ClientID: res.State.ClientID, OrganizationID: res.State.OrganizationID, ClientSecret: req.ClientSecret})
		return nil
	}
}

type userJSON struct {
	Username       string `json:"username"`
	OrganizationID string `json:"organizationId"`
	Password       string `json:"password,omitempty"`
}

func (s *Server) handleCreateUser() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req userJSON
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		res, err := s.commands.CreateUser(r.Context(), meta(r), req.Username, req.OrganizationID, req.Password, false)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeJSON(w, http.StatusCreated, userJSON{Username: res.State.Username, OrganizationID: res.State.OrganizationID})
		return nil
	}
}

type apiKeyJSON struct {
	ID             string `json:"id"`
	OrganizationID string `json:"organizationId"`
	Name           string `json:"name"`
	Revoked        bool   `json:"revoked"`
	APIKey         string `json:"apiKey,omitempty"` // only when created
}

func keyJSON(k domain.APIKey) apiKeyJSON {
	return apiKeyJSON{ID: k.KeyID, OrganizationID: k.OrganizationID, Name: k.Name, Revoked: k.Revoked}
}

func (s *Server) handleCreateAPIKey() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req apiKeyJSON
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		res, key, err := s.commands.CreateAPIKey(r.Context(), meta(r), req.OrganizationID, req.Name)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		out := keyJSON(res.State)
		out.APIKey = key
		writeJSON(w, http.StatusCreated, out)
		return nil
	}
}

func (s *Server) handleListAPIKeys() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		writeList(w, "apiKeys", s.identity.APIKeys(r.URL.Query().Get("organizationId")), keyJSON)
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

// handleSetRateLimits sets an organisation's own request limits (0: the
// service's default).
func (s *Server) handleSetRateLimits() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req rateLimitsJSON
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		res, err := s.commands.SetRateLimits(r.Context(), meta(r), mux.Vars(r)["id"],
			domain.RateLimits{PerMinute: req.RequestsPerMinute, PerHour: req.RequestsPerHour, PerDay: req.RequestsPerDay})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		l := s.limitsOf(res.State.ID)
		writeJSON(w, http.StatusOK, rateLimitsJSON{l.PerMinute, l.PerHour, l.PerDay})
		return nil
	}
}
