// Package loadtest drives a running cargod with concurrent clients and
// measures it against a bare net/http handler served in the same run. The
// command is cmd/cargobench; the package lives apart so that the tests of
// cmd/cargod can run it against a server they start.
package loadtest

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Scenario names, in the order they run.
const (
	CreateQuote = "create-quote"
	GetQuote    = "get-quote"
	Booking     = "booking"
	Webhooks    = "webhooks"
)

var allScenarios = []string{CreateQuote, GetQuote, Booking, Webhooks}

// Config is one run of the load tool.
type Config struct {
	URL string // the cargod to drive

	ForwarderID, ForwarderSecret string // files RFQs and bookings, subscribes to webhooks
	AirlineID, AirlineSecret     string // approves the forwarder's AWB stock for the bookings

	Clients          int           // concurrent clients of the request scenarios and the webhook burst
	Duration, Warmup time.Duration // per row; requests during the warm-up are not counted
	Scenarios        []string

	Bookings    int // bookings in flight in the booking scenario
	AWBStock    int // unused AWB numbers the forwarder holds while the booking scenario runs
	Subscribers int // webhook subscriptions
	RFQs        int // RFQs of the webhook burst
	Sequential  int // RFQs sent one at a time after the burst

	JSON     bool      // print the report as JSON
	Progress io.Writer // a line a second while a row runs; nil for none
}

// DefaultConfig is the run the tool makes without flags: the demo
// credentials of a cargod started with go run ./cmd/cargod.
func DefaultConfig() Config {
	return Config{
		URL:         "http://127.0.0.1:8080",
		ForwarderID: "demo-forwarder", ForwarderSecret: "demo-forwarder-secret",
		AirlineID: "demo-airline-lh", AirlineSecret: "demo-airline-lh-secret",
		Clients: 64, Duration: 8 * time.Second, Warmup: time.Second,
		Scenarios: allScenarios,
		Bookings:  300, AWBStock: 20000, Subscribers: 3, RFQs: 1000, Sequential: 50,
	}
}

// UsageError is a command line the tool cannot run; the command exits 2.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// ParseArgs reads the command line on top of DefaultConfig. Flag errors and
// the usage text go to stderr.
func ParseArgs(args []string, stderr io.Writer) (Config, error) {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("cargobench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: cargobench [flags]

Drives a running cargod with concurrent clients, scenario by scenario, and
prints req/s, p50, p99 and errors beside a bare net/http handler served by
this tool in the same run. Start cargod with rate limits lifted and loopback
webhooks allowed:

  CARGO_RATE_LIMIT_PER_MINUTE=0 CARGO_RATE_LIMIT_PER_HOUR=0 CARGO_RATE_LIMIT_PER_DAY=0 \
  CARGO_WEBHOOK_ALLOW_PRIVATE=true go run ./cmd/cargod

Flags:
`)
		fs.PrintDefaults()
	}
	scenarios := strings.Join(cfg.Scenarios, ",")
	fs.StringVar(&cfg.URL, "url", cfg.URL, "base URL of the running cargod")
	fs.StringVar(&cfg.ForwarderID, "forwarder-id", cfg.ForwarderID, "API client of the forwarder that files RFQs and bookings")
	fs.StringVar(&cfg.ForwarderSecret, "forwarder-secret", cfg.ForwarderSecret, "its secret")
	fs.StringVar(&cfg.AirlineID, "airline-id", cfg.AirlineID, "API client of the airline that is booked and approves the forwarder's AWB stock")
	fs.StringVar(&cfg.AirlineSecret, "airline-secret", cfg.AirlineSecret, "its secret")
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "concurrent clients")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured time of each row")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured time before each row")
	fs.StringVar(&scenarios, "scenarios", scenarios, "comma-separated scenarios to run: "+strings.Join(allScenarios, ", "))
	fs.IntVar(&cfg.Bookings, "bookings", cfg.Bookings, "bookings in flight in the booking scenario")
	fs.IntVar(&cfg.AWBStock, "awb-stock", cfg.AWBStock, "unused AWB numbers of the airline the forwarder holds while the booking scenario runs: topped up as the bookings use them")
	fs.IntVar(&cfg.Subscribers, "subscribers", cfg.Subscribers, "webhook subscriptions of the webhook scenario")
	fs.IntVar(&cfg.RFQs, "rfqs", cfg.RFQs, "RFQs of the webhook burst")
	fs.IntVar(&cfg.Sequential, "sequential", cfg.Sequential, "RFQs sent one at a time after the webhook burst")
	fs.BoolVar(&cfg.JSON, "json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, &UsageError{msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return cfg, &UsageError{msg: fmt.Sprintf("unexpected argument %q (flags only; see -help)", fs.Arg(0))}
	}
	cfg.Scenarios = strings.Split(scenarios, ",")
	return cfg, cfg.validate()
}

func (c Config) validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &UsageError{msg: fmt.Sprintf("-url %q is not an http(s) URL with a host", c.URL)}
	}
	for _, n := range []struct {
		name  string
		value int
	}{{"clients", c.Clients}, {"bookings", c.Bookings}, {"awb-stock", c.AWBStock}, {"subscribers", c.Subscribers}, {"rfqs", c.RFQs}, {"sequential", c.Sequential}} {
		if n.value < 1 {
			return &UsageError{msg: fmt.Sprintf("-%s must be at least 1, not %d", n.name, n.value)}
		}
	}
	if c.Subscribers > 25 {
		// The service's own limit per organisation.
		return &UsageError{msg: fmt.Sprintf("-subscribers must be at most 25 (an organisation's limit), not %d", c.Subscribers)}
	}
	if c.Duration <= 0 || c.Warmup < 0 {
		return &UsageError{msg: "-duration must be above 0 and -warmup not below 0"}
	}
	if len(c.Scenarios) == 0 {
		return &UsageError{msg: "-scenarios names no scenario"}
	}
	for _, s := range c.Scenarios {
		if !slices.Contains(allScenarios, s) {
			return &UsageError{msg: fmt.Sprintf("unknown scenario %q in -scenarios (known: %s)", s, strings.Join(allScenarios, ", "))}
		}
	}
	return nil
}
