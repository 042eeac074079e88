package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// lastFromLeader returns the last message of subject in stream, as the
// stream's leader has it, or jetstream.ErrMsgNotFound.
//
// nats.go makes the streams of key-value buckets and object stores with
// direct gets allowed, and reads them so: then any server of the stream
// answers, and on a cluster a follower that has not yet applied the last
// writes its leader acknowledged answers that there is none. A value or an
// object stored through one replica was then not found when read at once
// through another (a document's download 404, an Idempotency-Key repeated
// at once finding the first request still pending: 409); see
// TestAWriteAcknowledgedOnAClusterIsReadAtOnceThroughEveryNode. The
// streams keep direct gets, which replicas of earlier versions read by
// (turned off, their reads would find no responders until they restart);
// this one asks the leader, with the JetStream API's STREAM.MSG.GET, which
// only the leader answers, as the events' stream is read.
func (s *Store) lastFromLeader(ctx context.Context, stream, subject string) (*jetstream.RawStreamMsg, error) {
	if _, ok := ctx.Deadline(); !ok {
		// nats.go's own timeout for an API request.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
	}
	return s.msgGet(ctx, stream, subject, struct {
		LastBySubject string `json:"last_by_subj"`
	}{subject})
}

// FirstSequenceSince returns the sequence of the first event the stream
// stored at or after t (by the clock of the server that stored it), or the
// sequence after the last when none was stored since; and the stream's
// last sequence (see LastSequence), which it asks first, for a read that
// ends there to need no second request. The server finds the first by the
// messages' timestamps, searching its blocks, without reading the events
// before it: a read of what happened since a moment starts there instead
// of at the stream's first event.
func (s *Store) FirstSequenceSince(ctx context.Context, t time.Time) (first, last uint64, err error) {
	// Asked first: an event stored after the question is after t too,
	// and must not be skipped when the answer is that none was.
	if last, err = s.LastSequence(ctx); err != nil {
		return 0, 0, err
	}
	// The server reckons in nanoseconds since 1970, in an int64: a moment
	// before 1678 or after 2262 would wrap around (1600 taken for after
	// every event). No event is stored before 1970, nor after 2262.
	switch {
	case t.Before(time.Unix(0, 0)):
		t = time.Unix(0, 0)
	case t.After(time.Unix(0, math.MaxInt64)):
		return last + 1, last, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := s.msgGet(ctx, s.name, "the first event since "+t.UTC().Format(time.RFC3339Nano), struct {
		StartTime     time.Time `json:"start_time"`
		NextBySubject string    `json:"next_by_subj"`
		NoHeaders     bool      `json:"no_hdr"`
	}{t, s.everyEvent(), true})
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return last + 1, last, nil
	case err != nil:
		return 0, 0, unavailable(fmt.Errorf("eventstore: the first event since %s: %w", t.UTC().Format(time.RFC3339Nano), err))
	}
	return m.Sequence, last, nil
}

// msgGet makes the request req of the JetStream API's STREAM.MSG.GET of
// stream, which only the stream's leader answers, for what (named in
// errors).
func (s *Store) msgGet(ctx context.Context, stream, what string, req any) (*jetstream.RawStreamMsg, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	reply, err := s.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, body)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Error   *jetstream.APIError `json:"error"`
		Message *struct {
			Subject  string    `json:"subject"`
			Sequence uint64    `json:"seq"`
			Header   []byte    `json:"hdrs"`
			Data     []byte    `json:"data"`
			Time     time.Time `json:"time"`
		} `json:"message"`
	}
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return nil, fmt.Errorf("eventstore: the answer to a read of %s: %w", what, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, jetstream.ErrMsgNotFound
	case resp.Error != nil:
		return nil, resp.Error
	case resp.Message == nil:
		return nil, fmt.Errorf("eventstore: the answer to a read of %s holds no message", what)
	}
	m := &jetstream.RawStreamMsg{Subject: resp.Message.Subject, Sequence: resp.Message.Sequence, Data: resp.Message.Data, Time: resp.Message.Time}
	if len(resp.Message.Header) > 0 {
		if m.Header, err = nats.DecodeHeadersMsg(resp.Message.Header); err != nil {
			return nil, err
		}
	}
	return m, nil
}
