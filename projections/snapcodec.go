package projections

import (
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
)

// The encoding of a snapshot's sections: what gob does, for the types
// read models keep, with two differences that matter at a million events.
// Short strings, which repeat (codes, statuses, dates), are written once a
// section and then by number, and read back as one string each, shared by
// every place that holds it; and every string of a section is a slice
// of the section's bytes, read into memory once, rather than a copy of
// its own. Nil and empty slices and maps stay apart, as JSON tells them
// apart.
//
// Numbers are varints (floats by their bits), a string is a varint (0: a
// new repeated string, its length and bytes follow; 1: a string longer
// than symMax, written in full, not numbered; n+2: repeated string n), a
// slice or map its length+1 (0: nil) and its elements, a pointer 0 (nil)
// or 1 and its element, a struct its exported fields in order, and a type
// with a binary form of its own (time.Time) that form.

// symMax is the longest string numbered: codes, statuses, dates,
// organisations, actors and ids (a UUID is 36), which repeat within a
// section (a model keeps an id as a key and in its lists). Read back, each is then one
// string its holders share, not a copy each: read models loaded from a
// snapshot held 1.30 kB an event of BenchmarkReplay's 100k with 16 here,
// 1.19 with 40, and the snapshot took no longer to write, within the
// noise of two runs each. Longer strings (text, JSON) rarely repeat.
const symMax = 40

type encodeFunc func(w *sectionWriter, v reflect.Value)
type decodeFunc func(r *sectionReader, v reflect.Value)

// sectionWriter appends to one section.
type sectionWriter struct {
	buf  []byte
	syms map[string]uint64
}

// reset empties w for the next section, which numbers its strings anew.
func (w *sectionWriter) reset() {
	w.buf = w.buf[:0]
	clear(w.syms)
}

func (w *sectionWriter) uint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }
func (w *sectionWriter) int(v int64)   { w.buf = binary.AppendVarint(w.buf, v) }

func (w *sectionWriter) str(s string) {
	if len(s) <= symMax {
		if n, ok := w.syms[s]; ok {
			w.uint(n + 2)
			return
		}
		w.syms[s] = uint64(len(w.syms))
		w.uint(0)
	} else {
		w.uint(1)
	}
	w.uint(uint64(len(s)))
	w.buf = append(w.buf, s...)
}

// sectionReader reads a section, held as one string. The first fault
// sticks: reads after it yield zero values.
type sectionReader struct {
	data string
	pos  int
	syms []string
	err  error
}

var errCorrupt = errors.New("corrupt section")

func (r *sectionReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{errCorrupt}, args...)...)
	}
}

func (r *sectionReader) uint() uint64 {
	var v uint64
	for shift := uint(0); r.pos < len(r.data) && shift < 64; shift += 7 {
		b := r.data[r.pos]
		r.pos++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
	r.fail("a number runs past the end at %d", r.pos)
	return 0
}

func (r *sectionReader) int() int64 {
	u := r.uint()
	return int64(u>>1) ^ -int64(u&1)
}

// count reads a length+1 (0: nil), which must fit in what is left: each
// element takes a byte at least, so a corrupt length cannot make room for
// billions.
func (r *sectionReader) count() (int, bool) {
	n := r.uint()
	if n == 0 {
		return 0, false
	}
	if n-1 > uint64(len(r.data)-r.pos) {
		r.fail("a length of %d with %d bytes left", n-1, len(r.data)-r.pos)
		return 0, false
	}
	return int(n - 1), true
}

func (r *sectionReader) bytes(n uint64) string {
	if n > uint64(len(r.data)-r.pos) {
		r.fail("%d bytes with %d left", n, len(r.data)-r.pos)
		return ""
	}
	s := r.data[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return s
}

func (r *sectionReader) str() string {
	switch k := r.uint(); {
	case r.err != nil:
		return ""
	case k == 0:
		s := r.bytes(r.uint())
		r.syms = append(r.syms, s)
		return s
	case k == 1:
		return r.bytes(r.uint())
	case k-2 < uint64(len(r.syms)):
		return r.syms[k-2]
	default:
		r.fail("string %d of %d", k-2, len(r.syms))
		return ""
	}
}

// codecs holds the codec made for each type.
var (
	codecsMu sync.Mutex
	codecs   = map[reflect.Type]*codec{}
)

type codec struct {
	encode encodeFunc
	decode decodeFunc
}

var (
	binaryMarshaler   = reflect.TypeFor[encoding.BinaryMarshaler]()
	binaryUnmarshaler = reflect.TypeFor[encoding.BinaryUnmarshaler]()
)

// codecFor returns the codec of t, or why a snapshot cannot hold a t.
func codecFor(t reflect.Type) (*codec, error) {
	codecsMu.Lock()
	defer codecsMu.Unlock()
	return codecLocked(t)
}

func codecLocked(t reflect.Type) (*codec, error) {
	if c, ok := codecs[t]; ok {
		return c, nil
	}
	// A type that holds itself finds c here while it is being made:
	// its functions call c's once they run.
	c := &codec{}
	codecs[t] = c
	if err := c.make(t); err != nil {
		delete(codecs, t)
		return nil, err
	}
	return c, nil
}

func (c *codec) make(t reflect.Type) error {
	if t.Implements(binaryMarshaler) && reflect.PointerTo(t).Implements(binaryUnmarshaler) {
		c.encode = func(w *sectionWriter, v reflect.Value) {
			b, err := v.Interface().(encoding.BinaryMarshaler).MarshalBinary()
			if err != nil {
				panic(err) // time.Time's fails for a zone offset no time has
			}
			w.uint(uint64(len(b)))
			w.buf = append(w.buf, b...)
		}
		c.decode = func(r *sectionReader, v reflect.Value) {
			b := r.bytes(r.uint())
			if err := v.Addr().Interface().(encoding.BinaryUnmarshaler).UnmarshalBinary([]byte(b)); err != nil {
				r.fail("%s: %v", t, err)
			}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Bool:
		c.encode = func(w *sectionWriter, v reflect.Value) {
			if v.Bool() {
				w.uint(1)
			} else {
				w.uint(0)
			}
		}
		c.decode = func(r *sectionReader, v reflect.Value) { v.SetBool(r.uint() == 1) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.encode = func(w *sectionWriter, v reflect.Value) { w.int(v.Int()) }
		c.decode = func(r *sectionReader, v reflect.Value) { v.SetInt(r.int()) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.encode = func(w *sectionWriter, v reflect.Value) { w.uint(v.Uint()) }
		c.decode = func(r *sectionReader, v reflect.Value) { v.SetUint(r.uint()) }
	case reflect.Float32, reflect.Float64:
		c.encode = func(w *sectionWriter, v reflect.Value) { w.uint(math.Float64bits(v.Float())) }
		c.decode = func(r *sectionReader, v reflect.Value) { v.SetFloat(math.Float64frombits(r.uint())) }
	case reflect.String:
		c.encode = func(w *sectionWriter, v reflect.Value) { w.str(v.String()) }
		c.decode = func(r *sectionReader, v reflect.Value) { v.SetString(r.str()) }
	case reflect.Pointer:
		return c.pointer(t)
	case reflect.Slice:
		return c.slice(t)
	case reflect.Array:
		e, err := codecLocked(t.Elem())
		if err != nil {
			return err
		}
		c.encode = func(w *sectionWriter, v reflect.Value) {
			for i := range v.Len() {
				e.encode(w, v.Index(i))
			}
		}
		c.decode = func(r *sectionReader, v reflect.Value) {
			for i := range v.Len() {
				e.decode(r, v.Index(i))
			}
		}
	case reflect.Map:
		return c.mapOf(t)
	case reflect.Struct:
		return c.structOf(t)
	default:
		return fmt.Errorf("projections: a snapshot cannot hold a %s", t)
	}
	return nil
}

func (c *codec) pointer(t reflect.Type) error {
	e, err := codecLocked(t.Elem())
	if err != nil {
		return err
	}
	c.encode = func(w *sectionWriter, v reflect.Value) {
		if v.IsNil() {
			w.uint(0)
			return
		}
		w.uint(1)
		e.encode(w, v.Elem())
	}
	c.decode = func(r *sectionReader, v reflect.Value) {
		if r.uint() == 0 {
			return
		}
		p := reflect.New(t.Elem())
		e.decode(r, p.Elem())
		v.Set(p)
	}
	return nil
}

func (c *codec) slice(t reflect.Type) error {
	e, err := codecLocked(t.Elem())
	if err != nil {
		return err
	}
	c.encode = func(w *sectionWriter, v reflect.Value) {
		if v.IsNil() {
			w.uint(0)
			return
		}
		w.uint(uint64(v.Len()) + 1)
		for i := range v.Len() {
			e.encode(w, v.Index(i))
		}
	}
	c.decode = func(r *sectionReader, v reflect.Value) {
		n, ok := r.count()
		if !ok {
			return
		}
		s := reflect.MakeSlice(t, n, n)
		for i := 0; i < n && r.err == nil; i++ {
			e.decode(r, s.Index(i))
		}
		v.Set(s)
	}
	return nil
}

func (c *codec) mapOf(t reflect.Type) error {
	k, err := codecLocked(t.Key())
	if err != nil {
		return err
	}
	e, err := codecLocked(t.Elem())
	if err != nil {
		return err
	}
	c.encode = func(w *sectionWriter, v reflect.Value) {
		if v.IsNil() {
			w.uint(0)
			return
		}
		w.uint(uint64(v.Len()) + 1)
		for it := v.MapRange(); it.Next(); {
			k.encode(w, it.Key())
			e.encode(w, it.Value())
		}
	}
	c.decode = func(r *sectionReader, v reflect.Value) {
		n, ok := r.count()
		if !ok {
			return
		}
		m := reflect.MakeMapWithSize(t, n)
		decodeEntries(r, m, k, e, n)
		v.Set(m)
	}
	return nil
}

// decodeEntries reads n entries into the map m.
func decodeEntries(r *sectionReader, m reflect.Value, k, e *codec, n int) {
	t := m.Type()
	key, val := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
	zero := reflect.Zero(t.Elem())
	for i := 0; i < n && r.err == nil; i++ {
		k.decode(r, key)
		val.Set(zero)
		e.decode(r, val)
		m.SetMapIndex(key, val)
	}
}

func (c *codec) structOf(t reflect.Type) error {
	type field struct {
		index int
		codec *codec
	}
	var fields []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			return fmt.Errorf("projections: a snapshot would lose %s.%s, which is not exported", t, f.Name)
		}
		fc, err := codecLocked(f.Type)
		if err != nil {
			return err
		}
		fields = append(fields, field{i, fc})
	}
	c.encode = func(w *sectionWriter, v reflect.Value) {
		for _, f := range fields {
			f.codec.encode(w, v.Field(f.index))
		}
	}
	c.decode = func(r *sectionReader, v reflect.Value) {
		for _, f := range fields {
			f.codec.decode(r, v.Field(f.index))
		}
	}
	return nil
}
