package eventstore

import (
	"context"
	"testing"
	"time"
)

// TestAJobHeldLongerThanTheAckWaitIsNotHandedOutAgain holds a job in a
// worker for three AckWaits, as a delivery waiting for its subscription's
// turn may: the workers keep it alive, so it is handed out once while in
// hand.
func TestAJobHeldLongerThanTheAckWaitIsNotHandedOutAgain(t *testing.T) {
	t.Parallel()
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	q, err := s.Queue(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	q.ackWait = time.Second
	handouts := make(chan int, 8)
	done := make(chan struct{})
	go q.Work(ctx, 4, func(_ context.Context, id string, _ []byte, attempt int) time.Duration {
		handouts <- attempt
		if attempt == 1 {
			time.Sleep(3 * q.ackWait) // in hand, the work under way
			close(done)
		}
		return 0
	})
	if err := q.Put(ctx, map[string][]byte{"j1": []byte("x")}); err != nil {
		t.Fatal(err)
	}
	<-done
	// A second handout would have come while the first was held (after
	// one AckWait, and again after two), before done.
	if first, again := <-handouts, len(handouts); first != 1 || again != 0 {
		t.Errorf("the job was handed out as attempt %d, then %d times more while in hand", first, again)
	}
}
