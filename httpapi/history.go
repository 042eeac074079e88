package httpapi

import (
	"context"
	"net/http"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/views"
)

// historyQuery is one of projections.History's queries.
type historyQuery func(ctx context.Context, p domain.Principal, id string, page, limit int) (projections.HistoryPage, error)

// handleHistory answers the history of the resource whose id the path
// variable names (id turns it into the query's form), a page at a time,
// oldest first, as {data: [...], pagination}.
func (s *Server) handleHistory(query historyQuery, variable string, id func(string) (string, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var p domain.Problems
		page, limit := pageParams(r.URL.Query(), &p)
		if err := p.Err(); err != nil {
			return err
		}
		key, err := id(r.PathValue(variable))
		if err != nil {
			return err
		}
		h, err := query(r.Context(), principal(r.Context()), key, page, limit)
		if err != nil {
			return err
		}
		writePage(w, "data", h.Records, views.ToHistoryEntryJSON, page, limit, h.Total)
		return nil
	}
}

// asIs takes a path's id as it is: the read model does not know a
// malformed one.
func asIs(id string) (string, error) { return id, nil }

// flightID writes a path's flight id as the service does.
func flightID(id string) (string, error) { return domain.CanonicalFlightID(id), nil }

// awbID is a path's AWB number in its canonical form.
func awbID(awb string) (string, error) { return awbField("awb", awb) }
