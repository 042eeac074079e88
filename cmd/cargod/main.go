// Command cargod is the Cargostream server.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // flight times need every airport's zone, wherever cargod runs
)

func main() {
	if err := run(stopOnSignal(), os.Args[1:], os.Environ(), os.Stdout, os.Stderr); err != nil {
		if !errors.As(err, new(loggedError)) {
			fmt.Fprintln(os.Stderr, "cargod:", err)
		}
		os.Exit(1)
	}
}

// loggedError is an error run has logged already, as a JSON line among
// the others (once the logger is made): printed again as plain text, it
// would be a line a log collector cannot parse.
type loggedError struct{ error }

func (e loggedError) Unwrap() error { return e.error }

// stopOnSignal returns a context that ends at the first SIGINT or SIGTERM:
// cargod then stops cleanly, finishing the requests in flight for up to
// CARGO_SHUTDOWN_TIMEOUT. A second signal ends the process at once, for an
// operator who will not wait (what is acknowledged is on disk already).
func stopOnSignal() context.Context {
	ctx, stop := context.WithCancel(context.Background())
	// Room for both: neither is lost, whenever it comes.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-signals
		stop()
		sig := <-signals
		// A line of its own, as JSON as the log's: the logger is run's,
		// and its held lines are lost with the process anyway.
		slog.New(slog.NewJSONHandler(os.Stderr, nil)).Warn("cargod: a second signal: stopped at once, requests in flight cut off", "signal", sig.String())
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
	return ctx
}
