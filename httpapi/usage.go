package httpapi

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/views"
	"github.com/gorilla/mux"
)

// usageMeter counts requests per organisation, day, endpoint and status.
// Counts gather in memory and are added every few seconds (and at
// shutdown) to a key-value bucket shared by all replicas, one key per
// organisation and day, with compare-and-set: requests cost no write.
type usageMeter struct {
	bucket  *eventstore.Bucket
	mu      sync.Mutex
	pending map[usageCounter]int64
}

// usageCounter names one count. A request only bumps it: the bucket's
// key and the text of its counts are made when they are flushed.
type usageCounter struct {
	org      string
	day      int64 // days since 1970-01-01, UTC
	endpoint string
	status   int
}

func dayNumber(t time.Time) int64 { return t.Unix() / secondsPerDay }

const secondsPerDay = 24 * 60 * 60

// key is the bucket key the counter is stored under.
func (c usageCounter) key() string {
	return usageKey(c.org, time.Unix(c.day*secondsPerDay, 0))
}

// name is how the counter is named in the stored counts.
func (c usageCounter) name() string { return c.endpoint + " " + strconv.Itoa(c.status) }

// usageFlushEvery is how often counts go to the bucket.
const usageFlushEvery = 5 * time.Second

func usageKey(org string, day time.Time) string {
	return "usage." + org + "." + day.UTC().Format(time.DateOnly)
}

func (u *usageMeter) count(org, endpoint string, status int, at time.Time) {
	c := usageCounter{org: org, day: dayNumber(at), endpoint: endpoint, status: status}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending == nil {
		u.pending = map[usageCounter]int64{}
	}
	u.pending[c]++
}

// run flushes the counts until ctx ends, and once more then.
func (u *usageMeter) run(ctx context.Context, onError func(error)) {
	t := time.NewTicker(usageFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			if err := u.flush(context.WithoutCancel(ctx)); err != nil {
				onError(err)
			}
			return
		}
		if err := u.flush(ctx); err != nil {
			onError(err)
		}
	}
}

// flush adds the pending counts to the bucket. Counts that could not be
// stored stay pending for the next flush.
func (u *usageMeter) flush(ctx context.Context) error {
	u.mu.Lock()
	pending := u.pending
	u.pending = nil
	u.mu.Unlock()
	byKey := map[string]map[usageCounter]int64{}
	for c, n := range pending {
		k := c.key()
		if byKey[k] == nil {
			byKey[k] = map[usageCounter]int64{}
		}
		byKey[k][c] = n
	}
	var firstErr error
	for key, counts := range byKey {
		if err := u.add(ctx, key, counts); err != nil {
			firstErr = err
			u.mu.Lock()
			if u.pending == nil {
				u.pending = map[usageCounter]int64{}
			}
			for c, n := range counts {
				u.pending[c] += n
			}
			u.mu.Unlock()
		}
	}
	return firstErr
}

func (u *usageMeter) add(ctx context.Context, key string, counts map[usageCounter]int64) error {
	for range 20 {
		raw, rev, found, err := u.bucket.GetRevision(ctx, key)
		if err != nil {
			return err
		}
		stored := map[string]int64{}
		if found {
			json.Unmarshal(raw, &stored)
		}
		for c, n := range counts {
			stored[c.name()] += n
		}
		next, _ := json.Marshal(stored)
		if !found {
			_, created, err := u.bucket.Create(ctx, key, next)
			if err != nil || created {
				return err
			}
			continue // another replica created it first
		}
		if ok, err := u.bucket.Update(ctx, key, next, rev); err != nil || ok {
			return err
		}
	}
	return errorf("server_error", "usage counts of "+key+" kept changing under us")
}

// counts returns an organisation's counts of a day: stored plus pending.
func (u *usageMeter) counts(ctx context.Context, org string, day time.Time) (map[string]int64, error) {
	out := map[string]int64{}
	if raw, found, err := u.bucket.Get(ctx, usageKey(org, day)); err != nil {
		return nil, err
	} else if found {
		json.Unmarshal(raw, &out)
	}
	u.mu.Lock()
	for c, n := range u.pending {
		if c.org == org && c.day == dayNumber(day) {
			out[c.name()] += n
		}
	}
	u.mu.Unlock()
	return out, nil
}

// metered counts each request of an authenticated caller under its route
// pattern (such as /api/bookings/{id}).
func (s *Server) metered(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		endpoint := r.URL.Path
		if route := mux.CurrentRoute(r); route != nil {
			endpoint, _ = route.GetPathTemplate()
		}
		if p := principal(r.Context()); p.OrganizationID != "" && rec.status != 0 {
			s.usage.count(p.OrganizationID, endpoint, rec.status, time.Now())
		}
	})
}

// handleUsage reports an organisation's requests over a period (day, week,
// month, or from/to dates), by endpoint and, with groupBy, by status or
// day; its rate limits; and what its documents take of its storage quota.
// Admins may name any organisation (see domain.CheckUsageReader).
func (s *Server) handleUsage() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var p domain.Problems
		who := principal(r.Context())
		org := who.OrganizationID
		if o := q.Get("organizationId"); o != "" && o != org {
			if err := domain.CheckUsageReader(who, o); err != nil {
				return err
			}
			if _, ok := s.identity.Organization(o); !ok {
				return domain.Errorf(domain.NotFound, "no organisation %s", o)
			}
			org = o
		}
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
			from, to = dateParam(q.Get("from"), "from", today, &p), dateParam(q.Get("to"), "to", today, &p)
			period = from.Format(time.DateOnly) + "/" + to.Format(time.DateOnly)
			if to.Before(from) || to.Sub(from) > 366*24*time.Hour {
				p.Add("to", domain.CodeInvalidDate, "must be from 0 to 366 days after from")
			}
		}
		groupBy := q.Get("groupBy")
		if groupBy != "" && groupBy != "endpoint" && groupBy != "status" && groupBy != "day" {
			p.Add("groupBy", domain.CodeInvalidValue, "must be endpoint, status or day")
		}
		if err := p.Err(); err != nil {
			return err
		}
		stored := s.documents.StoredBy(org)
		out := views.UsageJSON{Period: period, RequestsByEndpoint: map[string]int64{}, OrganizationID: org,
			RateLimits:      views.ToRateLimitsJSON(s.limitsOf(org)),
			DocumentStorage: views.DocumentStorageJSON{Documents: stored.Documents, BytesStored: stored.Bytes, QuotaBytes: s.opts.DocumentQuota}}
		byStatus, byDay := map[string]int64{}, map[string]int64{}
		for day := from; !day.After(to); day = day.AddDate(0, 0, 1) {
			counts, err := s.usage.counts(r.Context(), org, day)
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

// dateParam reads a date; def when empty.
func dateParam(v, name string, def time.Time, p *domain.Problems) time.Time {
	if v == "" {
		return def
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		p.Add(name, domain.CodeInvalidDate, "must be a date as YYYY-MM-DD")
	}
	return t
}
