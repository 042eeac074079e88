// Command cargobench drives a running cargod with concurrent clients and
// prints, scenario by scenario, its throughput and latency beside a bare
// net/http handler served in the same run. See the README's Performance
// section, and cargobench -help.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/cargostream/cargostream/cmd/internal/loadtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := loadtest.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
