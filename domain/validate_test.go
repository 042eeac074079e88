package domain

import "testing"

// A message counts pieces as English does: one piece, two pieces.
func TestAMessageCountsPiecesAsEnglishDoes(t *testing.T) {
	for n, want := range map[int]string{0: "0 pieces", 1: "1 piece", 2: "2 pieces"} {
		if got := piecesOf(n); got != want {
			t.Errorf("piecesOf(%d) = %q, want %q", n, got, want)
		}
	}
}
