package projections

import (
	"reflect"
	"testing"
	"time"
)

func TestDifferenceComparesAsASnapshotKeepsValues(t *testing.T) {
	type inner struct {
		Tags  map[string][]int
		At    time.Time
		Price *float64
	}
	bigMap := func(reverse bool) map[string][]int {
		m := map[string][]int{}
		for i := range 100 {
			k := i
			if reverse {
				k = 99 - i
			}
			m[string(rune('a'+k%26))+string(rune('a'+k/26))] = []int{k}
		}
		return m
	}
	now := time.Now()
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	price, other := 1.5, 2.5
	tests := []struct {
		name string
		a, b inner
		want string
	}{
		{"maps filled in another order are equal", inner{Tags: bigMap(false)}, inner{Tags: bigMap(true)}, ""},
		{"a monotonic clock reading, which a snapshot drops, makes no difference", inner{At: now}, inner{At: now.Round(0)}, ""},
		{"another zone offset differs", inner{At: at}, inner{At: at.In(time.FixedZone("CET", 3600))},
			".At: 2026-11-26 10:00:00 +0000 UTC, a fresh replay has 2026-11-26 11:00:00 +0100 CET"},
		{"nil differs from empty", inner{Tags: map[string][]int{"x": nil}}, inner{Tags: map[string][]int{"x": {}}},
			`.Tags["x"]: nil, a fresh replay's is not`},
		{"a value in a map differs", inner{Tags: map[string][]int{"x": {1, 2}}}, inner{Tags: map[string][]int{"x": {1, 3}}},
			`.Tags["x"][1]: 2, a fresh replay has 3`},
		{"pointed-to values are compared", inner{Price: &price}, inner{Price: &other}, ".Price: 1.5, a fresh replay has 2.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := difference(reflect.ValueOf(tt.a), reflect.ValueOf(tt.b)); got != tt.want {
				t.Errorf("difference = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFieldNamesNameEveryFieldAModelKeeps(t *testing.T) {
	for _, m := range []snapshotter{NewQuotes(), NewAudit(), NewReference()} {
		names := fieldNames(m)
		for i, n := range names {
			if n == "" {
				t.Errorf("%T: field %d has no name", m, i)
			}
		}
		if _, ok := m.(*Audit); ok && names[0] != "heads.chunks" {
			t.Errorf("the audit log's first field is named %q, want heads.chunks", names[0])
		}
	}
}
