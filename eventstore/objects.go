package eventstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/countread"
	"github.com/nats-io/nats.go/jetstream"
)

// Objects keeps files, such as uploaded documents, in a JetStream object
// store shared by all replicas. Files are too large to be events: an
// event records a file's name, size and digest, and the bytes live here,
// split into chunks, so neither a write nor a read holds a whole file in
// memory.
type Objects struct {
	s     *Store // whose connection reads the chunks and descriptions
	store jetstream.ObjectStore
	// stream holds the store's chunks and the objects that name them:
	// chunks are the messages of chunkPrefix and an object's NUID, and
	// objects those of metaPrefix and their encoded name.
	stream                  jetstream.Stream
	chunkPrefix, metaPrefix string
}

// Objects opens (creating if needed) the object store name of this
// store, kept on file with the stream's replicas like the events. An
// object's description is read from the stream's leader (see
// lastFromLeader).
func (s *Store) Objects(ctx context.Context, name string) (*Objects, error) {
	bucket := s.name + "_" + name
	var store jetstream.ObjectStore
	var stream jetstream.Stream
	err := s.provision(ctx, "object store "+name, func(ctx context.Context) (err error) {
		store, err = s.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:   bucket,
			Storage:  jetstream.FileStorage,
			Replicas: s.replicas,
		})
		if err != nil {
			return err
		}
		// The object store's own stream and subjects (nats.go's
		// objNameTmpl, objChunksPreTmpl and objMetaPreTmpl).
		stream, err = s.js.Stream(ctx, "OBJ_"+bucket)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("eventstore: object store %s: %w", name, err)
	}
	return &Objects{s: s, store: store, stream: stream, chunkPrefix: "$O." + bucket + ".C.", metaPrefix: "$O." + bucket + ".M."}, nil
}

// Put stores what r yields under name, reading r chunk by chunk until
// EOF, and returns the number of bytes stored. If reading r fails, Put
// returns that error (errors.Is finds it) and the chunks sent so far are
// dropped: nothing is stored.
func (o *Objects) Put(ctx context.Context, name string, r io.Reader) (int64, error) {
	// The object store drops the chunks of a failed put with the context
	// it was given: one that has ended drops nothing, and chunks no object
	// names stay in the bucket for good. A request's context ends as its
	// body fails (net/http cancels it when the client goes away or
	// stalls), so the store gets a context that does not end, and the end
	// of ctx fails the next read instead.
	//
	// nats.go's Put reads the object's description (a direct get) before
	// it reads r. Answered "no responders", it stored nothing, and while
	// it has read nothing of r it is tried again every quarter second for
	// up to commitTimeout, as a write is (see committer.publish): on a
	// cluster, the servers of an object store just made answer direct gets
	// a moment after the answer to its making (a put at once after Objects
	// failed so once in 300, on three nodes).
	read := &countread.Reader{R: fullReader{contextReader{ctx, r}}}
	deadline := time.Now().Add(commitTimeout)
	for {
		info, err := o.store.Put(context.WithoutCancel(ctx), jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: objectChunk}},
			read)
		if noResponders(err) && read.N == 0 && time.Now().Before(deadline) && ctx.Err() == nil {
			pause(ctx, jetstream.DefaultPubRetryWait)
			continue
		}
		if err != nil {
			return 0, o.s.refusedWrite(fmt.Errorf("eventstore: put object %s: %w", name, err))
		}
		return int64(info.Size), nil
	}
}

// Get returns a reader of the object name, which the caller must close,
// and its size; domain.ErrNoStoredFile if there is none. The bytes arrive
// as the caller reads them, for as long as the caller takes: each chunk
// must come within chunkWait, but a reader may pause between them (a
// download to a slow client). The object store's own Get gives the whole
// read the timeout of one request, 5 seconds, unless ctx has a deadline:
// a larger file to a slower client broke off. The reader fails once ctx
// ends, and if the bytes read are not those the object was stored with.
func (o *Objects) Get(ctx context.Context, name string) (io.ReadCloser, int64, error) {
	info, err := o.info(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, 0, domain.ErrNoStoredFile
	}
	if err != nil {
		return nil, 0, unavailable(fmt.Errorf("eventstore: get object %s: %w", name, err))
	}
	r := &objectReader{ctx: ctx, name: name, chunks: info.Chunks, digest: info.Digest, hash: sha256.New()}
	if info.Chunks > 0 {
		// A few chunks read ahead, not the hundreds the consumer would
		// pull by default: each is half a megabyte.
		r.msgs, err = o.s.readOrdered(ctx, o.stream, []string{o.chunkPrefix + info.NUID}, 1, jetstream.PullMaxMessages(4))
		if err != nil {
			return nil, 0, unavailable(fmt.Errorf("eventstore: get object %s: %w", name, err))
		}
	}
	return r, int64(info.Size), nil
}

// info describes the object name, as nats.go's GetInfo does, but read
// from the stream's leader (see lastFromLeader): an object is described by
// the last message of its name's subject.
func (o *Objects) info(ctx context.Context, name string) (*jetstream.ObjectInfo, error) {
	m, err := o.lastMeta(ctx, o.metaSubject(name))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, jetstream.ErrObjectNotFound
	}
	if err != nil {
		return nil, err
	}
	var info jetstream.ObjectInfo
	if err := json.Unmarshal(m.Data, &info); err != nil {
		return nil, jetstream.ErrBadObjectMeta
	}
	if info.Deleted {
		return nil, jetstream.ErrObjectNotFound
	}
	return &info, nil
}

// metaSubject is the subject of the descriptions of object name.
func (o *Objects) metaSubject(name string) string {
	return o.metaPrefix + base64.URLEncoding.EncodeToString([]byte(name))
}

// lastMeta is the last message of subject, one of metaSubject's, read
// from the stream's leader (see lastFromLeader).
func (o *Objects) lastMeta(ctx context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	return o.s.lastFromLeader(ctx, o.stream.CachedInfo().Config.Name, subject)
}

// chunkWait is how long a reader of an object waits for its next chunk:
// enough for the stream's leader to move.
const chunkWait = 15 * time.Second

// objectReader reads an object's chunks in order, and checks them
// against its digest at the end.
type objectReader struct {
	ctx    context.Context
	name   string
	msgs   *orderedRead // nil when the object has no chunks, or is closed
	chunks uint32       // still to come
	chunk  []byte       // the rest of the chunk being read
	digest string
	hash   hash.Hash
	err    error
}

func (r *objectReader) Read(p []byte) (int, error) {
	for len(r.chunk) == 0 {
		switch {
		case r.err != nil:
			return 0, r.err
		case r.chunks == 0 && jetstream.GetObjectDigestValue(r.hash) != r.digest:
			r.err = fmt.Errorf("eventstore: get object %s: %w", r.name, jetstream.ErrDigestMismatch)
		case r.chunks == 0:
			r.err = io.EOF
		case r.msgs == nil:
			r.err = fmt.Errorf("eventstore: get object %s: read after close", r.name)
		default:
			ctx, cancel := context.WithTimeout(r.ctx, chunkWait)
			msg, err := r.msgs.Next(ctx, 0)
			cancel()
			if err != nil {
				r.err = fmt.Errorf("eventstore: get object %s: %w", r.name, err)
				continue
			}
			r.chunks--
			r.chunk = msg.Data()
			r.hash.Write(r.chunk)
		}
	}
	n := copy(p, r.chunk)
	r.chunk = r.chunk[n:]
	return n, nil
}

// Close ends the read and deletes its consumer.
func (r *objectReader) Close() error {
	if r.msgs != nil {
		r.msgs.close()
		r.msgs = nil
	}
	return nil
}

// List describes every object of the store.
func (o *Objects) List(ctx context.Context) ([]domain.StoredFile, error) {
	infos, err := o.store.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("eventstore: list objects: %w", err)
	}
	out := make([]domain.StoredFile, len(infos))
	for i, info := range infos {
		out[i] = domain.StoredFile{Name: info.Name, Size: int64(info.Size), ModTime: info.ModTime}
	}
	return out, nil
}

// Delete removes the object name, and leaves nothing of it in the store;
// removing one that is not there is no error, so a cleanup can be
// repeated.
func (o *Objects) Delete(ctx context.Context, name string) error {
	if err := o.store.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("eventstore: delete object %s: %w", name, err)
	}
	return o.purgeMarker(ctx, name)
}

// purgeMarker removes the marker nats.go's Delete leaves under a deleted
// object's name. Names are not used again here (a snapshot's parts, a
// document's id), so nothing would ever replace a marker: every snapshot
// of the read models left one for good per part of the snapshot before,
// a store growing without end, and each snapshot's listing read them all.
// The marker is purged by its own sequence, so an object put under the
// name meanwhile stays.
func (o *Objects) purgeMarker(ctx context.Context, name string) error {
	subject := o.metaSubject(name)
	m, err := o.lastMeta(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("eventstore: delete object %s: %w", name, err)
	}
	var info jetstream.ObjectInfo
	if err := json.Unmarshal(m.Data, &info); err != nil || !info.Deleted {
		return nil // an object again, or no description: not ours to remove
	}
	if err := o.stream.Purge(ctx, jetstream.WithPurgeSubject(subject), jetstream.WithPurgeSequence(m.Sequence+1)); err != nil {
		return fmt.Errorf("eventstore: delete object %s: its marker: %w", name, err)
	}
	return nil
}

// DeleteUnnamed deletes the chunks that no object names and whose newest
// is older than age, and says of how many puts; and the markers deleted
// objects left. A put cut short by a crash, or by a connection lost
// mid-file, leaves the chunks it sent and no object naming them: List
// does not show them, and they would stay for good. A put under way sends
// chunks as its reader yields them, so age must be well past the longest
// a put may go without reading.
func (o *Objects) DeleteUnnamed(ctx context.Context, age time.Duration) (int, error) {
	// The objects first: the chunks of a put that ends between the two
	// look unnamed, but are young. The list must be whole, or the chunks
	// of an object left out would go: the object store's List ends
	// without an error when its watcher stops early. So every object
	// (deleted ones too: markers that earlier versions left, or whose
	// purge failed) whose name the stream held before the listing, and
	// still holds after it, must be in it.
	metas, err := o.stream.Info(ctx, jetstream.WithSubjectFilter(o.metaPrefix+">"))
	if err != nil {
		return 0, fmt.Errorf("eventstore: list object names: %w", err)
	}
	infos, err := o.store.List(ctx, jetstream.ListObjectsShowDeleted())
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		return 0, fmt.Errorf("eventstore: list objects: %w", err)
	}
	listed := make(map[string]bool, len(infos))
	named := make(map[string]bool, len(infos))
	for _, info := range infos {
		// The subject of an object's name (nats.go's encodeName).
		listed[o.metaSubject(info.Name)] = true
		if !info.Deleted {
			named[info.NUID] = true
		}
	}
	for subject := range metas.State.Subjects {
		if listed[subject] {
			continue
		}
		// Deleted since the count, by another replica's sweep: its
		// marker is purged (see purgeMarker), and nothing is left to
		// list. The listing is short only of a name still held.
		_, err := o.lastMeta(ctx, subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("eventstore: list objects: %w", err)
		}
		return 0, fmt.Errorf("eventstore: list objects: the listing is short of %s", subject)
	}
	si, err := o.stream.Info(ctx, jetstream.WithSubjectFilter(o.chunkPrefix+">"))
	if err != nil {
		return 0, fmt.Errorf("eventstore: list chunks: %w", err)
	}
	n := 0
	for subject := range si.State.Subjects {
		if named[strings.TrimPrefix(subject, o.chunkPrefix)] {
			continue
		}
		last, err := o.stream.GetLastMsgForSubject(ctx, subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // purged meanwhile, by another replica's sweep
		}
		if err != nil {
			return n, fmt.Errorf("eventstore: chunks %s: %w", subject, err)
		}
		if time.Since(last.Time) < age {
			continue
		}
		if err := o.stream.Purge(ctx, jetstream.WithPurgeSubject(subject)); err != nil {
			return n, fmt.Errorf("eventstore: delete chunks %s: %w", subject, err)
		}
		n++
	}
	// And the markers of deleted objects: those earlier versions left
	// (every snapshot of the read models left one a part of the snapshot
	// before), or whose purge failed; nothing else would ever remove them.
	for _, info := range infos {
		if info.Deleted {
			if err := o.purgeMarker(ctx, info.Name); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// objectChunk is the size of an object's chunks, each one message. The
// object store sends them without waiting for each to be stored, and
// gives up when thousands wait at once; a snapshot of the read models
// is hundreds of megabytes: in chunks of 512 KiB (half of NATS's default
// message limit), that is hundreds of messages, not thousands.
const objectChunk = 512 << 10

// fullReader fills every read as far as the reader beneath allows. The
// object store makes a chunk, a message, of each read; a request body
// arrives a few kilobytes at a time, and would otherwise become thousands
// of tiny messages, each written and acknowledged on its own.
type fullReader struct{ r io.Reader }

func (f fullReader) Read(p []byte) (int, error) {
	n, err := io.ReadFull(f.r, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// contextReader fails once its context has ended, with the context's
// error.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
