// Package version says which build of Cargostream is running, for
// cargod --version, its start log and its metrics, and cargoctl version.
package version

import "runtime/debug"

// stamped is the version a release build is given:
//
//	go build -ldflags "-X github.com/cargostream/cargostream/internal/version.stamped=v1.4.0" ./cmd/...
//
// The Dockerfile sets it from its VERSION build argument.
var stamped string

// String is this build's version: the one it was stamped with; else the
// main module's as the Go toolchain records it when it builds from a
// checkout (a tag, or a pseudo-version naming the commit, with +dirty for
// changes not committed); else "devel" (go run, or a build without its
// checkout's history, as with -buildvcs=false).
func String() string {
	if stamped != "" {
		return stamped
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}
