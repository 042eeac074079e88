// Package hangwatch is for the TestMain of a package whose tests start
// servers: a run that hangs ends a little before go test's -timeout
// would, printing the stacks of the tests still running last. go test's
// own timeout prints their names first, then every goroutine (thousands,
// the embedded servers'), and a CI log that keeps its tail loses them.
package hangwatch

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"
)

// margin is how long before go test's timeout a hung run is ended.
const margin = 30 * time.Second

// Main runs the package's tests, as TestMain(m) { hangwatch.Main(m) }.
// With a -test.timeout of over a minute (go test's is 10 minutes), a run
// still going margin before it is ended with the stacks of its tests.
func Main(m *testing.M) {
	flag.Parse()
	if timeout := flag.Lookup("test.timeout").Value.(flag.Getter).Get().(time.Duration); timeout > time.Minute {
		time.AfterFunc(timeout-margin, func() {
			reportHung(os.Stderr, timeout-margin)
			os.Exit(1)
		})
	}
	os.Exit(m.Run())
}

// reportHung writes every goroutine's stack, then those of the tests
// (goroutines run by testing.tRunner) again, then a line saying so.
func reportHung(w io.Writer, after time.Duration) {
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
