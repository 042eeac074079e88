package projections

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// Where snapshots live: objects of an object store. A snapshot is written
// in parts of at most snapshotPart bytes, "read-models/<id>/<n>", and then
// named by the object "read-models", its manifest, which is replaced
// whole: a snapshot cut short by a crash is never named, and the one
// before it stays the newest. The parts of older snapshots are deleted
// once a new one is named.
//
// Replicas share the store. The id begins with the sequence the snapshot
// covers, so that each can tell which is newer: a replica does not write
// a snapshot when one as new is named already, does not name its own
// over a newer one, and deletes only the parts of snapshots older than
// the one named, never those of a newer one another replica is writing.
// (Two replicas that name theirs at the same moment may still leave the
// older named; a start then replays a little more.)
//
// Parts, not one object: the object store sends an object's chunks
// without waiting for each to be stored, and the server refuses a stream
// more than 128 MiB behind (too many requests); a part is stored whole
// before the next is sent.
const (
	// SnapshotManifest is the object that names the newest snapshot.
	SnapshotManifest = "read-models"
	snapshotPart     = 32 << 20
	manifestHeader   = "cargostream read models snapshot"
)

// SnapshotStore keeps snapshots (eventstore.Objects implements it).
type SnapshotStore interface {
	Put(ctx context.Context, name string, r io.Reader) (int64, error)
	Get(ctx context.Context, name string) (io.ReadCloser, int64, error)
	Delete(ctx context.Context, name string) error
	List(ctx context.Context) ([]domain.StoredFile, error)
}

// manifest names a snapshot's parts.
type manifest struct {
	id    string
	parts int
}

func (m manifest) part(n int) string { return fmt.Sprintf("%s/%s/%d", SnapshotManifest, m.id, n) }

// sequence is the sequence the snapshot covers, from its id
// "<sequence>-<nanoseconds>"; 0 for an id not of that form.
func (m manifest) sequence() uint64 { return idSequence(m.id) }

func idSequence(id string) uint64 {
	seq, _, _ := strings.Cut(id, "-")
	n, _ := strconv.ParseUint(seq, 10, 64)
	return n
}

// namedSequence is the sequence of the snapshot the manifest names: 0
// when none is named, or when the one named is unusable (this replica's
// start ignored it: it is no snapshot as new as any). It fails when the
// manifest cannot be read.
func namedSequence(ctx context.Context, store SnapshotStore, unusable string) (uint64, error) {
	m, err := readManifest(ctx, store)
	switch {
	case errors.Is(err, domain.ErrNoStoredFile):
		return 0, nil
	case err != nil:
		return 0, err
	case m.id == unusable:
		return 0, nil
	}
	return m.sequence(), nil
}

// manifestTimeout bounds a read of the manifest, a few bytes: one that
// takes longer finds the store out of reach.
const manifestTimeout = 10 * time.Second

func readManifest(ctx context.Context, store SnapshotStore) (manifest, error) {
	ctx, cancel := context.WithTimeout(ctx, manifestTimeout)
	defer cancel()
	r, _, err := store.Get(ctx, SnapshotManifest)
	if err != nil {
		return manifest{}, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, 1024))
	if err != nil {
		return manifest{}, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var m manifest
	if len(lines) == 3 && lines[0] == manifestHeader {
		m.id = lines[1]
		m.parts, err = strconv.Atoi(lines[2])
	}
	if m.id == "" || err != nil || m.parts < 1 {
		return manifest{}, fmt.Errorf("%w: a manifest that does not read %q, an id and a number of parts: %q", errCorrupt, manifestHeader, b)
	}
	return m, nil
}

// partWriter writes a snapshot as parts, each stored before the next.
type partWriter struct {
	ctx   context.Context
	store SnapshotStore
	m     manifest
	buf   bytes.Buffer
	size  int64
	// unusable is the snapshot this replica's start ignored, and
	// replaces the one it started from, loaded or ignored: once this
	// one is named, that one's parts go even at the same sequence,
	// where nothing else would delete them.
	unusable, replaces string
}

func (w *partWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		room := snapshotPart - w.buf.Len()
		take := min(room, len(p))
		w.buf.Write(p[:take])
		p = p[take:]
		if w.buf.Len() == snapshotPart {
			if err := w.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

func (w *partWriter) flush() error {
	size, err := w.store.Put(w.ctx, w.m.part(w.m.parts), &w.buf)
	w.buf.Reset()
	w.m.parts++
	w.size += size
	return err
}

// close stores the last part and names the snapshot, unless another
// replica named one as new meanwhile, and then deletes the parts of the
// snapshots older than the one named. It reports whether it named this
// one.
func (w *partWriter) close() (bool, error) {
	if err := w.flush(); err != nil {
		return false, err
	}
	// Not known which is named (the store out of reach a moment): ours
	// is not named, as it could be over a newer one. Its parts stay
	// until a stop that names one deletes them.
	before, err := namedSequence(w.ctx, w.store, w.unusable)
	if err != nil {
		return false, err
	}
	named := w.m.sequence() > before
	if named {
		text := fmt.Sprintf("%s\n%s\n%d\n", manifestHeader, w.m.id, w.m.parts)
		if _, err := w.store.Put(w.ctx, SnapshotManifest, strings.NewReader(text)); err != nil {
			return false, err
		}
	}
	// Read again: another replica may have named one since.
	newest, _ := namedSequence(w.ctx, w.store, w.unusable)
	objects, err := w.store.List(w.ctx)
	if err != nil {
		return named, err
	}
	for _, o := range objects {
		id, _, isPart := strings.Cut(strings.TrimPrefix(o.Name, SnapshotManifest+"/"), "/")
		if isPart && strings.HasPrefix(o.Name, SnapshotManifest+"/") && (idSequence(id) < newest || !named && id == w.m.id || named && id == w.replaces) {
			if err := w.store.Delete(w.ctx, o.Name); err != nil {
				return named, err
			}
		}
	}
	return named, nil
}

// partReader reads a snapshot's parts one after another.
type partReader struct {
	ctx    context.Context
	store  SnapshotStore
	m      manifest
	next   int
	cur    io.ReadCloser
	cancel context.CancelFunc // ends the reading of cur
	size   int64
}

func (r *partReader) Read(p []byte) (int, error) {
	for {
		if r.cur == nil {
			if r.next == r.m.parts {
				return 0, io.EOF
			}
			// A part is read as fast as the snapshot is decoded; a
			// stuck read must still end.
			ctx, cancel := context.WithTimeout(r.ctx, snapshotTimeout)
			cur, size, err := r.store.Get(ctx, r.m.part(r.next))
			if err != nil {
				cancel()
				return 0, fmt.Errorf("part %d of %d: %w", r.next, r.m.parts, err)
			}
			r.cur, r.cancel, r.size = cur, cancel, r.size+size
			r.next++
		}
		n, err := r.cur.Read(p)
		if err == io.EOF {
			// The object store has checked the part's digest.
			r.Close()
			r.cur, err = nil, nil
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
}

func (r *partReader) Close() error {
	if r.cur == nil {
		return nil
	}
	defer r.cancel()
	return r.cur.Close()
}

// KeepSnapshots makes Run start from the newest valid snapshot in store,
// replaying only the events after it, and leave a snapshot there when it
// stops and after every `every` events (0: only when it stops). Every
// model must be one of this package's. Call it before Run.
func (p *Projector) KeepSnapshots(store SnapshotStore, every uint64) error {
	if _, err := p.snapshotters(); err != nil {
		return err
	}
	p.snapshots, p.every = store, every
	return nil
}

func (p *Projector) snapshotters() ([]snapshotter, error) {
	out := make([]snapshotter, len(p.models))
	for i, m := range p.models {
		s, ok := m.(snapshotter)
		if !ok {
			return nil, fmt.Errorf("projections: %T cannot be kept in a snapshot", m)
		}
		out[i] = s
	}
	return out, nil
}

// snapshotTimeout bounds the writing of a snapshot.
const snapshotTimeout = 5 * time.Minute

// restore loads the newest snapshot into the models, which are empty
// yet, if it is valid for this version and stream; otherwise they stay
// empty and the whole stream is replayed.
func (p *Projector) restore(ctx context.Context) {
	if p.snapshots == nil {
		return
	}
	start := time.Now()
	m, err := readManifest(ctx, p.snapshots)
	switch {
	case errors.Is(err, domain.ErrNoStoredFile):
		p.log.Info("no snapshot of the read models: replaying the whole stream")
		return
	case err != nil:
		p.log.Warn("snapshot of the read models not read: replaying the whole stream", "err", err)
		return
	}
	r := &partReader{ctx: ctx, store: p.snapshots, m: m}
	defer r.Close()
	models, _ := p.snapshotters()
	h, install, err := readSnapshot(r, models, func(h snapshotHeader) error { return p.verify(ctx, h) })
	p.replaces = m.id
	if err != nil {
		p.unusable = m.id
		// A decoder's own words (unexpected EOF, s2: corrupt input) do
		// not tell an operator what happened to the file.
		if !errors.Is(err, errStaleSnapshot) && !errors.Is(err, domain.ErrStoreUnavailable) {
			err = fmt.Errorf("it is damaged or cut short (its stored bytes changed, or some were lost, since it was written): %w", err)
		}
		attrs := []any{"err", err, "snapshot", m.id}
		if h.Sequence > 0 { // 0: its header was not read (another format)
			attrs = append(attrs, "sequence", h.Sequence)
		}
		p.log.Warn("snapshot of the read models ignored: replaying the whole stream", attrs...)
		return
	}
	install()
	typ, id, _ := strings.Cut(h.Aggregate, "/")
	p.last = domain.Record{Sequence: h.Sequence, Aggregate: domain.Aggregate{Type: typ, ID: id}, Envelope: domain.Envelope{EventID: h.EventID}}
	p.snapshotted = h.Sequence
	p.advance(h.Sequence)
	p.log.Info("read models loaded from a snapshot", "sequence", h.Sequence, "taken", h.Taken, "bytes", r.size,
		"took", time.Since(start).Round(time.Millisecond).String())
}

// verify checks that the event a snapshot covers is this stream's event
// at that sequence: a snapshot of another stream is not this one's.
//
// A stream that ends before that event has most likely lost its last
// events (a backup cut short at its end, which leaves no gap for the
// start or cargoctl verify to find) or been restored from an older
// backup: the reason says so, as the snapshot is then the only trace of
// the loss, where it said only that the event was not this stream's.
func (p *Projector) verify(ctx context.Context, h snapshotHeader) error {
	typ, id, _ := strings.Cut(h.Aggregate, "/")
	r, err := p.stream.Get(ctx, domain.Aggregate{Type: typ, ID: id}, h.Sequence)
	if err != nil {
		if last, lastErr := p.stream.LastSequence(ctx); lastErr == nil && last < h.Sequence {
			return fmt.Errorf("%w: it covers the events up to %d, and this stream ends at %d: it lost its last events "+
				"(a backup cut short at its end), was restored from an older backup, or is another stream", errStaleSnapshot, h.Sequence, last)
		}
		return fmt.Errorf("%w: the event it covers, %d of %s, is not this stream's: %w", errStaleSnapshot, h.Sequence, h.Aggregate, err)
	}
	if r.EventID != h.EventID {
		return fmt.Errorf("%w: the event it covers, %s at %d, is not this stream's, which has %s there", errStaleSnapshot, h.EventID, h.Sequence, r.EventID)
	}
	return nil
}

// snapshot writes a snapshot of the models as they are, if they hold at
// least newer events that the newest one, this replica's or another's,
// does not. The models wait meanwhile: they must not change while they
// are written. atStop is the clean stop's, the last chance.
func (p *Projector) snapshot(ctx context.Context, newer uint64, atStop bool) {
	if p.snapshots == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, snapshotTimeout)
	defer cancel()
	// None named (deleted by an operator), or one this start ignored,
	// is no snapshot as new as these models: one is written.
	newest, err := namedSequence(ctx, p.snapshots, p.unusable)
	if err == nil {
		p.snapshotted = newest
	}
	if p.last.Sequence < p.snapshotted+max(newer, 1) {
		return
	}
	// A manifest out of reach is a store out of reach: its parts would
	// wait the whole snapshotTimeout, and a stop with them. (A corrupt
	// one is replaced.)
	if err != nil && !errors.Is(err, errCorrupt) {
		p.notWrittenBecause(err, atStop)
		return
	}
	start := time.Now()
	models, _ := p.snapshotters()
	w := &partWriter{ctx: ctx, store: p.snapshots, m: manifest{id: fmt.Sprintf("%d-%d", p.last.Sequence, start.UnixNano())},
		unusable: p.unusable, replaces: p.replaces}
	err = writeSnapshot(w, models, p.last)
	named := false
	if err == nil {
		named, err = w.close()
	}
	switch {
	case err != nil:
		p.notWrittenBecause(err, atStop)
		return
	case !named:
		p.log.Info("snapshot of the read models dropped: another replica named a newer one meanwhile", "sequence", p.last.Sequence)
	default:
		p.log.Info("snapshot of the read models written", "sequence", p.last.Sequence, "bytes", w.size, "parts", w.m.parts,
			"took", time.Since(start).Round(time.Millisecond).String())
	}
	p.snapshotted = max(p.snapshotted, p.last.Sequence)
}

// notWrittenBecause logs a snapshot not written, and has the next tried
// only as many events later as between snapshots, and at the stop. At the
// stop there is no next: the log says what the next start does instead,
// where it said the snapshot would be tried again at the stop.
func (p *Projector) notWrittenBecause(err error, atStop bool) {
	p.notWritten = p.last.Sequence
	if atStop {
		p.log.Error("snapshot of the read models not written at the stop: the next start replays the events after the newest snapshot written before",
			"sequence", p.last.Sequence, "err", err)
		return
	}
	p.log.Error("snapshot of the read models not written; tried again after as many events as between snapshots, and at the stop",
		"sequence", p.last.Sequence, "eventsBetweenSnapshots", p.every, "err", err)
}
