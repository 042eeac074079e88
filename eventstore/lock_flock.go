//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package eventstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive lock on the data directory dir, so that only
// one embedded server at a time uses its files. The operating system
// releases the lock when the process ends, however it ends.
func lockDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDataDirUnusable, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("eventstore: data directory lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrDataDirInUse, dir)
		}
		return nil, fmt.Errorf("eventstore: data directory lock: %w", err)
	}
	return func() { f.Close() }, nil
}

const lockSupported = true
