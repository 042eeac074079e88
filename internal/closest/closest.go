// Package closest finds the word a mistyped one was meant to be: a
// setting's name, a command, an event type.
package closest

// Word is the word of known fewest edits from s, if at most a quarter of
// its letters are (a typo, a plural, a word left out), else "".
func Word(s string, known []string) string {
	best, bestEdits := "", len(s)/4+1
	for _, k := range known {
		if d := edits(s, k); d < bestEdits {
			best, bestEdits = k, d
		}
	}
	return best
}

// edits is the Levenshtein distance between a and b.
func edits(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			change := prev[j-1]
			if a[i-1] != b[j-1] {
				change++
			}
			cur[j] = min(change, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
