package projections

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/klauspost/compress/s2"
)

// Snapshots of the read models let a replica start without replaying the
// whole stream: it loads the newest snapshot and replays only the events
// after the one it covers. A snapshot is written when the projector stops
// and, if asked, every so many events; where it is kept is snapstore.go's
// business. It opens with snapshotMagic and snapshotFormat on lines of
// their own, then its header (a snapshotHeader, its length first), then
// sections (see frame), each a part of one field of one model, and a
// trailer: a zero and the number of sections.
//
// A snapshot is never trusted beyond what it proves: one of another
// format, of other shapes of the models' types, of other models, of
// another stream (the event it covers is not the stream's event at that
// sequence), or that does not read back whole (the object store checks
// each part's digest, and each section has a checksum) is ignored with a
// log line, and the stream is replayed.
const (
	snapshotMagic = "cargostream read models\n"
	// snapshotFormat is the version of what a snapshot holds and how.
	// Bump it when a model keeps something else from the same events (a
	// new index, a changed Evolve) or the encoding changes: the shapes
	// of the models' types (see shapeOf) catch added or changed fields,
	// not changed meanings.
	snapshotFormat = 18 // 9: tokens revoked as of when their revocation was stored; 10: the audit log leaves out how an event was stored; 11: it shows a flight's capacity reserved or released; 12: it keeps no field of an event of one of an aggregate's records (domain.OfRecord); 13: an aggregate whose events name no organisation is its maker's, and a revocation of tokens is one of its records; 14: a flight with every shipment offloaded carries no load, and the audit log shows a field emptied by an event that states it in full (domain.Restater); 15: a manifest states its dropped and found on board so; 16: a range of an AWB prefix is one of its records, and a ledger's or prefix's first range is not the aggregate's, and a shipment's timeline orders its entries to the second (those of one second as recorded); 17: a subscription held or released by a webhook quota is one of its records, and a flight keeps the aircraft it was published with; 18: a ledger is told of low stock again only once more is given, not when a reply takes numbers back or shortens their validity
)

// snapshotter is a read model that can be saved and restored: what it
// keeps, as pointers to its fields; the lock over them; and an empty
// model of its kind, to restore into before anything is replaced.
type snapshotter interface {
	ReadModel
	fields() []any
	lock() *sync.RWMutex
	empty() snapshotter
}

// restorer is a snapshotter that completes what it restored (indexes it
// does not save), before it is installed.
type restorer interface {
	restored()
}

// snapshotHeader says what a snapshot covers.
type snapshotHeader struct {
	Shape     uint64    // of the models' types: shapeOf
	Models    []string  // the models' types, in the order they follow
	Sequence  uint64    // the last event applied
	Aggregate string    // of that event, to find it
	EventID   string    // of that event: the stream's, or another's
	Taken     time.Time // when
}

// modelNames lists the types of models.
func modelNames(models []snapshotter) []string {
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = reflect.TypeOf(m).String()
	}
	return names
}

// shapeOf hashes the shapes of the types the models keep: their fields'
// names and types, all the way down. A snapshot taken by a version whose
// types differ would leave new fields empty, or lose old ones: it is not
// read.
func shapeOf(models []snapshotter) uint64 {
	var b strings.Builder
	seen := map[reflect.Type]bool{}
	for _, m := range models {
		for _, f := range m.fields() {
			describe(&b, reflect.TypeOf(f).Elem(), seen)
		}
	}
	h := fnv.New64a()
	h.Write([]byte(b.String()))
	return h.Sum64()
}

// describe writes the shape of t to b.
func describe(b *strings.Builder, t reflect.Type, seen map[reflect.Type]bool) {
	b.WriteString(t.String())
	if seen[t] || t.Implements(binaryMarshaler) {
		b.WriteByte(';')
		return
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		b.WriteByte('(')
		describe(b, t.Elem(), seen)
		b.WriteByte(')')
	case reflect.Map:
		b.WriteByte('(')
		describe(b, t.Key(), seen)
		describe(b, t.Elem(), seen)
		b.WriteByte(')')
	case reflect.Struct:
		b.WriteByte('{')
		for i := range t.NumField() {
			f := t.Field(i)
			b.WriteString(f.Name + " ")
			describe(b, f.Type, seen)
		}
		b.WriteByte('}')
	}
	b.WriteByte(';')
}

// sectionSize is about how many bytes of a field a section holds: big
// fields (the quotes, the audit log) are cut into many sections, written
// and read on every core at once.
const sectionSize = 4 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum is the CRC-32C of a section's place (model, field, part and
// count) and its bytes before compression: a changed byte anywhere is
// caught, not read into another field.
func (f frame) checksum(raw []byte) uint32 {
	place := fmt.Appendf(nil, "%d/%d/%d/%d/%d:", f.model, f.field, f.part, f.count, f.total)
	return crc32.Update(crc32.Checksum(place, castagnoli), castagnoli, raw)
}

// frame is one section of a snapshot: a part of one field of one model.
// It is written as varints (the model's number+1, the field's, the
// part's, count+1, total, sum, the length of data) and data: the part's
// elements (see snapcodec.go), compressed with S2.
type frame struct {
	model, field, part int
	count              int    // elements in the part, -1 for a nil field
	total              int    // elements in the field
	sum                uint32 // see checksum
	data               []byte
}

// writeSnapshot writes the models, as of the event last, to w. The
// models must not change meanwhile: the projector, their only writer,
// calls it between events. Fields are cut into sections, each encoded
// and compressed on a core of its own.
func writeSnapshot(w io.Writer, models []snapshotter, last domain.Record) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "%s%d\n", snapshotMagic, snapshotFormat)
	h := snapshotHeader{Shape: shapeOf(models), Models: modelNames(models), Sequence: last.Sequence,
		Aggregate: last.Aggregate.String(), EventID: last.EventID, Taken: time.Now().UTC()}
	hc, err := codecFor(reflect.TypeFor[snapshotHeader]())
	if err != nil {
		return err
	}
	hw := &sectionWriter{syms: map[string]uint64{}}
	hc.encode(hw, reflect.ValueOf(h))
	writeUvarint(bw, uint64(len(hw.buf)))
	bw.Write(hw.buf)

	type job struct{ model, field int }
	jobs := make(chan job)
	frames := make(chan frame, runtime.GOMAXPROCS(0))
	errs := make(chan error, 1)
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for j := range jobs {
				if err := encodeField(models[j.model], j.model, j.field, frames); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	go func() {
		for m := range models {
			for f := range models[m].fields() {
				jobs <- job{m, f}
			}
		}
		close(jobs)
		workers.Wait()
		close(frames)
	}()
	sections := 0
	for f := range frames {
		for _, v := range []int{f.model + 1, f.field, f.part, f.count + 1, f.total, int(f.sum), len(f.data)} {
			writeUvarint(bw, uint64(v))
		}
		bw.Write(f.data)
		sections++
	}
	select {
	case err := <-errs:
		return err
	default:
	}
	writeUvarint(bw, 0)
	writeUvarint(bw, uint64(sections))
	return bw.Flush()
}

func writeUvarint(w *bufio.Writer, v uint64) {
	var b [binary.MaxVarintLen64]byte
	w.Write(b[:binary.PutUvarint(b[:], v)])
}

// encodeField sends the sections of field f of model m (number mi).
func encodeField(m snapshotter, mi, f int, out chan<- frame) error {
	m.lock().RLock()
	defer m.lock().RUnlock()
	v := reflect.ValueOf(m.fields()[f]).Elem()
	t := v.Type()
	var keyc, elemc *codec
	var err error
	if t.Kind() == reflect.Map {
		keyc, err = codecFor(t.Key())
	}
	if err == nil {
		elemc, err = codecFor(t.Elem())
	}
	if err != nil {
		return fmt.Errorf("%T: %w", m, err)
	}
	w := &sectionWriter{syms: map[string]uint64{}}
	part, count := 0, 0
	send := func() {
		fr := frame{model: mi, field: f, part: part, count: count, total: v.Len(), data: s2.Encode(nil, w.buf)}
		fr.sum = fr.checksum(w.buf)
		out <- fr
		part, count = part+1, 0
		w.reset()
	}
	if v.IsNil() {
		count = -1
		send()
		return nil
	}
	add := func() {
		if count++; len(w.buf) >= sectionSize {
			send()
		}
	}
	if t.Kind() == reflect.Map {
		for it := v.MapRange(); it.Next(); {
			keyc.encode(w, it.Key())
			elemc.encode(w, it.Value())
			add()
		}
	} else {
		for i := range v.Len() {
			elemc.encode(w, v.Index(i))
			add()
		}
	}
	if count > 0 || part == 0 {
		send()
	}
	return nil
}

// errStaleSnapshot means a snapshot that is whole but not for this
// version or stream.
var errStaleSnapshot = errors.New("projections: the snapshot is not for this version and stream")

// readSnapshot reads a snapshot from r into empty models like models,
// and returns its header and how to install what it read. verify checks
// that the event the snapshot covers is the stream's. Sections are
// decoded on every core at once. Nothing is installed unless the whole
// snapshot read back.
func readSnapshot(r io.Reader, models []snapshotter, verify func(snapshotHeader) error) (snapshotHeader, func(), error) {
	var h snapshotHeader
	br := bufio.NewReaderSize(r, 1<<20)
	first, err := br.ReadString('\n')
	if err != nil || first != snapshotMagic {
		return h, nil, fmt.Errorf("not a snapshot of read models: %q", strings.TrimSpace(first))
	}
	format, err := br.ReadString('\n')
	if err != nil {
		return h, nil, err
	}
	if want := fmt.Sprint(snapshotFormat); strings.TrimSpace(format) != want {
		return h, nil, fmt.Errorf("%w: format %s, this version reads %s", errStaleSnapshot, strings.TrimSpace(format), want)
	}
	hc, err := codecFor(reflect.TypeFor[snapshotHeader]())
	if err != nil {
		return h, nil, err
	}
	hb, err := readBlock(br, 1<<20)
	if err != nil {
		return h, nil, fmt.Errorf("header: %w", err)
	}
	hr := &sectionReader{data: string(hb)}
	hc.decode(hr, reflect.ValueOf(&h).Elem())
	switch {
	case hr.err != nil:
		return h, nil, fmt.Errorf("header: %w", hr.err)
	case h.Shape != shapeOf(models):
		return h, nil, fmt.Errorf("%w: the read models' types changed since it was taken", errStaleSnapshot)
	case !slices.Equal(h.Models, modelNames(models)):
		return h, nil, fmt.Errorf("%w: it holds the models %v, not %v", errStaleSnapshot, h.Models, modelNames(models))
	}
	if err := verify(h); err != nil {
		return h, nil, err
	}
	fresh := make([]snapshotter, len(models))
	for i, m := range models {
		fresh[i] = m.empty()
	}
	if err := readSections(br, fresh); err != nil {
		return h, nil, err
	}
	// The object store checks the digest once the last byte is read.
	if n, err := io.Copy(io.Discard, br); err != nil || n > 0 {
		return h, nil, fmt.Errorf("after the last section: %d bytes, %v", n, err)
	}
	return h, func() {
		for i, m := range models {
			install(m, fresh[i])
		}
	}, nil
}

// readBlock reads a length and that many bytes, at most max.
func readBlock(br *bufio.Reader, max uint64) ([]byte, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, fmt.Errorf("%w: a block of %d bytes", errCorrupt, n)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(br, b)
	return b, err
}

// decoded is a section read back: a part of a field, its elements in a
// slice of the field's type, or for a map its keys and its values.
type decoded struct {
	frame
	keys, value reflect.Value
	err         error
}

// readSections reads the sections into the fields of models, decoding
// them on every core while the next are read.
func readSections(br *bufio.Reader, models []snapshotter) error {
	frames, results := make(chan frame, runtime.GOMAXPROCS(0)), make(chan decoded, runtime.GOMAXPROCS(0))
	var readErr error
	sections := 0
	go func() {
		defer close(frames)
		readErr = func() error {
			for {
				mi, err := binary.ReadUvarint(br)
				if err != nil {
					return err
				}
				if mi == 0 {
					n, err := binary.ReadUvarint(br)
					if err == nil && n != uint64(sections) {
						err = fmt.Errorf("%w: %d sections, the snapshot says %d", errCorrupt, sections, n)
					}
					return err
				}
				var f frame
				var sum int
				head := []*int{&f.field, &f.part, &f.count, &f.total, &sum}
				for _, p := range head {
					v, err := binary.ReadUvarint(br)
					if err != nil {
						return err
					}
					*p = int(min(v, 1<<40))
				}
				f.model, f.count, f.sum = int(min(mi-1, 1<<20)), f.count-1, uint32(sum)
				if f.model >= len(models) || f.field >= len(models[f.model].fields()) {
					return fmt.Errorf("%w: a section of field %d of model %d", errCorrupt, f.field, f.model)
				}
				if f.data, err = readBlock(br, 1<<30); err != nil {
					return err
				}
				sections++
				frames <- f
			}
		}()
	}()
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for f := range frames {
				results <- decodeSection(f, models[f.model])
			}
		})
	}
	go func() {
		workers.Wait()
		close(results)
	}()
	parts := map[[2]int][]decoded{} // slice fields' parts, to join in order
	var err error
	for d := range results {
		if err == nil {
			err = d.err
		}
		if err != nil {
			continue
		}
		target := reflect.ValueOf(models[d.model].fields()[d.field]).Elem()
		switch {
		case d.count < 0:
			target.SetZero()
		case target.Kind() == reflect.Map:
			// Sections are decoded at once, but a map takes its
			// entries one at a time: here, made once at its full size.
			if target.IsNil() || target.Len() == 0 {
				target.Set(reflect.MakeMapWithSize(target.Type(), d.total))
			}
			for i := range d.count {
				target.SetMapIndex(d.keys.Index(i), d.value.Index(i))
			}
		default:
			key := [2]int{d.model, d.field}
			parts[key] = append(parts[key], d)
		}
	}
	if err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	for key, ps := range parts {
		slices.SortFunc(ps, func(a, b decoded) int { return a.part - b.part })
		target := reflect.ValueOf(models[key[0]].fields()[key[1]]).Elem()
		joined := reflect.MakeSlice(target.Type(), 0, 0)
		for i, p := range ps {
			if p.part != i {
				return fmt.Errorf("%w: part %d of field %d of %T is missing", errCorrupt, i, key[1], models[key[0]])
			}
			joined = reflect.AppendSlice(joined, p.value)
		}
		target.Set(joined)
	}
	return nil
}

// decodeSection decodes one section of a field of m.
func decodeSection(f frame, m snapshotter) decoded {
	d := decoded{frame: f}
	t := reflect.TypeOf(m.fields()[f.field]).Elem()
	if f.count < 0 {
		return d
	}
	raw, err := s2.Decode(nil, f.data)
	if err == nil && f.checksum(raw) != f.sum {
		err = fmt.Errorf("%w: part %d of field %d does not match its checksum", errCorrupt, f.part, f.field)
	}
	if err != nil {
		d.err = fmt.Errorf("%T: %w", m, err)
		return d
	}
	r := &sectionReader{data: string(raw)}
	if t.Kind() == reflect.Map {
		keyc, err1 := codecFor(t.Key())
		elemc, err2 := codecFor(t.Elem())
		if err := errors.Join(err1, err2); err != nil {
			d.err = err
			return d
		}
		d.keys, d.value = reflect.MakeSlice(reflect.SliceOf(t.Key()), f.count, f.count), reflect.MakeSlice(reflect.SliceOf(t.Elem()), f.count, f.count)
		for i := 0; i < f.count && r.err == nil; i++ {
			keyc.decode(r, d.keys.Index(i))
			elemc.decode(r, d.value.Index(i))
		}
	} else {
		elemc, err := codecFor(t.Elem())
		if err != nil {
			d.err = err
			return d
		}
		d.value = reflect.MakeSlice(t, f.count, f.count)
		for i := 0; i < f.count && r.err == nil; i++ {
			elemc.decode(r, d.value.Index(i))
		}
	}
	if r.err == nil && r.pos != len(r.data) {
		r.fail("%d bytes left over", len(r.data)-r.pos)
	}
	if r.err != nil {
		d.err = fmt.Errorf("%T: %w", m, r.err)
	}
	return d
}

// install moves what from holds into m, under m's lock.
func install(m, from snapshotter) {
	m.lock().Lock()
	defer m.lock().Unlock()
	src := from.fields()
	for i, f := range m.fields() {
		reflect.ValueOf(f).Elem().Set(reflect.ValueOf(src[i]).Elem())
	}
	if r, ok := m.(restorer); ok {
		r.restored()
	}
}
