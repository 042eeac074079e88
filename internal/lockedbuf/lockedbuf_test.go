package lockedbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestWritesFromManyGoroutinesAreAllRead(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { fmt.Fprintf(&b, "line %d\n", i) })
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 8 {
		t.Errorf("%d lines read, want 8:\n%s", n, b.String())
	}
}
