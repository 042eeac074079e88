package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/views"
)

// authWindow is how often one kind of failure from one place is recorded.
const authWindow = time.Minute

// authRecorder records authorization events, folding failures: of the same
// action, subject and address, one is recorded per minute, carrying the
// count of those left out since.
type authRecorder struct {
	mu   sync.Mutex
	seen map[string]*authFold
}

type authFold struct {
	since   time.Time
	skipped int
	// last is the last failure left out: recorded with the count when
	// the minute is over and no failure came after it (see due).
	last authRecord
}

// authRecord is an authorization event as it is recorded: the event, by
// whom (the caller, if authenticated), from where, and in which request; a
// failure's is kept while folded (see authFold).
type authRecord struct {
	event     domain.AuthorizationRecorded
	principal domain.Principal
	ip        string
	requestID string
}

// admit says whether f, an event of key, is recorded now, and how many
// were folded into it.
func (a *authRecorder) admit(key string, now time.Time, f authRecord) (bool, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[string]*authFold{}
	}
	if len(a.seen) > 100_000 {
		// Forget the folds whose minute is over with nothing folded
		// into them; only if that is not enough, every fold, and with
		// them the counts the next records would have said.
		for k, f := range a.seen {
			if f.skipped == 0 && now.Sub(f.since) >= authWindow {
				delete(a.seen, k)
			}
		}
		if len(a.seen) > 100_000 {
			a.seen = map[string]*authFold{}
		}
	}
	fold, ok := a.seen[key]
	if ok && now.Sub(fold.since) < authWindow {
		fold.skipped++
		fold.last = f
		return false, 0
	}
	skipped := 0
	if ok {
		skipped = fold.skipped
	}
	a.seen[key] = &authFold{since: now}
	return true, skipped
}

// due takes the folds with failures left out whose minute is over at now
// (every one, with all), and returns the last failure of each, with the
// others left out before it as its repeats: the record no failure after
// them would make. The next failure of such a fold is recorded at once.
func (a *authRecorder) due(now time.Time, all bool) []authRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []authRecord
	for k, fold := range a.seen {
		if fold.skipped > 0 && (all || now.Sub(fold.since) >= authWindow) {
			f := fold.last
			f.event.Repeats = fold.skipped - 1
			out = append(out, f)
			delete(a.seen, k)
		}
	}
	return out
}

// foldsRecordedEvery is how often RecordFoldedFailures looks for folds
// whose minute is over.
const foldsRecordedEvery = 10 * time.Second

// RecordFoldedFailures records, every few seconds and once more when ctx
// ends, the failures left out of the log whose minute is over without a
// failure after them to carry their count (see authRecorder): a burst of
// guesses that then stopped, or was cut off by a stop, looked like its
// first alone.
func (s *Server) RecordFoldedFailures(ctx context.Context) {
	tick := time.NewTicker(foldsRecordedEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			for _, f := range s.authLog.due(time.Now(), true) {
				s.storeAuth(context.WithoutCancel(ctx), f)
			}
			return
		case now := <-tick.C:
			for _, f := range s.authLog.due(now, false) {
				s.storeAuth(ctx, f)
			}
		}
	}
}

// recordAuth puts an authorization event into the audit log. Successes
// are always recorded; failures are folded. A failure to record is logged,
// never shown to the client.
func (s *Server) recordAuth(r *http.Request, e domain.AuthorizationRecorded) {
	e.Detail = clip(e.Detail, maxErrorDescription) // it quotes the request's path
	f := authRecord{event: e, principal: principal(r.Context()), ip: clientIP(r), requestID: requestID(r.Context())}
	if e.Action != domain.ActionTokenIssued {
		ok, skipped := s.authLog.admit(e.Action+"\x00"+e.Subject+"\x00"+clientNetwork(f.ip), time.Now(), f)
		if !ok {
			return
		}
		f.event.Repeats = skipped
	}
	seq, ok := s.storeAuth(context.WithoutCancel(r.Context()), f)
	if !ok {
		return
	}
	// Like any write, it is in this replica's audit log before the
	// answer goes out, so the caller reading the log next finds it; a
	// replica too far behind answers anyway (the event is stored).
	_ = s.waitFor(r, seq)
}

// storeAuth stores the authorization event of f, as made by its caller or
// else by the subject it names, and reports whether it could.
func (s *Server) storeAuth(ctx context.Context, f authRecord) (uint64, bool) {
	p := f.principal
	if p.Subject == "" {
		p = domain.Principal{Subject: f.event.Subject, OrganizationID: f.event.OrganizationID}
	}
	m := commands.NewMeta(p, "", f.requestID)
	m.ClientIP = f.ip
	seq, err := s.commands.RecordAuthorization(ctx, m, f.event)
	if err != nil {
		s.log.ErrorContext(ctx, "audit: authorization event not recorded", "request_id", f.requestID, "action", f.event.Action, "err", err)
		return 0, false
	}
	return seq, true
}

// handleAuditLogs serves the audit log of the caller's organisation scope
// (every organisation's, for an admin), client addresses as
// domain.Principal.ActsFor allows.
func (s *Server) handleAuditLogs() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var p domain.Problems
		page, limit := pageParams(q, &p)
		f := projections.AuditFilter{Action: q.Get("action"), Resource: q.Get("resource"), UserID: q.Get("userId")}
		f.From, f.To = timeWindow(q, &p)
		domain.CheckAuditFilter(f.Action, f.Resource, &p)
		named := idParam(q, &p, "organizationId")
		if err := p.Err(); err != nil {
			return err
		}
		who := principal(r.Context())
		f.Tenant = who.OrganizationScope()
		if named != "" {
			// An organisation's log as it reads it itself: an admin's
			// own organisation's too, which its scope (every one) is not.
			if err := s.checkOrganizationRead(who, named, "audit log"); err != nil {
				return err
			}
			f.Tenant = named
		}
		entries, total, err := s.audit.Entries(r.Context(), s.history.Events, f, page, limit)
		if err != nil {
			return err
		}
		writePage(w, "logs", entries, func(e projections.AuditEntry) views.AuditEntryJSON {
			entry := views.ToAuditEntryJSON(e)
			if !who.ActsFor(e.Tenant) {
				entry.IPAddress = ""
			}
			return entry
		}, page, limit, total)
		return nil
	}
}

// timeWindow reads the from and to parameters of a list, to exclusive;
// to may not be before from. A date is a day: from its first instant, to
// its last, so that from=2026-06-21&to=2026-06-21 is that day, as a day
// is read by the usage figures and by cargoctl.
func timeWindow(q url.Values, p *domain.Problems) (from, to time.Time) {
	from, _ = timeParam(q.Get("from"), "from", p)
	to, day := timeParam(q.Get("to"), "to", p)
	// A date as to ends with its day, and is compared with from so: from
	// within that day is in order (from=2026-06-21T12:00:00Z&to=2026-06-21
	// is the afternoon), where its midnight refused it.
	last := to
	if day {
		to = to.AddDate(0, 0, 1)
		last = to.Add(-time.Nanosecond)
	}
	if !from.IsZero() && !last.IsZero() && last.Before(from) {
		p.Add("to", domain.CodeInvalidDate, "must not be before from")
	}
	return from, to
}

// timeParam reads a date-time (RFC 3339) or a date (its midnight UTC, and
// day true). The zero time is no bound: a bound at its instant
// (0001-01-01) is taken a nanosecond later, before which no event is,
// rather than as none.
func timeParam(v, name string, p *domain.Problems) (t time.Time, day bool) {
	if v == "" {
		return time.Time{}, false
	}
	t, ok := domain.ParseDateTime(v)
	if !ok {
		d, err := time.Parse(time.DateOnly, v)
		t, ok, day = d, err == nil, err == nil
	}
	switch {
	case ok && t.IsZero():
		return t.Add(time.Nanosecond), day
	case ok:
		return t, day
	}
	msg := "must be " + domain.DateTimeShape + ", or a date (YYYY-MM-DD)"
	// A + in a query string is a space: 10:00:00+01:00 comes as
	// "10:00:00 01:00".
	if _, plus := domain.ParseDateTime(strings.ReplaceAll(v, " ", "+")); plus {
		msg += "; a + in a query string stands for a space: write the offset's + as %2B"
	}
	p.Add(name, domain.CodeInvalidDate, "%s", msg)
	return time.Time{}, false
}
