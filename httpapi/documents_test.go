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

func TestSniffContentType(t *testing.T) {
	bom := "\xEF\xBB\xBF"
	tests := []struct {
		name, head, want string
	}{
		{"PDF", "%PDF-1.7\n", "application/pdf"},
		{"TIFF", "II*\x00rest", "image/tiff"},
		{"XML", `<?xml version="1.0"?><rsm:Waybill/>`, "text/xml"},
		{"JSON", `{"awbNumber":"020-81140743"}`, "application/json"},
		{"text", "awb,pieces\n020-81140743,2\n", "text/plain"},
		{"XML behind a UTF-8 byte-order mark", bom + `<?xml version="1.0" encoding="UTF-8"?><rsm:Waybill/>`, "text/xml"},
		{"JSON behind a UTF-8 byte-order mark", bom + `[{"awbNumber":"020-81140743"}]`, "application/json"},
		{"text behind a UTF-8 byte-order mark", bom + "awb,pieces\n", "text/plain"},
		{"HTML behind a UTF-8 byte-order mark stays text", bom + "<html><script>x</script></html>", "text/plain"},
		{"a PDF behind a UTF-8 byte-order mark stays text", bom + "%PDF-1.7\n", "text/plain"},
	}
	for _, tt := range tests {
		if got := sniffContentType([]byte(tt.head)); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
