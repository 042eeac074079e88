package httpapi

import (
	"fmt"
	"io"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
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

// cutReader gives its text, then fails as a connection that ended before
// the body its Content-Length announced does.
type cutReader struct{ r io.Reader }

func (c cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func TestABodyCutShortIsTheClientHangingUp(t *testing.T) {
	const partial = "--XX\r\nContent-Disposition: form-data; name=\"awbNumber\"\r\n\r\n020-81140743\r\n--XX\r\nContent-Dispo"
	tests := []struct {
		name string
		body io.Reader
		want string // the error's code
	}{
		{"an upload whose connection ended mid-body", cutReader{strings.NewReader(partial)}, codeClientClosedRequest},
		{"an upload that ended, whole, before its closing boundary", strings.NewReader(partial), string(domain.InvalidRequest)},
	}
	for _, tt := range tests {
		body := &uploadBody{ReadCloser: io.NopCloser(tt.body), deadline: movingDeadline{set: func(time.Time) error { return nil }}}
		mr := multipart.NewReader(body, "XX")
		var err error
		for err == nil {
			var part *multipart.Part
			if part, err = mr.NextPart(); err == nil {
				_, err = io.Copy(io.Discard, part)
			}
		}
		if got := errorCode(body.failure(bodyError(err))); got != tt.want {
			t.Errorf("%s: %q (%v), want %q", tt.name, got, err, tt.want)
		}
	}
	// A JSON body read whole, as every other endpoint reads it.
	if _, err := io.ReadAll(cutReader{strings.NewReader(`{"shipper":`)}); errorCode(readError(err)) != codeClientClosedRequest {
		t.Errorf("a JSON body whose connection ended mid-body: %q, want %q", errorCode(readError(err)), codeClientClosedRequest)
	}
}
