package projections

import (
	"testing"

	"github.com/cargostream/cargostream/domain"
)

func TestAWaitForAChangeEndsAtAnEventOfItsAggregateOnly(t *testing.T) {
	a, b := domain.Aggregate{Type: domain.AggregateBooking, ID: "a"}, domain.Aggregate{Type: domain.AggregateBooking, ID: "b"}
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	var c changes
	first, stopFirst := c.wait(a)
	second, stopSecond := c.wait(a)
	other, stopOther := c.wait(b)
	stopSecond() // the first still waits: the slot stays
	c.applied(b)
	if !closed(other) || closed(first) {
		t.Fatalf("an event of b woke b's reader: %v, a's: %v", closed(other), closed(first))
	}
	c.applied(a)
	if !closed(first) || !closed(second) {
		t.Fatal("an event of a did not wake a's readers")
	}
	stopFirst()
	stopOther()
	stopOther() // twice is once
	again, stopAgain := c.wait(a)
	if closed(again) {
		t.Fatal("a wait after the event is woken by it")
	}
	c.appliedMany()
	if !closed(again) {
		t.Fatal("events applied in batches did not wake a's reader")
	}
	stopAgain()
	if len(c.waiting) != 0 {
		t.Errorf("%d slots left once every reader stopped", len(c.waiting))
	}
}
