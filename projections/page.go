package projections

import "slices"

// pageOf walks ids (ids or the items themselves; newest first if
// newestFirst) and returns the page-th page (from 1) of limit items that
// keep accepts, and how many it accepts in all.
func pageOf[K, T any](ids []K, newestFirst bool, get func(id K) T, keep func(T) bool, page, limit int) ([]T, int) {
	return pageOfN(len(ids), newestFirst, func(i int) T { return get(ids[i]) }, keep, page, limit)
}

// pageOfN is pageOf over n items, the i-th of which (oldest first) at
// gives; a nil keep keeps all, and walks only the page.
func pageOfN[T any](n int, newestFirst bool, at func(i int) T, keep func(T) bool, page, limit int) ([]T, int) {
	// The k-th item walked, in the order asked for.
	walked := func(k int) T {
		if newestFirst {
			return at(n - 1 - k)
		}
		return at(k)
	}
	skip := (page - 1) * limit
	var out []T
	if keep == nil {
		for k := skip; k < min(n, skip+limit); k++ {
			out = append(out, walked(k))
		}
		return out, n
	}
	total := 0
	for k := range n {
		v := walked(k)
		if !keep(v) {
			continue
		}
		if total >= skip && len(out) < limit {
			out = append(out, v)
		}
		total++
	}
	return out, total
}

// chunkSize is how many items one chunk of a log holds.
const chunkSize = 4096

// appendLog is an append-only list kept in chunks: appending never copies the
// items already there, as a growing slice does, which for a list of a
// million (the audit log's) costs more than the appends themselves.
type appendLog[T any] struct {
	chunks [][]T
	n      int
}

func (l *appendLog[T]) add(v T) {
	if l.n%chunkSize == 0 {
		l.chunks = append(l.chunks, make([]T, 0, chunkSize))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, v)
	l.n++
}

// at is the i-th item, oldest first.
func (l *appendLog[T]) at(i int) T { return *l.ref(i) }

// ref is the i-th item in place, which a caller reads without copying it.
func (l *appendLog[T]) ref(i int) *T { return &l.chunks[i/chunkSize][i%chunkSize] }

// frozen is l as it is now, to read without the lock l's owner adds
// under: a copy of its list of chunks, which an add may grow in place, of
// items an add never moves or changes.
func (l *appendLog[T]) frozen() appendLog[T] {
	return appendLog[T]{chunks: slices.Clone(l.chunks), n: l.n}
}

// counted counts the items again, after the chunks were restored.
func (l *appendLog[T]) counted() {
	l.n = 0
	if c := l.chunks; len(c) > 0 {
		l.n = (len(c)-1)*chunkSize + len(c[len(c)-1])
	}
}

// inserted is a copy of list with v at i, for the lists read models keep
// and hand out, which are never written to again. The copy has room for
// no more (slices.Insert would leave room to grow, up to as much again,
// in every list a model keeps).
func inserted[T any](list []T, i int, v T) []T {
	return append(append(append(make([]T, 0, len(list)+1), list[:i]...), v), list[i:]...)
}
