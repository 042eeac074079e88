package retry

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cargostream/cargostream/domain"
)

func TestWhileUnavailableTriesAgainOnlyWhileTheStoreIsUnavailable(t *testing.T) {
	refused := errors.New("refused")
	unavailable := fmt.Errorf("%w: no leader", domain.ErrStoreUnavailable)
	for _, tt := range []struct {
		name    string
		answers []error // attempt's answers, in turn; the last one repeats
		tries   int
		want    error
	}{
		{"done at once", []error{nil}, 1, nil},
		{"unavailable twice, then done", []error{unavailable, unavailable, nil}, 3, nil},
		{"another error ends it", []error{unavailable, refused}, 2, refused},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tries := 0
			err := WhileUnavailable(context.Background(), func() error {
				tries++
				return tt.answers[min(tries, len(tt.answers))-1]
			})
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) || tries != tt.tries {
				t.Errorf("%d tries, %v; want %d, %v", tries, err, tt.tries, tt.want)
			}
		})
	}
}

func TestWhileUnavailableStopsWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tries := 0
	err := WhileUnavailable(ctx, func() error {
		if tries++; tries == 2 {
			cancel()
		}
		return domain.ErrStoreUnavailable
	})
	if err == nil || tries != 2 {
		t.Errorf("%d tries, %v; want 2 tries and an error", tries, err)
	}
}
