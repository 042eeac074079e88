package httpapi

import (
	"testing"

	"github.com/cargostream/cargostream/domain"
)

func TestUnmarshalRefusesKeysInAnotherCaseAndTwice(t *testing.T) {
	tests := []struct {
		body string
		want string // first field and code, or "" when accepted
	}{
		{`{"awbNumber":"020-00000011","reason":"space"}`, ""},
		{`{"awbNumber":"020-1","AWBNUMBER":"020-00000011"}`, "AWBNUMBER INVALID_FORMAT"},
		{`{"awbNumber":"020-1","awbNumber":"020-00000011"}`, "awbNumber DUPLICATE"},
		{`{"awbNumber":"020-00000011","somethingElse":{"awbNumber":1}}`, ""},
	}
	for _, tt := range tests {
		var req offloadRequest
		err := unmarshal([]byte(tt.body), &req)
		got := ""
		if e, ok := err.(*domain.Error); ok && len(e.Fields) > 0 {
			got = e.Fields[0].Field + " " + e.Fields[0].Code
		} else if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.body, got, tt.want)
		}
	}
}
