package eventstore

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMain ends a run that hangs a little before go test's -timeout
// would, printing the stacks of the tests still running last: go test's
// own timeout prints their names first, then every goroutine (thousands,
// the embedded servers'), and a CI log that keeps its tail loses them.
func TestMain(m *testing.M) {
	flag.Parse()
	if timeout := flag.Lookup("test.timeout").Value.(flag.Getter).Get().(time.Duration); timeout > time.Minute {
		time.AfterFunc(timeout-30*time.Second, func() {
			reportHung(os.Stderr, timeout-30*time.Second)
			os.Exit(1)
		})
	}
	os.Exit(m.Run())
}

// reportHung writes every goroutine's stack, then those of the tests
// (goroutines run by testing.tRunner) again, then a line saying so.
func reportHung(w *os.File, after time.Duration) {
	buf := make([]byte, 64<<20)
	buf = buf[:runtime.Stack(buf, true)]
	w.Write(buf)
	fmt.Fprintf(w, "\n\nthe tests still running after %s, as their goroutines stand:\n\n", after)
	for stack := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(stack, []byte("testing.tRunner")) {
			fmt.Fprintf(w, "%s\n\n", stack)
		}
	}
	fmt.Fprintf(w, "FAIL: a test hung (see the stacks above)\n")
}
