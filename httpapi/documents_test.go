package httpapi

import (
	"fmt"
	"testing"
)

func TestRequestedRange(t *testing.T) {
	tests := []struct {
		header string
		want   string // start+length, "whole" when ignored, or "416"
	}{
		{"", "whole"},
		{"bytes=0-9", "0+10"},
		{"bytes=10-", "10+90"},
		{"bytes=90-200", "90+10"},
		{"bytes=-10", "90+10"},
		{"bytes=-500", "0+100"},
		{"bytes=99-99", "99+1"},
		{"bytes=100-", "416"},
		{"bytes=-0", "416"},
		{"bytes=9-5", "whole"},
		{"bytes=0-9,20-29", "whole"},
		{"items=0-9", "whole"},
		{"bytes=a-b", "whole"},
		{"bytes=-", "whole"},
		{"bytes=5", "whole"},
	}
	for _, tt := range tests {
		start, length, ok, err := requestedRange(tt.header, 100)
		got := fmt.Sprintf("%d+%d", start, length)
		switch {
		case err != nil && errorCode(err) == codeRangeNotSatisfiable:
			got = "416"
		case err != nil:
			got = err.Error()
		case !ok:
			got = "whole"
		}
		if got != tt.want {
			t.Errorf("%q = %s, want %s", tt.header, got, tt.want)
		}
	}
}
