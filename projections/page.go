package projections

// pageOf walks ids (ids or the items themselves; newest first if
// newestFirst) and returns the page-th page (from 1) of limit items that
// keep accepts, and how many it accepts in all.
func pageOf[K, T any](ids []K, newestFirst bool, get func(id K) T, keep func(T) bool, page, limit int) ([]T, int) {
	skip := (page - 1) * limit
	var out []T
	total := 0
	for n := range ids {
		i := n
		if newestFirst {
			i = len(ids) - 1 - n
		}
		v := get(ids[i])
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
