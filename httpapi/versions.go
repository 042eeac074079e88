package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
	"github.com/cargostream/cargostream/tokens"
)

// Versions: a quote, booking, stock request, flight or shipment is at the
// version of its aggregate's last event, that event's stream sequence. It
// is the resource's ETag ("42"), and what If-Match on a change names: the
// command then expects the aggregate to be at that sequence, which the
// event store checks as it appends (commands.Meta.IfVersion). A quote's
// ETag also names which of its options' flights are closed ("42-1", see
// quoteETag): no change of a quote takes If-Match.

// etag is the strong ETag of version.
func etag(version uint64) string { return `"` + uitoa(version) + `"` }

// setVersion tells the client the version of the resource it gets.
func setVersion(w http.ResponseWriter, version uint64) { w.Header().Set("ETag", etag(version)) }

// notModified sets the ETag tag and, when the request's If-None-Match
// names it, answers 304 and reports true: the client holds what the
// resource shows already.
func notModified(w http.ResponseWriter, r *http.Request, tag string) bool {
	w.Header().Set("ETag", tag)
	if inm := ifNoneMatch(r); inm == "" || !etagMatches(inm, tag) {
		return false
	}
	w.WriteHeader(http.StatusNotModified)
	return true
}

// answerVersion answers a resource, of aggregate agg, as it is now (now),
// or as it was at the moment the request asks for with at or seq (then),
// with its version as ETag. missing is the message of a resource now has
// not.
func answerVersion[T, J any](s *Server, w http.ResponseWriter, r *http.Request, agg domain.Aggregate, then func(projections.Cut) (T, uint64, error),
	now func() (T, uint64, bool), missing string, toJSON func(T) J) error {
	cut, past, err := pastCut(r)
	if err != nil {
		return err
	}
	var v T
	var tag string
	if past {
		var version uint64
		if v, version, err = then(cut); err != nil {
			return err
		}
		tag = etag(version)
	} else {
		var ok bool
		v, tag, ok, err = current(s, w, r, agg, func() (T, string, bool) {
			v, version, ok := now()
			return v, etag(version), ok
		}, nil)
		if err != nil {
			return err
		}
		if !ok {
			return domain.Errorf(domain.NotFound, "%s", missing)
		}
	}
	if !notModified(w, r, tag) {
		writeJSON(w, http.StatusOK, toJSON(v))
	}
	return nil
}

// wakers are what moves a resource's ETag besides the events of its
// aggregate: events of other aggregates, or of their status alone (the
// flights of a quote's options, see projections.StatusOf), and a moment
// (the next of those flights to close by its departure time), zero for
// none.
type wakers struct {
	aggs []domain.Aggregate
	at   time.Time
}

// maxPreferWait bounds a conditional GET's wait for a change (Prefer:
// wait=N): long enough that a client waiting for a booking's confirmation
// asks a few times a minute at most, short of the timeouts of usual
// proxies (60 s).
const maxPreferWait = 30 * time.Second

// current is the resource as now gives it, with its ETag. A conditional
// GET whose If-None-Match names the ETag it has, and that asks to wait
// (Prefer: wait=N, RFC 7240), is a long poll: it gets the resource once
// this replica's read models apply an event of its aggregate agg, or
// after N seconds (at most maxPreferWait) the 304 it would have had at
// once, and Preference-Applied says it waited. A client that waits for a
// booking's confirmation thus learns it within milliseconds, without
// polling. A shutdown ends the wait at once. A client that hangs up while
// it waits gets the request's error (a 499), not a 304 nobody reads.
// The credential is checked again after a change ended the wait, and
// a withdrawal of it ends the wait too. What
// else moves the ETag (the flight of a quote's option closing, see
// quoteETag), watch tells before each look (nil: nothing): its events and
// its moment wake the wait too, which answers if the ETag moved.
func current[T any](s *Server, w http.ResponseWriter, r *http.Request, agg domain.Aggregate, now func() (T, string, bool), watch func() wakers) (T, string, bool, error) {
	wait := preferredWait(r)
	inm := ifNoneMatch(r)
	if wait == 0 || inm == "" {
		v, tag, ok := now()
		return v, tag, ok, nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	withdrawals := credentialAggregates(r)
	for {
		// Waiting before looking: a change applied after the look
		// wakes the wait.
		var more wakers
		if watch != nil {
			more = watch()
		}
		changed, stop := s.projector.ChangeOf(agg, append(more.aggs, withdrawals...)...)
		v, tag, ok := now()
		if ok && etagMatches(inm, tag) {
			w.Header().Set("Preference-Applied", "wait="+strconv.Itoa(int(wait/time.Second)))
			var due <-chan time.Time
			if !more.at.IsZero() {
				// Since Go 1.23 a timer nobody holds is collected,
				// fired or not: no Stop is owed.
				due = time.After(time.Until(more.at))
			}
			waiting, again := time.Now(), false
			counted := s.metrics.LongPollWaiting()
			select {
			case <-changed:
				again = true
			case <-due:
				again = true
			case <-ctx.Done():
			case <-s.stopping:
			}
			counted()
			if st := stateOf(r.Context()); st != nil {
				st.waited += time.Since(waiting) // not the server's time: out of the metrics
			}
			if again {
				stop()
				// The credential was checked before the wait: one
				// revoked, or an organisation disabled, while it
				// lasted (up to maxPreferWait) gets the 401 then, not
				// what changed meanwhile, nor a 304 once the wait runs
				// out.
				if _, err := s.principalOf(r); err != nil {
					var none T
					return none, "", false, s.refusedCredential(r, err)
				}
				continue
			}
		}
		stop()
		return v, tag, ok, r.Context().Err()
	}
}

// credentialAggregates are the aggregates whose events may withdraw the
// credential r came with (commands.CredentialAggregates). A long poll
// wakes at them as at a change, so that a credential withdrawn while it
// waits is refused at once: it waited on until its time ran out, and was
// answered a 304 as if it still held.
func credentialAggregates(r *http.Request) []domain.Aggregate {
	// The token was verified as the request came: its id is read again
	// here, not checked.
	var jti string
	if scheme, raw, _ := strings.Cut(r.Header.Get("Authorization"), " "); strings.EqualFold(scheme, "Bearer") {
		jti, _ = tokens.ID(strings.TrimSpace(raw))
	}
	return commands.CredentialAggregates(principal(r.Context()), jti)
}

// preferredWait is the wait a request's Prefer header asks for, at most
// maxPreferWait, or 0. As RFC 7240 says, a preference the server cannot
// honour is ignored, not refused: other preferences, a wait that is no
// whole number of seconds; a wait's parameters (after ';') are ignored
// too.
func preferredWait(r *http.Request) time.Duration {
	for _, header := range r.Header.Values("Prefer") {
		for pref := range strings.SplitSeq(header, ",") {
			pref, _, _ = strings.Cut(pref, ";")
			name, value, _ := strings.Cut(strings.TrimSpace(pref), "=")
			if !strings.EqualFold(strings.TrimSpace(name), "wait") {
				continue
			}
			seconds, err := strconv.ParseUint(strings.Trim(strings.TrimSpace(value), `"`), 10, 64)
			switch {
			case errors.Is(err, strconv.ErrRange):
				return maxPreferWait // a wait longer than any: the longest there is
			case err != nil:
				return 0
			}
			return time.Duration(min(seconds, uint64(maxPreferWait/time.Second))) * time.Second
		}
	}
	return 0
}

// changeMeta is the metadata of the change r asks for, with the version
// its If-Match names, if it has one. If-Match takes one strong ETag as a
// GET gave it: the store checks one expected version, not a list. "*"
// (any version) adds nothing, as changes need the resource anyway.
// Only a request without the header changes the resource unchecked: one
// sent empty (a script's unset $ETAG) names no version, and one sent on
// several lines is a list (RFC 9110 joins them), which the first line
// must not stand for.
func changeMeta(r *http.Request) (commands.Meta, error) {
	m := meta(r)
	lines := r.Header.Values("If-Match")
	if len(lines) == 0 {
		return m, nil
	}
	v := strings.TrimSpace(strings.Join(lines, ", "))
	if v == "*" {
		return m, nil
	}
	digits, quoted := strings.CutPrefix(v, `"`)
	digits, closed := strings.CutSuffix(digits, `"`)
	version, err := strconv.ParseUint(digits, 10, 64)
	// An ETag compares as given (RFC 9110 §8.8.3.2): "042" and "+42" are
	// none the service gave, not version 42.
	if !quoted || !closed || err != nil || strconv.FormatUint(version, 10) != digits {
		return m, domain.Errorf(domain.InvalidRequest, "If-Match must be one strong ETag as the resource's ETag header gave it, such as \"42\" with the quotes (not weak, not a list, not empty), or *; got %.80q", v)
	}
	m.IfVersion = &version
	return m, nil
}

// pastCut reads at (an RFC 3339 time) or seq (a stream sequence), which
// ask for a resource as it was then; past is false when neither is given.
// A time to come is refused: what it will show is not known yet.
func pastCut(r *http.Request) (cut projections.Cut, past bool, err error) {
	q := r.URL.Query()
	at, seq := q.Get("at"), q.Get("seq")
	var p domain.Problems
	switch {
	case at != "" && seq != "":
		p.Add("seq", domain.CodeInvalidValue, "give at or seq, not both")
	case at != "":
		t, ok := domain.ParseDateTime(at)
		switch {
		case !ok:
			p.Add("at", domain.CodeInvalidDate, "must be %s (a + in the offset written %%2B)", domain.DateTimeShape)
		case t.After(time.Now()):
			p.Add("at", domain.CodeInvalidDate, "must not be in the future: what a resource will be is not known yet")
		}
		cut.At = t
	case seq != "":
		n, perr := strconv.ParseUint(seq, 10, 64)
		if perr != nil || n == 0 || seq[0] == '+' {
			p.Add("seq", domain.CodeInvalidFormat, "must be a stream sequence: a whole number from 1")
		}
		cut.Sequence = n
	}
	return cut, at != "" || seq != "", p.Err()
}
