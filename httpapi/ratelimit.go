package httpapi

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
)

const codeRateLimited = "rate_limited"

// rateLimiter counts requests in fixed windows of a minute, an hour and a
// day (UTC), per key. It lives in one process: with several replicas
// behind a balancer each enforces the limits on what it serves.
type rateLimiter struct {
	mu   sync.Mutex
	now  func() time.Time
	keys map[string]*rateKey
}

// rateKey is what a limiter keeps of one key: its windows, and the
// RateLimit-Policy of the limits it last saw, which seldom change, so that
// a request builds no policy text.
type rateKey struct {
	windows [3]rateWindow
	limits  domain.RateLimits
	policy  string
}

type rateWindow struct {
	start time.Time
	count int
}

var windowLengths = [3]time.Duration{time.Minute, time.Hour, 24 * time.Hour}
var windowNames = [3]string{"minute", "hour", "day"}

// perWindow is the limit of each window, in the order of windowLengths.
func perWindow(l domain.RateLimits) [3]int { return [3]int{l.PerMinute, l.PerHour, l.PerDay} }

// rateDecision is the outcome of a request against its limits.
type rateDecision struct {
	allowed    bool
	retryAfter time.Duration // when refused: until the full window resets
	policy     string        // RateLimit-Policy header
	remaining  string        // RateLimit header, for the tightest window
}

// take counts a request of key against limits (0: no limit in a window).
func (l *rateLimiter) take(key string, limits domain.RateLimits) rateDecision {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys == nil {
		l.keys = map[string]*rateKey{}
	}
	if len(l.keys) > 100_000 {
		// Forget keys whose limited windows are all over; only if that
		// is not enough, everything (of this limiter: organisations
		// have their own). A key of the token endpoint has a minute's
		// limit alone: kept for the day, a flood of names tried earlier
		// would wipe the counts of the names tried now.
		for k, e := range l.keys {
			if e.over(now) {
				delete(l.keys, k)
			}
		}
		if len(l.keys) > 100_000 {
			clear(l.keys)
		}
	}
	e := l.keys[key]
	if e == nil {
		e = &rateKey{policy: policyOf(limits), limits: limits}
		l.keys[key] = e
	}
	if e.limits != limits {
		e.policy, e.limits = policyOf(limits), limits
	}
	w, quota := &e.windows, perWindow(limits)
	d := rateDecision{allowed: true, policy: e.policy}
	tightest, tightestLeft := -1, 0
	for i := range w {
		start := now.UTC().Truncate(windowLengths[i])
		if !w[i].start.Equal(start) {
			w[i] = rateWindow{start: start}
		}
		if quota[i] <= 0 {
			continue
		}
		left := quota[i] - w[i].count
		if left <= 0 {
			d.allowed = false
			d.retryAfter = max(d.retryAfter, start.Add(windowLengths[i]).Sub(now))
		}
		// The window with the fewest left; of those with as many left,
		// or used up, the longest (windows come shortest first), which
		// lifts last, as Retry-After says: the client that waits for the
		// reset it names must not be refused again.
		if tightest < 0 || left <= tightestLeft || left <= 0 && tightestLeft <= 0 {
			tightest, tightestLeft = i, left
		}
	}
	if d.allowed {
		for i := range w {
			w[i].count++
		}
		tightestLeft--
	}
	if tightest >= 0 {
		reset := w[tightest].start.Add(windowLengths[tightest]).Sub(now)
		d.remaining = `"` + windowNames[tightest] + `";r=` + strconv.Itoa(max(0, tightestLeft)) + ";t=" + strconv.Itoa(wholeSeconds(reset))
	}
	return d
}

// over reports whether every window the key's limits count in has ended
// by now: what it counted limits nothing any more.
func (e *rateKey) over(now time.Time) bool {
	for i, quota := range perWindow(e.limits) {
		if quota > 0 && now.Before(e.windows[i].start.Add(windowLengths[i])) {
			return false
		}
	}
	return true
}

// policyOf is the RateLimit-Policy of limits: "" when none applies.
func policyOf(limits domain.RateLimits) string {
	var items []string
	for i, n := range perWindow(limits) {
		if n > 0 {
			items = append(items, fmt.Sprintf(`"%s";q=%d;w=%d`, windowNames[i], n, int(windowLengths[i].Seconds())))
		}
	}
	return strings.Join(items, ", ")
}

// apply sets the RateLimit headers, and refuses with 429 when over,
// saying the limits of what were exceeded ("for organisation x").
func (d rateDecision) apply(w http.ResponseWriter, what ...string) error {
	if d.policy != "" {
		w.Header().Set("RateLimit-Policy", d.policy)
		w.Header().Set("RateLimit", d.remaining)
	}
	if d.allowed {
		return nil
	}
	after := strconv.Itoa(wholeSeconds(d.retryAfter))
	return &httpError{code: codeRateLimited, msg: "too many requests " + strings.Join(what, "") + "; retry after " + after + "s",
		header: http.Header{"Retry-After": {after}}}
}

// wholeSeconds is d in whole seconds, rounded up and at least 1: a client
// that waits the figure it is given, in Retry-After, in the message beside
// it or in RateLimit's reset, finds the window reset, and is never told 0
// (retry at once) while the window still runs.
func wholeSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// limitsOf is an organisation's limits: its own where set, else the
// service's defaults.
func (s *Server) limitsOf(orgID string) domain.RateLimits {
	l := s.opts.RateLimits
	if o, ok := s.identity.Organization(orgID); ok {
		if o.RateLimits.PerMinute > 0 {
			l.PerMinute = o.RateLimits.PerMinute
		}
		if o.RateLimits.PerHour > 0 {
			l.PerHour = o.RateLimits.PerHour
		}
		if o.RateLimits.PerDay > 0 {
			l.PerDay = o.RateLimits.PerDay
		}
	}
	return l
}

// rateLimited enforces the caller's organisation's limits.
func (s *Server) rateLimited(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		org := principal(r.Context()).OrganizationID
		if err := s.limiter.take(org, s.limitsOf(org)).apply(w, "for organisation ", org); err != nil {
			writeError(w, r, s.log, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Guessing limits of the token endpoint, a minute: per client id (or
// username) from one address, per address, and per name from everywhere.
// The tight limit is per name and address, so that an attacker guessing
// a tenant's secret from elsewhere does not lock the tenant out; the
// ceiling per name, far above what a person or a looping client reaches,
// still stops a guess spread over many addresses.
const (
	tokenTriesPerSubject        = 20
	tokenTriesPerAddress        = 120
	tokenTriesPerSubjectCeiling = 600
)

// limitTokenRequests refuses token requests beyond the guessing limits.
// Names are counted as login reads them: a username without its case
// (else each spelling would have guesses of its own), a client id as
// given (two that differ in case alone are two clients, whose failures
// are not each other's).
func (s *Server) limitTokenRequests(r *http.Request, w http.ResponseWriter, subject string) error {
	ip, name := clientNetwork(clientIP(r)), subject
	if user, ok := strings.CutPrefix(subject, "user:"); ok {
		name = "user:" + strings.ToLower(user)
	}
	// The refusal names what is counted, the address or its /64: a client
	// told "this address" would try another of its /64 in vain.
	from := "from " + ip
	if err := s.tokenLimiter.take("ip:"+ip, domain.RateLimits{PerMinute: tokenTriesPerAddress}).apply(w, from); err != nil {
		return err
	}
	// Only tries an address may make count toward the ceiling: one
	// address adds at most tokenTriesPerSubject to it. The key's prefix
	// is its own: a name may end in "@" and an address, and its ceiling
	// must not be another name's count from that address.
	fromHere := s.tokenLimiter.take("subject-at:"+ip+" "+name, domain.RateLimits{PerMinute: tokenTriesPerSubject})
	if err := fromHere.apply(w, "for ", subject, " ", from); err != nil {
		return err
	}
	if err := s.tokenLimiter.take("subject:"+name, domain.RateLimits{PerMinute: tokenTriesPerSubjectCeiling}).apply(w, "for ", subject, " from all addresses"); err != nil {
		return err
	}
	// The RateLimit headers a client paces itself by are those of its
	// own limit, not of the ceiling.
	return fromHere.apply(w)
}

// clientNetwork is what a client at ip (clientIP) is counted under where
// counting holds back abuse (guessing limits, folded failures): its IPv4
// address, or the /64 of its IPv6 address. One host, or one customer of a
// provider, commonly has a whole /64 to choose source addresses from
// (RFC 6177), so counted per address it would get limits of its own for
// every guess and an audit record for every failure.
func clientNetwork(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if a = a.Unmap(); a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
