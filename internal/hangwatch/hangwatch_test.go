package hangwatch

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The report names the tests running, after every goroutine's stack: its
// last part holds this test's stack alone, and the line that fails the
// run.
func TestTheReportOfAHungRunEndsWithTheStacksOfTheTestsRunning(t *testing.T) {
	var out bytes.Buffer
	reportHung(&out, 9*time.Minute)
	_, tests, ok := strings.Cut(out.String(), "the tests still running after 9m0s, as their goroutines stand:")
	if !ok {
		t.Fatalf("no part naming the tests still running in:\n%s", out.String())
	}
	if !strings.Contains(tests, "TestTheReportOfAHungRunEndsWithTheStacksOfTheTestsRunning") {
		t.Errorf("the tests' part names not this test:\n%s", tests)
	}
	if !strings.HasSuffix(tests, "FAIL: a test hung (see the stacks above)\n") {
		t.Errorf("the report does not end with the line that fails the run:\n%s", tests)
	}
}
