package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

func TestIfMatchNamesOneStrongVersion(t *testing.T) {
	tests := []struct {
		header  []string // the header's lines; none: no If-Match
		version uint64   // 0: none named
		ok      bool
	}{
		{nil, 0, true},
		{[]string{"*"}, 0, true},
		{[]string{`"42"`}, 42, true},
		{[]string{` "7" `}, 7, true},
		{[]string{`W/"42"`}, 0, false},
		{[]string{`42`}, 0, false},
		{[]string{`"42", "43"`}, 0, false},
		{[]string{`""`}, 0, false},
		{[]string{`"+4"`}, 0, false},
		{[]string{`"042"`}, 0, false},
		{[]string{`"00"`}, 0, false},
		{[]string{`"-4"`}, 0, false},
		{[]string{`"abc"`}, 0, false},
		{[]string{`"99999999999999999999"`}, 0, false},
		// Sent, but naming no version: never a change unchecked.
		{[]string{""}, 0, false},
		{[]string{"  "}, 0, false},
		// On two lines, a list: not the first line's version.
		{[]string{`"42"`, `"43"`}, 0, false},
		{[]string{`"42"`, `"42"`}, 0, false},
		{[]string{"*", `"42"`}, 0, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("PATCH", "/api/flights/x", nil)
		for _, line := range tt.header {
			r.Header.Add("If-Match", line)
		}
		m, err := changeMeta(r)
		switch {
		case !tt.ok:
			if domain.ErrorCode(err) != domain.InvalidRequest {
				t.Errorf("If-Match %q: err = %v, want invalid_request", tt.header, err)
			}
		case err != nil:
			t.Errorf("If-Match %q: %v", tt.header, err)
		case tt.version == 0 && m.IfVersion != nil, tt.version != 0 && (m.IfVersion == nil || *m.IfVersion != tt.version):
			t.Errorf("If-Match %q names %v, want %d", tt.header, m.IfVersion, tt.version)
		}
	}
}

func TestIfNoneMatchOnSeveralLinesIsOneList(t *testing.T) {
	tests := []struct {
		header []string // the header's lines
		want   int      // status notModified leaves: 304, or 200 (none written)
	}{
		{[]string{`"42"`}, 304},
		{[]string{`"41"`}, 200},
		{[]string{`"41", "42"`}, 304},
		{[]string{`"41"`, `"42"`}, 304},
		{[]string{`W/"40"`, `W/"42"`}, 304},
		{[]string{`"41"`, "*"}, 304},
		{[]string{`"41"`, `"43"`}, 200},
		{[]string{"", `"42"`}, 304},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/api/quotes/q", nil)
		for _, line := range tt.header {
			r.Header.Add("If-None-Match", line)
		}
		w := httptest.NewRecorder()
		notModified(w, r, `"42"`)
		if w.Code != tt.want {
			t.Errorf("If-None-Match %q against \"42\": %d, want %d", tt.header, w.Code, tt.want)
		}
	}
}

func TestPastCutReadsAtOrSeq(t *testing.T) {
	tests := []struct {
		query string
		past  bool
		field string // of the validation error, if any
	}{
		{"", false, ""},
		{"?at=2026-01-02T03:04:05Z", true, ""},
		{"?at=2026-01-02T03:04:05.123456789%2B02:00", true, ""},
		{"?seq=12", true, ""},
		{"?at=2026-01-02", true, "at"},
		{"?at=2999-01-01T00:00:00Z", true, "at"},
		{"?at=2026-01-02T03:04:05+02:00", true, "at"},       // the + became a space
		{"?at=2026-01-02T03:04:05.1234567890Z", true, "at"}, // finer than a nanosecond
		{"?at=2026-01-02T03:04:05,123Z", true, "at"},
		{"?seq=0", true, "seq"},
		{"?seq=-1", true, "seq"},
		{"?seq=1&at=2026-01-02T03:04:05Z", true, "seq"},
	}
	for _, tt := range tests {
		cut, past, err := pastCut(httptest.NewRequest("GET", "/api/bookings/b"+tt.query, nil))
		var fields []domain.FieldError
		if e, ok := err.(*domain.Error); ok {
			fields = e.Fields
		}
		switch {
		case past != tt.past:
			t.Errorf("%s: past = %v", tt.query, past)
		case tt.field == "" && err != nil:
			t.Errorf("%s: %v", tt.query, err)
		case tt.field != "" && (len(fields) != 1 || fields[0].Field != tt.field):
			t.Errorf("%s: err = %v, want one on %s", tt.query, err, tt.field)
		case tt.field == "" && past && cut.At.IsZero() && cut.Sequence == 0:
			t.Errorf("%s: no cut", tt.query)
		}
	}
}

func TestPreferWaitIsSecondsAtMostThirty(t *testing.T) {
	tests := []struct {
		prefer []string
		want   time.Duration
	}{
		{nil, 0},
		{[]string{"respond-async"}, 0},
		{[]string{"wait=10"}, 10 * time.Second},
		{[]string{"respond-async, WAIT = 5"}, 5 * time.Second},
		{[]string{"handling=lenient", `wait="7"`}, 7 * time.Second},
		{[]string{"wait=8; foo=bar"}, 8 * time.Second},
		{[]string{"wait=0"}, 0},
		{[]string{"wait=31"}, maxPreferWait},
		{[]string{"wait=99999999999999999999999"}, maxPreferWait},
		// A preference that cannot be honoured is ignored (RFC 7240).
		{[]string{"wait="}, 0},
		{[]string{"wait=-1"}, 0},
		{[]string{"wait=+5"}, 0},
		{[]string{"wait=1.5"}, 0},
		{[]string{"wait=soon"}, 0},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/api/bookings/b1", nil)
		for _, v := range tt.prefer {
			r.Header.Add("Prefer", v)
		}
		if got := preferredWait(r); got != tt.want {
			t.Errorf("Prefer %q = %s, want %s", tt.prefer, got, tt.want)
		}
	}
}

func TestALongPollEndsWhenTheServerShutsDown(t *testing.T) {
	s := &Server{projector: projections.NewProjector(nil, slog.New(slog.DiscardHandler)), stopping: make(chan struct{})}
	r := httptest.NewRequest("GET", "/api/bookings/b1", nil)
	r.Header.Set("If-None-Match", `"7"`)
	r.Header.Set("Prefer", "wait=30")
	w := httptest.NewRecorder()
	looked := make(chan struct{}, 8)
	returned := make(chan string)
	go func() {
		_, tag, _, _ := current(s, w, r, domain.Aggregate{Type: domain.AggregateBooking, ID: "b1"}, func() (struct{}, string, bool) {
			looked <- struct{}{}
			return struct{}{}, `"7"`, true
		}, nil)
		returned <- tag
	}()
	<-looked // the booking is at the version the client holds: it waits
	s.ShuttingDown()
	s.ShuttingDown() // twice is once
	select {
	case tag := <-returned:
		if tag != `"7"` || w.Header().Get("Preference-Applied") != "wait=30" {
			t.Errorf("the long poll answered ETag %s, Preference-Applied %q", tag, w.Header().Get("Preference-Applied"))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll outlived the shutdown (it waits 30 s)")
	}
}

func TestALongPollWhoseClientHangsUpEndsWithTheRequestsError(t *testing.T) {
	s := &Server{projector: projections.NewProjector(nil, slog.New(slog.DiscardHandler)), stopping: make(chan struct{})}
	ctx, hangUp := context.WithCancel(context.Background())
	r := httptest.NewRequestWithContext(ctx, "GET", "/api/bookings/b1", nil)
	r.Header.Set("If-None-Match", `"7"`)
	r.Header.Set("Prefer", "wait=30")
	looked := make(chan struct{}, 8)
	returned := make(chan error)
	go func() {
		_, _, _, err := current(s, httptest.NewRecorder(), r, domain.Aggregate{Type: domain.AggregateBooking, ID: "b1"}, func() (struct{}, string, bool) {
			looked <- struct{}{}
			return struct{}{}, `"7"`, true
		}, nil)
		returned <- err
	}()
	<-looked // unchanged: it waits
	hangUp()
	if err := <-returned; !errors.Is(err, context.Canceled) {
		t.Errorf("the long poll of a client that hung up returned %v, want its request's context.Canceled (a 499)", err)
	}
}

func TestALongPollNotesItsWaitAsTheClientsNotTheServers(t *testing.T) {
	s := &Server{projector: projections.NewProjector(nil, slog.New(slog.DiscardHandler)), stopping: make(chan struct{})}
	st := &requestState{}
	r := httptest.NewRequest("GET", "/api/bookings/b1", nil)
	r = r.WithContext(context.WithValue(r.Context(), keyRequest, st))
	r.Header.Set("If-None-Match", `"7"`)
	r.Header.Set("Prefer", "wait=1")
	current(s, httptest.NewRecorder(), r, domain.Aggregate{Type: domain.AggregateBooking, ID: "b1"}, func() (struct{}, string, bool) {
		return struct{}{}, `"7"`, true // unchanged: it waits the whole second
	}, nil)
	if st.waited < 900*time.Millisecond || st.waited > 10*time.Second {
		t.Errorf("noted a wait of %s, want the second it waited (the request's metrics leave it out)", st.waited)
	}
}

// What moves a resource's ETag at a moment (a quote's option's flight
// closing by its departure time) ends a long poll then, with the new ETag.
func TestALongPollEndsWhenWhatItWatchesIsDue(t *testing.T) {
	// A credential to check again once the wait ends: an API key.
	identity := projections.NewIdentity()
	at := time.Now()
	identity.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateOrganization, ID: "acme"}},
		domain.OrganizationCreated{OrganizationID: "acme", Name: "Acme", Role: domain.RoleForwarder, CreatedAt: at})
	identity.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateAPIKey, ID: "k1"}},
		domain.APIKeyCreated{KeyID: "k1", OrganizationID: "acme", KeyHash: commands.HashAPIKey("a key"), CreatedAt: at})
	s := &Server{projector: projections.NewProjector(nil, slog.New(slog.DiscardHandler)), stopping: make(chan struct{}), identity: identity}
	r := httptest.NewRequest("GET", "/api/quotes/q1", nil)
	r.Header.Set("X-Api-Key", "a key")
	r.Header.Set("If-None-Match", `"7"`)
	r.Header.Set("Prefer", "wait=30")
	closes := time.Now().Add(300 * time.Millisecond)
	returned := make(chan string)
	go func() {
		_, tag, _, _ := current(s, httptest.NewRecorder(), r, domain.Aggregate{Type: domain.AggregateQuote, ID: "q1"}, func() (struct{}, string, bool) {
			if time.Now().Before(closes) {
				return struct{}{}, `"7"`, true
			}
			return struct{}{}, `"7-1"`, true
		}, func() wakers {
			return wakers{aggs: []domain.Aggregate{{Type: domain.AggregateFlight, ID: "LH400"}}, at: closes}
		})
		returned <- tag
	}()
	select {
	case tag := <-returned:
		if tag != `"7-1"` {
			t.Errorf("the long poll answered ETag %s, want \"7-1\"", tag)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll did not end at the moment it watched (it waits 30 s)")
	}
}
