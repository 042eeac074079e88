package countread

import (
	"io"
	"strings"
	"testing"
)

func TestAReaderCountsWhatItHandsOn(t *testing.T) {
	r := &Reader{R: strings.NewReader("twelve bytes")}
	if _, err := io.CopyN(io.Discard, r, 5); err != nil || r.N != 5 {
		t.Errorf("after 5 bytes: N = %d, %v", r.N, err)
	}
	if _, err := io.Copy(io.Discard, r); err != nil || r.N != 12 {
		t.Errorf("after all: N = %d, %v", r.N, err)
	}
}
