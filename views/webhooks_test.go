package views

import (
	"fmt"
	"testing"

	"github.com/cargostream/cargostream/projections"
)

// An attempt's status code is shown as the receiver answered it from 100
// on, and as no status (null) below: an older version recorded 099 and
// 000 as they came, where the delivery log's statusCode is 100–999 or
// null, and its events are replayed as they were stored.
func TestAnAttemptsStatusBelow100IsShownAsNoStatus(t *testing.T) {
	for _, tt := range []struct {
		recorded int32
		want     string
	}{
		{0, "<nil>"}, // no answer
		{99, "<nil>"},
		{1, "<nil>"},
		{100, "100"},
		{204, "204"},
		{999, "999"},
	} {
		d := ToDeliveryJSON(projections.Delivery{Attempts: []projections.Attempt{{Attempt: 1, StatusCode: tt.recorded}}})
		got := "<nil>"
		if code := d.Attempts[0].StatusCode; code != nil {
			got = fmt.Sprint(*code)
		}
		if got != tt.want {
			t.Errorf("an attempt recorded with status %d shows statusCode %s, want %s", tt.recorded, got, tt.want)
		}
	}
}
