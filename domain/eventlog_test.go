package domain

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
)

// A failure of the event store that a wait cures (every write of an
// election) is logged as a warning, as ErrStoreFull and ErrReadBehind,
// which are such failures too; any other failure is an error.
func TestAFailureTheStoreRecoversFromIsAWarning(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want slog.Level
	}{
		{fmt.Errorf("eventstore: put k: %w", ErrStoreUnavailable), slog.LevelWarn},
		{fmt.Errorf("eventstore: append: %w", ErrStoreFull), slog.LevelWarn},
		{errors.New("eventstore: put k: permissions violation"), slog.LevelError},
	} {
		if got := FailureLevel(tt.err); got != tt.want {
			t.Errorf("%v: %v, want %v", tt.err, got, tt.want)
		}
	}
}
