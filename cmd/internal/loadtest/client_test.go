package loadtest

import (
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
