//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package eventstore

// lockDir does nothing where flock is not available: do not run two
// embedded servers on one data directory there.
func lockDir(string) (func(), error) { return func() {}, nil }

const lockSupported = false
