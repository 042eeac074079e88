// Package countread counts the bytes a reader hands on.
package countread

import "io"

// Reader counts the bytes read through it from R, in N.
type Reader struct {
	R io.Reader
	N int64
}

func (c *Reader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}
