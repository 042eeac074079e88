package eventstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// provisionAttempt bounds one try at creating a stream, bucket or
// consumer: a cluster still electing its leaders may not answer. Short,
// because of what replicas started together meet: when two clients create
// the same stream at once on a cluster, nats-server 2.15 answers neither
// (measured: both wait out any timeout), while the next try finds the
// stream made and returns at once. A slow cluster only costs more tries.
const provisionAttempt = 2 * time.Second

// provision runs create until it succeeds, fails for good, or ctx ends,
// backing off from half a second to ten and logging every failure that may
// pass. Replicas started together on a cluster that is still forming, or
// before it, wait for it instead of exiting; a mistake in the settings
// fails at once.
func (s *Store) provision(ctx context.Context, what string, create func(context.Context) error) error {
	return retryTransient(ctx, provisionAttempt, 500*time.Millisecond, 10*time.Second, create, func(err error, wait time.Duration) error {
		err = s.explained(err)
		attrs := []any{"provisioning", what, "in", wait.Round(time.Millisecond).String(), "err", err}
		if why := s.connectErr.Load(); why != nil && !s.nc.IsConnected() {
			attrs = append(attrs, "connection", *why)
		}
		s.log.Warn("eventstore: NATS not ready; trying again", attrs...)
		return err
	})
}

// retryTransient runs try, each time within tryFor, until it succeeds,
// fails for good (see transient), or ctx ends, pausing from first to at
// most most between the tries, and telling failed (if not nil) of each
// failure that may pass, and the pause before the next try; failed
// returns the failure as it is to be reported.
func retryTransient(ctx context.Context, tryFor, first, most time.Duration, try func(context.Context) error, failed func(err error, pause time.Duration) error) error {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = first
	b.MaxInterval = most
	b.MaxElapsedTime = 0 // until ctx ends
	attempt := func() error {
		tctx, cancel := context.WithTimeout(ctx, tryFor)
		defer cancel()
		err := try(tctx)
		if err != nil && (ctx.Err() != nil || !transient(err)) {
			return backoff.Permanent(err)
		}
		return err
	}
	var last error
	err := backoff.RetryNotify(attempt, backoff.WithContext(b, ctx), func(err error, pause time.Duration) {
		last = err
		if failed != nil {
			last = failed(err, pause)
		}
	})
	// Ended by ctx, the retries return its error alone: the failure that
	// kept them going is what the operator has to fix.
	if err != nil && last != nil && ctx.Err() != nil {
		return fmt.Errorf("%w (the last try: %w)", err, last)
	}
	return err
}

// explained is err with its likely cause where the server tells it: no
// responders to a JetStream request from a server that says it has no
// JetStream (started without -js) will not pass by waiting.
func (s *Store) explained(err error) error {
	if !errors.Is(err, nats.ErrNoResponders) {
		return err
	}
	if js, _ := s.nc.ConnectedServerJetStream(); js || !s.nc.IsConnected() {
		return err
	}
	return fmt.Errorf("%w: the NATS server at %s has no JetStream; start it with JetStream on (-js, or a jetstream block in its configuration)",
		err, s.nc.ConnectedUrlRedacted())
}

// transient reports whether an error may pass by itself: no server
// answered yet, the connection is being made again (a committer's
// refuses to publish meanwhile: see newCommitter), or the JetStream
// cluster has no leader, quorum or peers for the replicas yet. Anything else (a setting the server refuses, say)
// is for an operator to fix.
func transient(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return slices.Contains(clusterNotReady, apiErr.ErrorCode)
	}
	// An asynchronous publish not acknowledged in time (an object's
	// chunks) is as a publish that timed out.
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, jetstream.ErrAsyncPublishTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, nats.ErrNoServers) || errors.Is(err, nats.ErrReconnectBufExceeded)
}

// clusterNotReady are the JetStream API error codes of a cluster that is
// forming, electing or recovering (nats-server's errors.json).
var clusterNotReady = []jetstream.ErrorCode{
	10004,                  // cluster incomplete results
	10005,                  // no peers for the replicas asked for
	10007,                  // cluster not assigned to this server
	10008,                  // JetStream system temporarily unavailable
	10009,                  // cluster can not handle request (no leader)
	10023,                  // insufficient resources
	10041,                  // raft error
	10075,                  // peer remap failed
	10118,                  // stream is offline
	10119,                  // consumer is offline
	10163,                  // expected last sequence per subject temporarily unavailable
	errCodeBatchIncomplete, // a leader change while an atomic batch was sent
	10194,                  // stream is offline: reason
	10195,                  // consumer is offline: reason
}
