package httpapi

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
)

func TestRateLimiterWindows(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 30, 0, time.UTC)
	l := rateLimiter{now: func() time.Time { return now }}
	limits := domain.RateLimits{PerMinute: 5, PerHour: 7}
	for i := range 5 {
		if d := l.take("org:a", limits); !d.allowed {
			t.Fatalf("request %d refused", i+1)
		}
	}
	d := l.take("org:a", limits)
	if d.allowed || d.retryAfter != 30*time.Second {
		t.Fatalf("sixth = %+v, want refused for 30s", d)
	}
	w := httptest.NewRecorder()
	err := d.apply(w, "for a")
	if err != nil {
		// The refusal carries its Retry-After to the answer.
		writeError(w, httptest.NewRequest("GET", "/api/quotes", nil), slog.New(slog.DiscardHandler), err)
	}
	if err == nil || w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "30" ||
		w.Header().Get("RateLimit-Policy") != `"minute";q=5;w=60, "hour";q=7;w=3600` || w.Header().Get("RateLimit") != `"minute";r=0;t=30` {
		t.Errorf("429 = %d, headers %v, err %v", w.Code, w.Header(), err)
	}
	if d := l.take("org:b", limits); !d.allowed {
		t.Error("another organisation was limited")
	}
	// The next minute the minute window resets, but the hour's 7 bind.
	now = now.Add(31 * time.Second)
	for i := range 2 {
		if d := l.take("org:a", limits); !d.allowed {
			t.Fatalf("after the reset, request %d refused", i+1)
		}
	}
	if d := l.take("org:a", limits); d.allowed || d.retryAfter != 3539*time.Second {
		t.Errorf("past the hour's limit = %+v", d)
	}
}

func TestARefusalUnderTwoUsedUpWindowsNamesTheOneThatLiftsLast(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 30, 0, time.UTC)
	l := rateLimiter{now: func() time.Time { return now }}
	limits := domain.RateLimits{PerMinute: 5, PerHour: 100, PerDay: 5}
	for range 5 {
		l.take("acme", limits)
	}
	d := l.take("acme", limits)
	if d.allowed || d.retryAfter != 50370*time.Second || d.remaining != `"day";r=0;t=50370` {
		t.Errorf("the sixth request = %+v; want refused for 50370 s, the day's window named", d)
	}
}

func TestRateLimiterHeadersFollowChangedLimits(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 30, 0, time.UTC)
	l := rateLimiter{now: func() time.Time { return now }}
	// One key, its limits changed between requests (an admin sets them):
	// each answer states the limits it was counted against.
	for i, c := range []struct {
		limits            domain.RateLimits
		policy, remaining string
		allowed           bool
	}{
		{domain.RateLimits{}, "", "", true},
		{domain.RateLimits{PerMinute: 10}, `"minute";q=10;w=60`, `"minute";r=8;t=30`, true}, // the first request counted too
		{domain.RateLimits{PerMinute: 10}, `"minute";q=10;w=60`, `"minute";r=7;t=30`, true},
		{domain.RateLimits{PerHour: 100, PerDay: 5}, `"hour";q=100;w=3600, "day";q=5;w=86400`, `"day";r=1;t=50370`, true},
		{domain.RateLimits{PerMinute: 4}, `"minute";q=4;w=60`, `"minute";r=0;t=30`, false},
		{domain.RateLimits{}, "", "", true},
	} {
		d := l.take("acme", c.limits)
		if d.policy != c.policy || d.remaining != c.remaining || d.allowed != c.allowed {
			t.Errorf("request %d with %v = %+v; want %q %q allowed %v", i+1, c.limits, d, c.policy, c.remaining, c.allowed)
		}
	}
}

func TestAuthRecorderFoldsFailures(t *testing.T) {
	var a authRecorder
	now := time.Now()
	var none authRecord
	if ok, n := a.admit("k", now, none); !ok || n != 0 {
		t.Fatal("the first failure was not recorded")
	}
	for range 50 {
		if ok, _ := a.admit("k", now.Add(time.Second), none); ok {
			t.Fatal("a repeat within the minute was recorded")
		}
	}
	if ok, _ := a.admit("other", now, none); !ok {
		t.Error("another key was folded")
	}
	if ok, n := a.admit("k", now.Add(2*time.Minute), none); !ok || n != 50 {
		t.Errorf("next minute = %v, %d folded; want true, 50", ok, n)
	}
}

// Failures left out whose minute ends without another failure to carry
// their count are given up by due, as their last one with the others as
// its repeats, once the minute is over (or at once, asked for all): a
// burst of guesses that stopped looked like its first alone.
func TestFailuresLeftOutAreDueOnceTheirMinuteIsOverWithoutAnotherAfterThem(t *testing.T) {
	now := time.Now()
	failure := func(detail string) authRecord {
		return authRecord{event: domain.AuthorizationRecorded{Action: domain.ActionLoginFailed, Detail: detail}}
	}
	for _, tt := range []struct {
		name    string
		at      time.Duration // after the first failure
		all     bool
		want    string // the last failure's detail and its repeats, or "" for none due
		another bool   // a failure after due recorded at once
	}{
		{"within the minute", 30 * time.Second, false, "", false},
		{"its minute over", time.Minute, false, "guess 5, 3 repeats", true},
		{"all, within the minute", time.Second, true, "guess 5, 3 repeats", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var a authRecorder
			for i := range 5 {
				a.admit("k", now.Add(time.Duration(i)*time.Second), failure(fmt.Sprint("guess ", i+1)))
			}
			got := ""
			for _, f := range a.due(now.Add(tt.at), tt.all) {
				got += fmt.Sprintf("%s, %d repeats", f.event.Detail, f.event.Repeats)
			}
			if got != tt.want {
				t.Errorf("due = %q, want %q", got, tt.want)
			}
			if again := a.due(now.Add(tt.at), tt.all); len(again) != 0 {
				t.Errorf("due again = %d failures, want none: they were recorded", len(again))
			}
			if ok, n := a.admit("k", now.Add(tt.at), failure("next")); ok != tt.another || n != 0 {
				t.Errorf("the next failure recorded %v with %d folded, want %v with 0", ok, n, tt.another)
			}
		})
	}
}

func TestGuessesFromElsewhereDoNotLockATenantOut(t *testing.T) {
	s := &Server{}
	s.tokenLimiter.now = func() time.Time { return time.Date(2026, 11, 26, 8, 0, 30, 0, time.UTC) }
	try := func(address, name string) int {
		r := httptest.NewRequest("POST", "/api/auth/token", nil)
		r.RemoteAddr = address + ":40000"
		w := httptest.NewRecorder()
		if err := s.limitTokenRequests(r, w, name); err != nil {
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	}
	for range tokenTriesPerSubject {
		try("198.51.100.7", "user:acme")
	}
	if got := try("198.51.100.7", "user:ACME"); got != http.StatusTooManyRequests {
		t.Errorf("the guessing address's next try at the username in another case = %d, want 429", got)
	}
	for range tokenTriesPerSubject {
		try("198.51.100.7", "client:Acme")
	}
	if got := try("198.51.100.7", "client:acme"); got != http.StatusOK {
		t.Errorf("another client, whose id differs in case alone, from the guessing address = %d, want it let through", got)
	}
	if got := try("203.0.113.9", "user:acme"); got != http.StatusOK {
		t.Errorf("the tenant's own address = %d, want it let through", got)
	}
	// Many addresses at once reach the ceiling of the name, each at most
	// its own limit.
	for i := range tokenTriesPerSubjectCeiling / tokenTriesPerSubject {
		for range tokenTriesPerSubject {
			try(fmt.Sprintf("192.0.2.%d", i+1), "user:acme")
		}
	}
	if got := try("203.0.113.10", "user:acme"); got != http.StatusTooManyRequests {
		t.Errorf("a new address past the name's ceiling = %d, want 429", got)
	}
	if got := try("203.0.113.10", "user:other"); got != http.StatusOK {
		t.Errorf("another name = %d, want it let through", got)
	}
}

// Keys whose windows are over count for nothing: a flood of names tried
// minutes ago must not make the limiter forget a name tried now.
func TestAGuessingCountOutlivesAFloodOfNamesTriedBefore(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 30, 0, time.UTC)
	l := rateLimiter{now: func() time.Time { return now }}
	limits := domain.RateLimits{PerMinute: tokenTriesPerSubject}
	for i := range 100_000 {
		l.take(fmt.Sprintf("subject:junk-%d", i), limits)
	}
	now = now.Add(time.Minute)
	for i := range tokenTriesPerSubject {
		if d := l.take("subject:acme", limits); !d.allowed {
			t.Fatalf("try %d at acme refused", i+1)
		}
	}
	if d := l.take("subject:acme", limits); d.allowed {
		t.Errorf("try %d at acme within the minute was let through", tokenTriesPerSubject+1)
	}
}

// Folds whose minute is over with nothing folded into them count for
// nothing: a flood of other failures earlier must not lose how many
// failures of one kind the next record says were left out.
func TestAFoldedCountOutlivesAFloodOfOtherFailuresBefore(t *testing.T) {
	var a authRecorder
	now := time.Now()
	var none authRecord
	for i := range 100_000 {
		a.admit(fmt.Sprintf("junk-%d", i), now.Add(-2*time.Minute), none)
	}
	a.admit("k", now, none)
	for range 50 {
		a.admit("k", now.Add(time.Second), none)
	}
	if ok, n := a.admit("k", now.Add(2*time.Minute), none); !ok || n != 50 {
		t.Errorf("next minute = %v, %d folded; want true, 50", ok, n)
	}
}

// Of two windows with as many requests left, RateLimit names the one that
// resets last: a client that waits for the reset it names must not be
// refused by the other.
func TestRateLimitNamesOfTwoWindowsWithAsManyLeftTheOneThatResetsLast(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 30, 0, time.UTC)
	l := rateLimiter{now: func() time.Time { return now }}
	limits := domain.RateLimits{PerMinute: 5, PerHour: 5}
	for i, want := range []string{`"hour";r=4;t=3570`, `"hour";r=3;t=3570`, `"hour";r=2;t=3570`, `"hour";r=1;t=3570`, `"hour";r=0;t=3570`} {
		if d := l.take("acme", limits); !d.allowed || d.remaining != want {
			t.Errorf("request %d = %+v, want allowed with RateLimit %s", i+1, d, want)
		}
	}
	now = now.Add(30 * time.Second) // the minute's reset
	if d := l.take("acme", limits); d.allowed {
		t.Errorf("after the minute's reset, the hour's used-up limit let a request through: %+v", d)
	}
}

// A 429's message gives the wait of its Retry-After, rounded up as the
// header is, and never 0 while the window runs: it said "retry after 0s"
// beside Retry-After 1, and "55s" beside 56.
func TestARefusalsMessageSaysTheWaitOfItsRetryAfter(t *testing.T) {
	for _, c := range []struct {
		name string
		left time.Duration // of the minute, when the request is refused
		want string
	}{
		{"whole seconds", 30 * time.Second, "30"},
		{"a fraction under a half", 55*time.Second + 400*time.Millisecond, "56"},
		{"a fraction over a half", 55*time.Second + 600*time.Millisecond, "56"},
		{"under a half second", 400 * time.Millisecond, "1"},
		{"under a millisecond", 100 * time.Microsecond, "1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := time.Date(2026, 11, 26, 10, 1, 0, 0, time.UTC).Add(-c.left)
			l := rateLimiter{now: func() time.Time { return now }}
			limits := domain.RateLimits{PerMinute: 1}
			l.take("acme", limits)
			w := httptest.NewRecorder()
			err := l.take("acme", limits).apply(w, "for organisation ", "acme")
			if err == nil {
				t.Fatal("the second request of a minute limited to 1 was let through")
			}
			writeError(w, httptest.NewRequest("GET", "/api/quotes", nil), slog.New(slog.DiscardHandler), err)
			var body struct{ ErrorDescription string }
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			wantMsg := "too many requests for organisation acme; retry after " + c.want + "s"
			if got := w.Header().Get("Retry-After"); got != c.want || body.ErrorDescription != wantMsg {
				t.Errorf("Retry-After %q, message %q; want %q and %q", got, body.ErrorDescription, c.want, wantMsg)
			}
			if got, want := w.Header().Get("RateLimit"), `"minute";r=0;t=`+c.want; got != want {
				t.Errorf("RateLimit %q, want %q, the reset of Retry-After", got, want)
			}
		})
	}
}
