package projections

import (
	"bytes"
	"encoding"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ModelDifference is a field of a live read model that differs from the
// same field of a fresh replay at the same sequence.
type ModelDifference struct {
	Model   string   // the read model's type, such as Quotes
	Field   string   // its field, such as byID
	Entries int      // how many of the field's entries (map keys, slice elements) differ
	Keys    []string // a few of them, sorted: quoted strings, or numbers
	Detail  string   // how one of them differs: "[key]" and what
}

// A ModelDifference names maxKeys differing entries: the first in order
// of the first keysKept found (a model wholly different holds a million).
const (
	maxKeys  = 5
	keysKept = 1000
)

// compareModels compares each live model with the fresh one of its kind,
// field by field, on a core each. They are compared as a snapshot would
// keep them (see snapcodec.go): every exported field all the way down, a
// map by its keys whatever their order, nil apart from empty, a time by
// its binary form (instant and zone offset, not the *Location), a float
// by its bits.
func compareModels(live, fresh []snapshotter) []ModelDifference {
	found := make([][]ModelDifference, len(live))
	var wg sync.WaitGroup
	for i := range live {
		wg.Go(func() { found[i] = compareModel(live[i], fresh[i]) })
	}
	wg.Wait()
	return slices.Concat(found...)
}

func compareModel(live, fresh snapshotter) []ModelDifference {
	live.lock().RLock()
	defer live.lock().RUnlock()
	var out []ModelDifference
	names := fieldNames(live)
	freshFields := fresh.fields()
	for i, f := range live.fields() {
		a, b := reflect.ValueOf(f).Elem(), reflect.ValueOf(freshFields[i]).Elem()
		if d, ok := compareField(a, b); ok {
			d.Model, d.Field = reflect.TypeOf(live).Elem().Name(), names[i]
			out = append(out, d)
		}
	}
	return out
}

// compareField compares a field, a map or a slice, entry by entry.
func compareField(a, b reflect.Value) (ModelDifference, bool) {
	var d ModelDifference
	differs := func(key, detail string) {
		if d.Entries == 0 {
			d.Detail = "[" + key + "]" + detail
		}
		d.Entries++
		if len(d.Keys) < keysKept {
			d.Keys = append(d.Keys, key)
		}
	}
	if a.IsNil() != b.IsNil() {
		return ModelDifference{Detail: nilness(a)}, true
	}
	if a.Kind() == reflect.Map {
		for it := a.MapRange(); it.Next(); {
			key := show(it.Key())
			if other := b.MapIndex(it.Key()); !other.IsValid() {
				differs(key, ": not in a fresh replay")
			} else if detail := difference(it.Value(), other); detail != "" {
				differs(key, detail)
			}
		}
		for it := b.MapRange(); it.Next(); {
			if !a.MapIndex(it.Key()).IsValid() {
				differs(show(it.Key()), ": only in a fresh replay")
			}
		}
	} else {
		for i := range max(a.Len(), b.Len()) {
			key := strconv.Itoa(i)
			switch {
			case i >= b.Len():
				differs(key, ": not in a fresh replay")
			case i >= a.Len():
				differs(key, ": only in a fresh replay")
			default:
				if detail := difference(a.Index(i), b.Index(i)); detail != "" {
					differs(key, detail)
				}
			}
		}
	}
	if d.Entries == 0 {
		return d, false
	}
	slices.Sort(d.Keys)
	d.Keys = d.Keys[:min(len(d.Keys), maxKeys)]
	return d, true
}

// difference describes how a differs from b, its path first ("" when they
// are equal).
func difference(a, b reflect.Value) string {
	t := a.Type()
	if t.Implements(binaryMarshaler) {
		ab, aerr := a.Interface().(encoding.BinaryMarshaler).MarshalBinary()
		bb, berr := b.Interface().(encoding.BinaryMarshaler).MarshalBinary()
		if aerr != nil || berr != nil || !bytes.Equal(ab, bb) {
			return fmt.Sprintf(": %v, a fresh replay has %v", a.Interface(), b.Interface())
		}
		return ""
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		if a.IsNil() != b.IsNil() {
			return ": " + nilness(a)
		}
	}
	switch t.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return ""
		}
		return difference(a.Elem(), b.Elem())
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf(": %d elements, a fresh replay has %d", a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := difference(a.Index(i), b.Index(i)); d != "" {
				return "[" + strconv.Itoa(i) + "]" + d
			}
		}
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf(": %d entries, a fresh replay has %d", a.Len(), b.Len())
		}
		for it := a.MapRange(); it.Next(); {
			key := "[" + show(it.Key()) + "]"
			other := b.MapIndex(it.Key())
			if !other.IsValid() {
				return key + ": not in a fresh replay"
			}
			if d := difference(it.Value(), other); d != "" {
				return key + d
			}
		}
	case reflect.Struct:
		for i := range t.NumField() {
			if d := difference(a.Field(i), b.Field(i)); d != "" {
				return "." + t.Field(i).Name + d
			}
		}
	case reflect.Float32, reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Sprintf(": %v, a fresh replay has %v", a.Float(), b.Float())
		}
	default:
		if !a.Equal(b) {
			return fmt.Sprintf(": %s, a fresh replay has %s", show(a), show(b))
		}
	}
	return ""
}

// nilness says which of a and b is nil, for a and b of which one is: a's
// nilness tells both.
func nilness(a reflect.Value) string {
	if a.IsNil() {
		return "nil, a fresh replay's is not"
	}
	return "not nil, a fresh replay's is"
}

// show writes a value for people: strings quoted.
func show(v reflect.Value) string {
	if v.Kind() == reflect.String {
		return strconv.Quote(v.String())
	}
	return fmt.Sprint(v.Interface())
}

// fieldNames names the fields m keeps, in the order of its fields():
// "byID", or "lines.chunks" for a field of a field.
func fieldNames(m snapshotter) []string {
	type place struct {
		addr uintptr
		t    reflect.Type
	}
	names := map[place]string{}
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		for i := range v.NumField() {
			f, name := v.Field(i), prefix+v.Type().Field(i).Name
			names[place{f.UnsafeAddr(), f.Type()}] = name
			if f.Kind() == reflect.Struct {
				walk(f, name+".")
			}
		}
	}
	walk(reflect.ValueOf(m).Elem(), "")
	var out []string
	for _, f := range m.fields() {
		p := reflect.ValueOf(f)
		out = append(out, names[place{p.Pointer(), p.Type().Elem()}])
	}
	return out
}

// String is the difference in one line.
func (d ModelDifference) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s.%s", d.Model, d.Field)
	switch d.Entries {
	case 0:
		fmt.Fprintf(&b, ": %s", d.Detail)
	case 1:
		b.WriteString(d.Detail)
	default:
		fmt.Fprintf(&b, ": %d entries differ from a fresh replay (%s", d.Entries, strings.Join(d.Keys, ", "))
		if d.Entries > len(d.Keys) {
			b.WriteString(", …")
		}
		fmt.Fprintf(&b, "), such as %s", d.Detail)
	}
	return b.String()
}
