package httpapi

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/views"
)

// metered counts each request of an authenticated caller under its route
// pattern (such as /api/bookings/{id}).
func (s *Server) metered(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		endpoint := r.URL.Path
		if st := stateOf(r.Context()); st != nil && st.route != "" {
			endpoint = st.route // noted once a route matched (routes.go)
		}
		if p := principal(r.Context()); p.OrganizationID != "" && rec.status != 0 {
			s.usage.Count(p.OrganizationID, endpoint, rec.status, time.Now())
		}
	})
}

// handleUsage reports an organisation's requests over a period (day, week,
// month, or from/to dates), by endpoint and, with groupBy, by status or
// day; its rate limits; and what its documents take of its storage quota.
// Admins may name any organisation (see domain.CheckOrganizationReader).
func (s *Server) handleUsage() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var p domain.Problems
		who := principal(r.Context())
		org, named := who.OrganizationID, idParam(q, &p, "organizationId")
		today := time.Now().UTC().Truncate(24 * time.Hour)
		from, to, period := today, today, q.Get("period")
		switch period {
		case "", "day":
			period = "day"
		case "week":
			from = today.AddDate(0, 0, -6)
		case "month":
			from = today.AddDate(0, 0, -29)
		default:
			p.Add("period", domain.CodeInvalidValue, "must be day, week or month (or give from and to)")
		}
		if q.Get("from") != "" || q.Get("to") != "" {
			if q.Has("period") {
				p.Add("period", domain.CodeInvalidValue, "give a period or from and to, not both")
			}
			var fromOK, toOK bool
			from, fromOK = dateParam(q.Get("from"), "from", today, &p)
			to, toOK = dateParam(q.Get("to"), "to", today, &p)
			period = from.Format(time.DateOnly) + "/" + to.Format(time.DateOnly)
			// A date that did not parse is its own problem already. One
			// left out is today, which the message says: the client did
			// not send it.
			if fromOK && toOK && (to.Before(from) || to.Sub(from) > 366*24*time.Hour) {
				switch {
				case q.Get("to") == "":
					p.Add("from", domain.CodeInvalidDate, "must be from 0 to 366 days before to (left out: today, %s)", to.Format(time.DateOnly))
				case q.Get("from") == "":
					p.Add("to", domain.CodeInvalidDate, "must be from 0 to 366 days after from (left out: today, %s)", from.Format(time.DateOnly))
				default:
					p.Add("to", domain.CodeInvalidDate, "must be from 0 to 366 days after from")
				}
			}
		}
		groupBy := q.Get("groupBy")
		if groupBy != "" && groupBy != "endpoint" && groupBy != "status" && groupBy != "day" {
			p.Add("groupBy", domain.CodeInvalidValue, "must be endpoint, status or day")
		}
		if err := p.Err(); err != nil {
			return err
		}
		if named != "" && named != org {
			if err := s.checkOrganizationRead(who, named, "usage"); err != nil {
				return err
			}
			org = named
		}
		stored := s.documents.StoredBy(org)
		out := views.UsageJSON{Period: period, RequestsByEndpoint: map[string]int64{}, OrganizationID: org,
			RateLimits:      views.ToRateLimitsJSON(s.limitsOf(org)),
			DocumentStorage: views.DocumentStorageJSON{Documents: stored.Documents, BytesStored: stored.Bytes, QuotaBytes: s.opts.DocumentQuota}}
		byStatus, byDay := map[string]int64{}, map[string]int64{}
		for day := from; !day.After(to); day = day.AddDate(0, 0, 1) {
			counts, err := s.usage.Counts(r.Context(), org, day)
			if err != nil {
				return err
			}
			for _, k := range slices.Sorted(maps.Keys(counts)) {
				n := counts[k]
				endpoint, status, _ := strings.Cut(k, " ")
				out.TotalRequests += n
				out.RequestsByEndpoint[endpoint] += n
				byStatus[status] += n
				byDay[day.Format(time.DateOnly)] += n
			}
		}
		switch groupBy {
		case "status":
			out.RequestsByStatus = byStatus
		case "day":
			out.RequestsByDay = byDay
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// checkOrganizationRead refuses who a read of organisation id's what
// (its usage, its audit log) unless who may read it (admins: any) and
// there is such an organisation.
func (s *Server) checkOrganizationRead(who domain.Principal, id, what string) error {
	if err := domain.CheckOrganizationReader(who, id, what); err != nil {
		return err
	}
	if _, ok := s.identity.Organization(id); !ok {
		return domain.Errorf(domain.NotFound, "no organisation %s", id)
	}
	return nil
}

// dateParam reads a date; def when empty. ok is false when it does not
// parse.
func dateParam(v, name string, def time.Time, p *domain.Problems) (t time.Time, ok bool) {
	if v == "" {
		return def, true
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		p.Add(name, domain.CodeInvalidDate, "must be a date as YYYY-MM-DD")
		return t, false
	}
	return t, true
}
