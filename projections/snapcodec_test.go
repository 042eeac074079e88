package projections

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func TestEveryReadModelCanBeKeptInASnapshot(t *testing.T) {
	for _, model := range NewModels().All() {
		m, ok := model.(snapshotter)
		if !ok {
			t.Errorf("%T cannot be kept in a snapshot", model)
			continue
		}
		for i, f := range m.fields() {
			if k := reflect.TypeOf(f).Elem().Kind(); k != reflect.Map && k != reflect.Slice {
				t.Errorf("%T: field %d is a %s; a snapshot keeps maps and slices", m, i, k)
			}
			if _, err := codecFor(reflect.TypeOf(f).Elem()); err != nil {
				t.Errorf("%T: %v", m, err)
			}
		}
	}
}

// scratchFields are the fields of read models that a snapshot leaves out
// on purpose: locks, the working space of the audit log's Apply, and the
// indexes restored makes again: the organisations' lists of audit entries,
// the lists of flights by departure.
var scratchFields = map[string]bool{"mu": true, "Audit.members": true, "Audit.statuses": true, "Audit.byOrg": true,
	"Flights.order": true, "Flights.byRoute": true}

// A field a read model gains is lost on every start from a snapshot unless
// fields() names it: each field must hold one of those it names.
func TestASnapshotKeepsEveryFieldOfEveryReadModel(t *testing.T) {
	for _, model := range NewModels().All() {
		m, ok := model.(snapshotter)
		if !ok {
			continue // the test above says so
		}
		v := reflect.ValueOf(m).Elem()
		var kept []uintptr
		for _, f := range m.fields() {
			kept = append(kept, reflect.ValueOf(f).Pointer())
		}
		for i := range v.NumField() {
			field := v.Type().Field(i)
			if scratchFields[field.Name] || scratchFields[v.Type().Name()+"."+field.Name] {
				continue
			}
			start := v.Field(i).UnsafeAddr()
			if !slices.ContainsFunc(kept, func(p uintptr) bool { return p >= start && p < start+field.Type.Size() }) {
				t.Errorf("%s.%s is not kept in a snapshot: name it in fields(), or in scratchFields if it is working space", v.Type().Name(), field.Name)
			}
		}
	}
}

func TestTheSnapshotEncodingReadsBackWhatItWrote(t *testing.T) {
	type inner struct {
		N    *int
		Tags []string
	}
	type sample struct {
		Name       string
		Long       string
		On         bool
		Count      int
		Small      int8
		Big        uint64
		Ratio      float64
		At, Zoned  time.Time
		Nil, Empty []string
		NilMap     map[string]int
		Map        map[string]inner
		Ptr, None  *inner
		Array      [2]int
	}
	seven := 7
	berlin := time.FixedZone("CET", 3600)
	long := string(make([]byte, symMax+1))
	want := []sample{
		{Name: "FRA", Long: long, On: true, Count: -42, Small: -8, Big: 1 << 63, Ratio: 2.5,
			At: time.Date(2026, 11, 26, 12, 0, 0, 5, time.UTC), Zoned: time.Date(2026, 11, 26, 13, 0, 0, 0, berlin),
			Empty: []string{}, Map: map[string]inner{"a": {N: &seven, Tags: []string{"FRA", "FRA"}}, "b": {}},
			Ptr: &inner{Tags: []string{}}, Array: [2]int{1, -1}},
		{Name: "FRA", Long: long},
	}
	c, err := codecFor(reflect.TypeFor[[]sample]())
	if err != nil {
		t.Fatal(err)
	}
	w := &sectionWriter{syms: map[string]uint64{}}
	c.encode(w, reflect.ValueOf(want))
	r := &sectionReader{data: string(w.buf)}
	var got []sample
	c.decode(r, reflect.ValueOf(&got).Elem())
	if r.err != nil || r.pos != len(r.data) {
		t.Fatalf("read back: %v, %d of %d bytes", r.err, r.pos, len(r.data))
	}
	// Times keep their instant and offset, as gob keeps them.
	for i := range want {
		if !got[i].At.Equal(want[i].At) || !got[i].Zoned.Equal(want[i].Zoned) || got[i].Zoned.Format(time.RFC3339) != want[i].Zoned.Format(time.RFC3339) {
			t.Errorf("%d: times %v %v, want %v %v", i, got[i].At, got[i].Zoned, want[i].At, want[i].Zoned)
		}
		got[i].At, got[i].Zoned, want[i].At, want[i].Zoned = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	// A string that repeats is written once.
	if n := len(w.syms); n != 3 { // "FRA", "a", "b"
		t.Errorf("%d strings numbered, want 3", n)
	}
	// Cut anywhere, a section reads as corrupt, never as a panic.
	for cut := range len(w.buf) {
		r := &sectionReader{data: string(w.buf[:cut])}
		var got []sample
		c.decode(r, reflect.ValueOf(&got).Elem())
		if r.err == nil && r.pos == cut && cut > 0 {
			t.Errorf("cut at %d of %d: read as whole", cut, len(w.buf))
		}
	}
}

// A string that repeats in a section, up to an id's length, is read back
// as one string all its holders share.
func TestARepeatedStringIsReadBackOnce(t *testing.T) {
	tests := []struct {
		name   string
		value  string
		shared bool
	}{
		{"a code", "FRA", true},
		{"an actor", "client:forwarder-01", true},
		{"an id", "3f2b8c1e-5d7a-4b1c-9e0f-2a6b8c4d1e3f", true},
		{"text", strings.Repeat("x", symMax+1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := codecFor(reflect.TypeFor[[]string]())
			if err != nil {
				t.Fatal(err)
			}
			w := &sectionWriter{syms: map[string]uint64{}}
			c.encode(w, reflect.ValueOf([]string{tt.value, strings.Clone(tt.value)}))
			r := &sectionReader{data: string(w.buf)}
			var got []string
			c.decode(r, reflect.ValueOf(&got).Elem())
			if r.err != nil || len(got) != 2 || got[0] != tt.value || got[1] != tt.value {
				t.Fatalf("read back %q: %v", got, r.err)
			}
			if shared := unsafe.StringData(got[0]) == unsafe.StringData(got[1]); shared != tt.shared {
				t.Errorf("one string for both %t, want %t", shared, tt.shared)
			}
		})
	}
}

func TestATypeASnapshotWouldNotHoldWholeIsRefused(t *testing.T) {
	type hidden struct{ secret string }
	type withFunc struct{ F func() }
	for _, typ := range []reflect.Type{reflect.TypeFor[hidden](), reflect.TypeFor[withFunc](), reflect.TypeFor[map[string]any]()} {
		if _, err := codecFor(typ); err == nil {
			t.Errorf("%s: no error", typ)
		}
	}
}
