package loadtest

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
)

// A 429 says what to do about it: lift the rate limits, or, for the
// token endpoint, whose limits against guessing no setting lifts, wait.
func TestATooManyRequestsFailureSaysWhatToDo(t *testing.T) {
	tests := []struct {
		path   string
		status int
		hint   string // "" for none
	}{
		{"/api/quotes", 429, rateLimitHint},
		{tokenPath, 429, tokenLimitHint},
		{tokenPath, 401, ""},
		{"/api/quotes", 503, ""},
	}
	for _, tt := range tests {
		detail := statusFailure("POST", tt.path, tt.status, []byte(`{"error":"x"}`)).detail
		for _, hint := range []string{rateLimitHint, tokenLimitHint} {
			if strings.Contains(detail, hint) != (hint == tt.hint) {
				t.Errorf("%s %d: %q; want the hint %q", tt.path, tt.status, detail, tt.hint)
			}
		}
	}
}

// A connection that cannot be made is no answer, counted as such, over
// https as over http, with a port or the scheme's: a failed TLS dial
// panicked the tool when the connection was closed after it.
func TestAConnectionThatCannotBeMadeIsNoAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, base := range []string{"http://" + closed, "https://" + closed, "https://127.0.0.1"} {
		t.Run(base, func(t *testing.T) {
			u, err := url.Parse(base)
			if err != nil {
				t.Fatal(err)
			}
			c := &conn{base: u}
			for range 2 { // the second after the first's close
				var f *failure
				if err := c.send(prepare(u, "GET", "/api/quotes", "", nil), 200); !errors.As(err, &f) || f.kind != "no answer" {
					t.Fatalf("send = %v, want no answer", err)
				}
			}
		})
	}
}
