package closest

import "testing"

func TestTheWordAMistypedOneWasMeantToBe(t *testing.T) {
	known := []string{"events", "trace", "state", "shipment", "parked", "verify", "rebuild"}
	for _, tt := range []struct{ typed, want string }{
		{"evnts", "events"},
		{"event", "events"},
		{"shipments", "shipment"},
		{"verfy", "verify"},
		{"trace", "trace"},
		{"x", ""},
		{"statistics", ""},
		{"", ""},
	} {
		if got := Word(tt.typed, known); got != tt.want {
			t.Errorf("Word(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}
