//go:build unix

package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readerGone tells whether w is a pipe whose reader has gone (trace | head
// once head has its lines): the kernel reports it on the write end, without
// a write, which trace, printing a line now and then, may not make until
// the end of a long read.
func readerGone(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}
