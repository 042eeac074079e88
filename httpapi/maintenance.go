package httpapi

import (
	"net/http"

	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/views"
)

// handleStartJob starts a rebuild or a verification of this replica's
// read models, which runs in the background (see projections.Maintenance).
func (s *Server) handleStartJob(kind projections.JobKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		status, err := s.maintenance.Start(r.Context(), kind)
		if err != nil {
			return err
		}
		w.Header().Set("Location", "/api/admin/"+string(kind))
		writeJSON(w, http.StatusAccepted, views.ToMaintenanceJobJSON(status))
		return nil
	}
}

// handleJobStatus says how far the newest job of a kind has come.
func (s *Server) handleJobStatus(kind projections.JobKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		status, err := s.maintenance.Status(kind)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, views.ToMaintenanceJobJSON(status))
		return nil
	}
}
