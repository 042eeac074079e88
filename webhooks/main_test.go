package webhooks

import (
	"testing"

	"github.com/cargostream/cargostream/internal/hangwatch"
)

// TestMain ends a run that hangs before go test's timeout would, with the
// stacks of the tests still running last (see hangwatch).
func TestMain(m *testing.M) { hangwatch.Main(m) }
