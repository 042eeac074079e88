// Package storetest opens event stores for the tests of the packages
// above the event store, each on an embedded JetStream server of its own.
package storetest

import (
	"context"
	"testing"

	"github.com/cargostream/cargostream/eventstore"
)

// Open opens an event store on an embedded server of the test's own, with
// its data in the test's temporary directory, closed when the test ends.
func Open(t testing.TB) *eventstore.Store {
	t.Helper()
	store, err := eventstore.Open(context.Background(), eventstore.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	return store
}
