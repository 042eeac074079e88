package domain

import "testing"

// A message counts things as English does: one piece, two pieces.
func TestAMessageCountsThingsAsEnglishDoes(t *testing.T) {
	for n, want := range map[int]string{0: "0 pieces", 1: "1 piece", 2: "2 pieces"} {
		if got := countOf(n, "piece"); got != want {
			t.Errorf("countOf(%d, \"piece\") = %q, want %q", n, got, want)
		}
	}
}
