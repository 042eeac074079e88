// Package retry waits out an event store that does not answer for a
// moment, for work that must not give up at once: a read or a write made
// after something was already stored, whose failure would report the
// whole as failed.
package retry

import (
	"context"
	"errors"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cenkalti/backoff/v4"
)

// Unavailable is the longest WhileUnavailable keeps trying: long enough
// for a cluster to elect a new leader, short enough for a caller that
// waits on it.
const Unavailable = time.Minute

// WhileUnavailable calls attempt until it returns anything but
// domain.ErrStoreUnavailable (nil among them), backing off from a tenth
// of a second to five, for at most Unavailable or until ctx ends. It
// returns attempt's last error.
func WhileUnavailable(ctx context.Context, attempt func() error) error {
	return whileUnavailable(ctx, Unavailable, attempt, nil)
}

// UntilAvailable is WhileUnavailable with no limit but ctx's, telling
// notify (if not nil) of each failure and the wait before the next try:
// for a service's start, which cannot go on without the store, and waits
// for it as it waits for a cluster that is not up yet.
func UntilAvailable(ctx context.Context, attempt func() error, notify func(err error, wait time.Duration)) error {
	return whileUnavailable(ctx, 0, attempt, notify)
}

// whileUnavailable tries attempt for at most limit (0: until ctx ends).
func whileUnavailable(ctx context.Context, limit time.Duration, attempt func() error, notify func(error, time.Duration)) error {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 100 * time.Millisecond
	b.MaxInterval = 5 * time.Second
	b.MaxElapsedTime = limit
	return backoff.RetryNotify(func() error {
		err := attempt()
		if err != nil && !errors.Is(err, domain.ErrStoreUnavailable) {
			return backoff.Permanent(err) // no wait cures it
		}
		return err
	}, backoff.WithContext(b, ctx), notify)
}
