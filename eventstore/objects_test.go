package eventstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// trickle yields its bytes a few at a time, as a network body arrives.
type trickle struct{ b []byte }

func (t *trickle) Read(p []byte) (int, error) {
	if len(t.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 100)], t.b)
	t.b = t.b[n:]
	return n, nil
}

// failingReader yields n bytes, then fails.
type failingReader struct{ n int }

var errBroken = errors.New("broken upload")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errBroken
	}
	k := min(len(p), f.n)
	f.n -= k
	return k, nil
}

func testObjects(t *testing.T, b backend) {
	s, reopen := b.open(t)
	ctx := context.Background()
	objs := openObjects(t, s, "test")
	// Several chunks and a partial one.
	want := make([]byte, 3<<20+12345)
	rand.Read(want)
	tests := []struct {
		name string
		data []byte
	}{
		{"big", want},
		{"empty", nil},
		{"tiny.txt", []byte("hello")},
	}
	for _, tt := range tests {
		// In pieces of 100 bytes: 30 000 reads, more than the 4000
		// publishes a JetStream client may have outstanding.
		n, err := objs.Put(ctx, tt.name, &trickle{tt.data})
		if err != nil || n != int64(len(tt.data)) {
			t.Fatalf("put %s = %d, %v; want %d", tt.name, n, err, len(tt.data))
		}
	}
	check := func(objs *Objects) {
		t.Helper()
		for _, tt := range tests {
			r, size, err := objs.Get(ctx, tt.name)
			if err != nil {
				t.Fatalf("get %s: %v", tt.name, err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || size != int64(len(tt.data)) || !bytes.Equal(got, tt.data) {
				t.Errorf("get %s = %d bytes (size %d), %v; want the %d bytes put", tt.name, len(got), size, err, len(tt.data))
			}
		}
	}
	check(objs)

	// A reader that fails, at once or after some chunks, stores nothing:
	// no object, and no chunks left in the bucket's stream.
	stored := func() uint64 {
		t.Helper()
		st, err := objs.store.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	before := stored()
	for _, n := range []int{0, 300 << 10} {
		if _, err := objs.Put(ctx, "broken", &failingReader{n: n}); !errors.Is(err, errBroken) {
			t.Errorf("put of a reader failing after %d bytes = %v, want its error", n, err)
		}
		if _, _, err := objs.Get(ctx, "broken"); !errors.Is(err, domain.ErrNoStoredFile) {
			t.Errorf("get after a failed put of %d bytes = %v, want domain.ErrNoStoredFile", n, err)
		}
		if after := stored(); after != before {
			t.Errorf("after a failed put of %d bytes the bucket holds %d bytes, before %d", n, after, before)
		}
	}

	if err := objs.Delete(ctx, "tiny.txt"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := objs.Get(ctx, "tiny.txt"); !errors.Is(err, domain.ErrNoStoredFile) {
		t.Errorf("get after delete = %v, want domain.ErrNoStoredFile", err)
	}
	for _, name := range []string{"tiny.txt", "never"} {
		if err := objs.Delete(ctx, name); err != nil {
			t.Errorf("delete of %s, which is not there = %v", name, err)
		}
	}
	tests = tests[:2]

	s.Close()
	s = reopen()
	check(openObjects(t, s, "test"))
}

// cutOffReader yields n bytes, then ends the request's context and fails,
// as a request body does when its client goes away or stalls: net/http
// cancels the request's context before the read returns the error.
type cutOffReader struct {
	n      int
	cancel context.CancelFunc
}

func (c *cutOffReader) Read(p []byte) (int, error) {
	if c.n == 0 {
		c.cancel()
		return 0, errBroken
	}
	k := min(len(p), c.n)
	c.n -= k
	return k, nil
}

// A put the server refuses for want of room (its JetStream storage limit,
// or its disk, full) says the store is full, as an append does, and the
// log says what to do, once: a document upload so refused was answered
// "the event store did not answer in time" with Retry-After: 1, and
// nothing was logged above INFO.
func TestAPutOnAServerWithNoRoomSaysTheStoreIsFull(t *testing.T) {
	srv := natstest.Start(t, &server.Options{Port: server.RANDOM_PORT, JetStreamMaxStore: 256 << 10})
	var logged lockedbuf.Buffer
	s := openForTest(t, Options{URL: srv.ClientURL(), Replicas: 1, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	objs := openObjects(t, s, "test")
	for _, name := range []string{"first", "second"} {
		file := make([]byte, 1<<20)
		rand.Read(file)
		_, err := objs.Put(context.Background(), name, bytes.NewReader(file))
		if !errors.Is(err, domain.ErrStoreFull) || !errors.Is(err, domain.ErrStoreUnavailable) {
			t.Fatalf("put %s of 1 MiB on a server with 256 KiB of room = %v, want the store full", name, err)
		}
	}
	if n := strings.Count(logged.String(), "no room for more events and refuses every write"); n != 1 {
		t.Errorf("said %d times that the server has no room:\n%s", n, logged.String())
	}
}

// A put whose chunks the server never acknowledges (a stream that lost
// its leader mid-upload: a cluster that ran out of room stalled so) says
// the store is unavailable: nats.go's "timeout waiting for ack" was
// passed on as it was, and a document upload was answered 500
// "internal error" after 10 s, on a real three-node cluster.
func TestAPutWhoseChunksAreNeverAcknowledgedSaysTheStoreIsUnavailable(t *testing.T) {
	s := openForTest(t, Options{URL: natstest.StartServer(t, 0), Replicas: 1})
	objs := openObjects(t, s, "test")
	// A stream that sends no acknowledgement stands for one whose leader
	// is gone: what is published may be stored, but no answer comes.
	cfg := objs.stream.CachedInfo().Config
	cfg.NoAck = true
	if _, err := s.js.UpdateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	_, err := objs.Put(context.Background(), "unanswered", bytes.NewReader([]byte("a file of a few bytes")))
	if !errors.Is(err, domain.ErrStoreUnavailable) || errors.Is(err, domain.ErrStoreFull) {
		t.Errorf("put on a stream that never acknowledges = %v, want the store unavailable", err)
	}
}

// An upload whose client goes away mid-file leaves none of its chunks in
// the bucket: they are named by no object, so nothing would ever find and
// delete them.
func TestAPutCutOffWithItsRequestLeavesNoChunksBehind(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	objs := openObjects(t, s, "test")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := objs.Put(ctx, "cut-off", &cutOffReader{n: 3 * objectChunk, cancel: cancel}); !errors.Is(err, errBroken) && !errors.Is(err, context.Canceled) {
		t.Fatalf("put of a request cut off = %v, want its error", err)
	}
	st, err := objs.store.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != 0 {
		t.Errorf("after a put cut off after %d bytes the bucket holds %d bytes", 3*objectChunk, st.Size())
	}
}

// A put cut short by a crash, or by a connection lost mid-file, leaves
// the chunks it sent and no object naming them: List does not show them.
// Once old, they are deleted, and so are the markers of deleted objects;
// the chunks of objects, and those of a put that may still be under way,
// stay.
func TestChunksAPutLeftUnfinishedAreDeletedOnceOld(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	objs := openObjects(t, s, "test")
	kept := bytes.Repeat([]byte("k"), 2*objectChunk+10)
	if _, err := objs.Put(ctx, "kept", bytes.NewReader(kept)); err != nil {
		t.Fatal(err)
	}
	// A deleted object: nothing of it is left, neither chunks nor a name.
	if _, err := objs.Put(ctx, "gone/é", strings.NewReader("gone")); err != nil {
		t.Fatal(err)
	}
	if err := objs.Delete(ctx, "gone/é"); err != nil {
		t.Fatal(err)
	}
	st, err := objs.store.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := st.Size()
	// A marker an earlier version left, deleting through nats.go alone:
	// the listing shows it, and is whole with it; the sweep removes it.
	if _, err := objs.Put(ctx, "left/é", strings.NewReader("left")); err != nil {
		t.Fatal(err)
	}
	if err := objs.store.Delete(ctx, "left/é"); err != nil {
		t.Fatal(err)
	}
	// What a put that crashed after two chunks leaves.
	for range 2 {
		if _, err := s.js.Publish(ctx, "$O."+st.Bucket()+".C.crashedput", bytes.Repeat([]byte("c"), objectChunk)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := objs.DeleteUnnamed(ctx, time.Hour); err != nil || n != 0 {
		t.Errorf("delete of young unnamed chunks = %d, %v; want them kept, as their put may be under way", n, err)
	}
	if n, err := objs.DeleteUnnamed(ctx, 0); err != nil || n != 1 {
		t.Errorf("delete of unnamed chunks = %d, %v; want those of the one put", n, err)
	}
	if st, err = objs.store.Status(ctx); err != nil {
		t.Fatal(err)
	}
	if st.Size() != before {
		t.Errorf("the bucket holds %d bytes, %d before the marker left and the crashed put", st.Size(), before)
	}
	if got, err := readObject(t, objs, "kept"); err != nil || !bytes.Equal(got, kept) {
		t.Errorf("the object beside them = %d bytes, %v; want its %d", len(got), err, len(kept))
	}
}

// A deleted object leaves nothing in the store's stream: neither its
// chunks nor a marker under its name. Each snapshot of the read models
// is stored as parts under names of their own, never used again, and
// deletes the parts of the one before: a marker left by each part would
// stay for good, and every listing (each snapshot lists the store) would
// read them all.
func TestADeletedObjectLeavesNothingInTheStore(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	objs := openObjects(t, s, "test")
	kept := []byte("the newest snapshot's manifest")
	if _, err := objs.Put(ctx, "read-models", bytes.NewReader(kept)); err != nil {
		t.Fatal(err)
	}
	held := func() (msgs, subjects uint64) {
		t.Helper()
		info, err := objs.stream.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs, uint64(info.State.NumSubjects)
	}
	wantMsgs, wantSubjects := held()
	const snapshots = 5
	for i := range snapshots {
		name := fmt.Sprintf("read-models/%d-1/0", i)
		if _, err := objs.Put(ctx, name, bytes.NewReader(bytes.Repeat([]byte("p"), 2*objectChunk+10))); err != nil {
			t.Fatal(err)
		}
		if err := objs.Delete(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if msgs, subjects := held(); msgs != wantMsgs || subjects != wantSubjects {
		t.Errorf("after %d objects put and deleted the store's stream holds %d messages on %d subjects; want the %d on %d of the object kept",
			snapshots, msgs, subjects, wantMsgs, wantSubjects)
	}
	// Deleted, they are gone as before; deleting again is no error.
	if _, _, err := objs.Get(ctx, "read-models/0-1/0"); !errors.Is(err, domain.ErrNoStoredFile) {
		t.Errorf("get of a deleted object = %v, want domain.ErrNoStoredFile", err)
	}
	if err := objs.Delete(ctx, "read-models/0-1/0"); err != nil {
		t.Errorf("delete of an object deleted before = %v", err)
	}
	files, err := objs.List(ctx)
	if err != nil || len(files) != 1 || files[0].Name != "read-models" {
		t.Errorf("list = %v, %v; want the object kept alone", files, err)
	}
	if got, err := readObject(t, objs, "read-models"); err != nil || !bytes.Equal(got, kept) {
		t.Errorf("the object kept = %q, %v; want %q", got, err, kept)
	}
}

// openObjects opens the object store name of s.
func openObjects(t *testing.T, s *Store, name string) *Objects {
	t.Helper()
	objs, err := s.Objects(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// readObject reads the whole of object name, which must be there.
func readObject(t *testing.T, objs *Objects, name string) ([]byte, error) {
	t.Helper()
	r, _, err := objs.Get(context.Background(), name)
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	defer r.Close()
	return io.ReadAll(r)
}

// An object deleted between DeleteUnnamed's count of the names and its
// listing (another replica's sweep deleting an orphan) leaves nothing to
// list, its marker purged: the listing is whole, not short of it.
func TestChunksAreSweptWhileAnotherDeletesAnObject(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	objs := openObjects(t, s, "test")
	for _, name := range []string{"kept", "orphan"} {
		if _, err := objs.Put(ctx, name, strings.NewReader(name)); err != nil {
			t.Fatal(err)
		}
	}
	sweep := *objs
	deleting := &afterInfo{Stream: objs.stream, then: func() {
		if err := objs.Delete(ctx, "orphan"); err != nil {
			t.Error(err)
		}
	}}
	sweep.stream = deleting
	if n, err := sweep.DeleteUnnamed(ctx, 0); err != nil || n != 0 {
		t.Errorf("delete of unnamed chunks while an object is deleted = %d, %v; want 0, none being unnamed", n, err)
	}
	// Else the listing held the orphan, and the sweep met no delete.
	if deleting.then != nil {
		t.Error("the sweep asked no stream info: nothing was deleted between its count of the names and its listing")
	}
	if got, err := readObject(t, objs, "kept"); err != nil || string(got) != "kept" {
		t.Errorf("the object kept = %q, %v", got, err)
	}
}

// afterInfo is a stream that runs then once, after its first Info.
type afterInfo struct {
	jetstream.Stream
	then func()
}

func (a *afterInfo) Info(ctx context.Context, opts ...jetstream.StreamInfoOpt) (*jetstream.StreamInfo, error) {
	info, err := a.Stream.Info(ctx, opts...)
	if a.then != nil {
		a.then()
		a.then = nil
	}
	return info, err
}

// An object put under a name while its delete purges the marker before
// it stays: the purge ends at the marker it read.
func TestAnObjectPutWhileItsNameIsDeletedStays(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	objs := openObjects(t, s, "test")
	if _, err := objs.Put(ctx, "name", strings.NewReader("first")); err != nil {
		t.Fatal(err)
	}
	del := *objs
	del.stream = &beforePurge{Stream: objs.stream, then: func() {
		if _, err := objs.Put(ctx, "name", strings.NewReader("again")); err != nil {
			t.Error(err)
		}
	}}
	if err := del.Delete(ctx, "name"); err != nil {
		t.Fatal(err)
	}
	if got, err := readObject(t, objs, "name"); err != nil || string(got) != "again" {
		t.Errorf("the object put while its name was deleted = %q, %v; want %q", got, err, "again")
	}
}

// beforePurge is a stream that runs then once, before its first Purge.
type beforePurge struct {
	jetstream.Stream
	then func()
}

func (b *beforePurge) Purge(ctx context.Context, opts ...jetstream.StreamPurgeOpt) error {
	if b.then != nil {
		b.then()
		b.then = nil
	}
	return b.Stream.Purge(ctx, opts...)
}

// TestAPutThatFindsNoStreamListeningIsTriedAgainUntilOneDoes puts an
// object while its store's stream is deleted, and makes the stream again
// a second later: as on a cluster, moments after an object store is
// made, no server answers the direct get with which nats.go's Put begins.
// The put must wait for the stream rather than fail, and store the
// object once.
func TestAPutThatFindsNoStreamListeningIsTriedAgainUntilOneDoes(t *testing.T) {
	t.Parallel()
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	objs := openObjects(t, s, "remade")
	err := withoutStreamForASecond(t, s, objs.stream.CachedInfo().Config, func() error {
		_, err := objs.Put(ctx, "late", strings.NewReader("hello"))
		return err
	})
	if err != nil {
		t.Fatalf("putting an object while its store had no stream for a second: %v", err)
	}
	r, _, err := objs.Get(ctx, "late")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := io.ReadAll(r); err != nil || string(got) != "hello" {
		t.Errorf("the object put reads %q (%v), want %q", got, err, "hello")
	}
}
