package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

func TestAnIdempotencyKeyLeftByACrashedRequestIsTakenOverInSeconds(t *testing.T) {
	ctx := t.Context()
	bucket, err := openTestStore(t).Bucket(ctx, "idempotency", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{responses: bucket}
	for i, tt := range []struct {
		name    string
		started time.Duration // before now
		hash    string
		takes   bool
	}{
		{"a request under way keeps its key", 2 * time.Second, "h1", false},
		{"a request gone for longer than abandonedAfter loses it", abandonedAfter + time.Second, "h1", true},
		{"a repeat with another body never takes it", abandonedAfter + time.Second, "h2", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprint("key-", i)
			crashed, _ := json.Marshal(storedResponse{RequestHash: "h1", Pending: true, Nonce: "n", StartedAt: time.Now().Add(-tt.started)})
			if err := bucket.Put(ctx, key, crashed); err != nil {
				t.Fatal(err)
			}
			took, prev, err := s.takeKey(ctx, key, tt.hash)
			if err != nil || took != tt.takes || !prev.Pending {
				t.Errorf("takeKey = %v, %+v, %v; want taken %v from a pending marker", took, prev, err, tt.takes)
			}
		})
	}
}
