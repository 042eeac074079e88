// Command cargoctl is Cargostream's operations tool: it prints the event
// stream and manages organisations and credentials through the HTTP API.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cargostream/cargostream/internal/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cargoctl:", err)
		os.Exit(exitCode(err))
	}
}

const usage = `Usage: cargoctl <command> [flags]

Commands:
  events   print events from the event stream, one JSON object a line
  trace    print everything one request caused: its events and the reactors' that followed
  state    print a quote, booking, stock request, flight or shipment as the API showed it at a past moment
  shipment print the whole life of one air waybill, through the HTTP API
  parked   list the events the reactors gave up on; 'parked retry' has them handled again
  admin    manage organisations, clients, users and API keys through the HTTP API
  import   import reference data (airports, airlines, commodities, hs-codes, dangerous-goods) through the HTTP API
  rebuild  rebuild the read models of a running cargod, without stopping reads
  verify   check every event of the stream and compare the read models with a fresh replay; exit 1 on findings
  health   exit 0 when cargod is ready to serve (GET /readyz), 1 otherwise
  version  print the version of this build of cargoctl (a running cargod's: its /metrics, cargo_build_info)
  help     print this help, or a command's: cargoctl help <command>

Run 'cargoctl <command> --help' for the flags of a command.
`

const versionUsage = `Usage: cargoctl version

Prints the version of this build of cargoctl and the Go it was built with.
A running cargod says its own in its metrics (cargo_build_info, on
GET /metrics).
`

// run carries out the command line args. Usage errors are *usageError.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &usageError{msg: "no command given"}
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "events":
		return runEvents(ctx, rest, getenv, stdout, stderr)
	case "trace":
		return runTrace(ctx, rest, getenv, stdout, stderr)
	case "state":
		return runState(ctx, rest, getenv, stdout, stderr)
	case "shipment":
		return runShipment(ctx, rest, getenv, stdout, stderr)
	case "parked":
		return runParked(ctx, rest, getenv, stdout, stderr)
	case "admin":
		return runAdmin(ctx, rest, getenv, stdout, stderr)
	case "import":
		return runImport(ctx, rest, getenv, stdout, stderr)
	case "health":
		return runHealth(ctx, rest, getenv, stdout, stderr)
	case "rebuild":
		return runRebuild(ctx, rest, getenv, stdout, stderr)
	case "verify":
		return runVerify(ctx, rest, getenv, stdout, stderr)
	case "version", "-version", "--version":
		switch {
		case len(rest) == 1 && slices.Contains([]string{"-h", "-help", "--help"}, rest[0]):
			fmt.Fprint(stdout, versionUsage)
			return nil
		case len(rest) > 0:
			return &usageError{cmd: "version", msg: fmt.Sprintf("version takes no arguments, got %q", rest[0])}
		}
		fmt.Fprintln(stdout, "cargoctl", version.String(), runtime.Version())
		return nil
	case "help", "-h", "-help", "--help":
		switch {
		case len(rest) > 0 && slices.Contains(commandNames, rest[0]):
			// After the subcommand too: 'help admin create-org' is
			// create-org's help, not admin's.
			return run(ctx, append(slices.Clip(rest), "--help"), getenv, stdout, stderr)
		case len(rest) > 0:
			// A typo, which a script checking for help must not take as
			// the command's help.
			return &usageError{msg: fmt.Sprintf("unknown command %q%s", rest[0], didYouMean(rest[0], commandNames))}
		}
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return &usageError{msg: fmt.Sprintf("unknown command %q%s", cmd, didYouMean(cmd, commandNames))}
	}
}

// commandNames are cargoctl's commands.
var commandNames = []string{"events", "trace", "state", "shipment", "parked", "admin", "import", "health", "rebuild", "verify", "version"}

// usageError is a command line that cannot be carried out as written.
type usageError struct {
	cmd string // "events", "admin create-org": where to look for help
	msg string
}

func (e *usageError) Error() string {
	if e.cmd == "" {
		return e.msg + " (see 'cargoctl help')"
	}
	return fmt.Sprintf("%s (see 'cargoctl %s --help')", e.msg, e.cmd)
}

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// exitCode is 2 for usage errors and 1 for everything else.
func exitCode(err error) int {
	var u *usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// newFlagSet returns a flag set whose --help prints synopsis and the
// flags. Parse errors are returned, not printed: see parseFlags.
func newFlagSet(cmd, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, synopsis)
		fmt.Fprintln(w, "\nFlags:")
		fs.VisitAll(func(f *flag.Flag) {
			name, help := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "  %s\n      %s", strings.TrimSpace("--"+f.Name+" "+name), help)
			if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(w)
		})
	}
	return fs
}

// parseFlags parses args. It reports help when --help was asked for, after
// printing the usage on stdout. With allowArgs false, arguments left after
// the flags are a usage error.
func parseFlags(fs *flag.FlagSet, args []string, allowArgs bool, stdout io.Writer) (help bool, err error) {
	err = fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return true, nil
	}
	if err != nil {
		return false, usagef(fs.Name(), "%s", flagProblem(fs, err))
	}
	if !allowArgs && fs.NArg() > 0 {
		return false, usagef(fs.Name(), "unexpected argument %q", fs.Arg(0))
	}
	return false, nil
}

// The errors of package flag, which flagProblem words as cargoctl's help
// does: flags with two dashes, and what a value should have been.
var (
	flagValueError = regexp.MustCompile(`^invalid (?:boolean )?value (".*") for (?:flag )?-([^:]+): (.*)$`)
	flagNameError  = regexp.MustCompile(`^(flag provided but not defined|flag needs an argument): -(.+)$`)
)

// flagProblem says what is wrong with a flag fs could not parse: Go's
// "invalid value "abc" for flag -from-seq: parse error" is
// `--from-seq "abc": not a whole number`.
func flagProblem(fs *flag.FlagSet, err error) string {
	if m := flagNameError.FindStringSubmatch(err.Error()); m != nil {
		if m[1] == "flag needs an argument" {
			return "--" + m[2] + " needs a value"
		}
		return "unknown flag --" + m[2]
	}
	m := flagValueError.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	value, name, why := m[1], m[2], m[3]
	if f := fs.Lookup(name); f != nil && (why == "parse error" || why == "value out of range") {
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case uint, uint64: // every one a stream sequence
				why = "not a stream sequence: the first is 1"
			case int, int64:
				why = "not a whole number"
			case float64:
				why = "not a number"
			case time.Duration:
				why = "not a duration such as 30s or 2m"
			case bool:
				why = "neither true nor false"
			}
			if m[3] == "value out of range" {
				why = "out of range"
			}
		}
	}
	return "--" + name + " " + value + ": " + why
}

// parseInterspersed is parseFlags for a command whose flags may come
// before, between and after its arguments, which it returns: an operator
// adds --json or --nats-url at the end of a command line as often as not.
func parseInterspersed(fs *flag.FlagSet, args []string, stdout io.Writer) (positional []string, help bool, err error) {
	for {
		if help, err := parseFlags(fs, args, true, stdout); help || err != nil {
			return nil, help, err
		}
		if fs.NArg() == 0 {
			return positional, false, nil
		}
		positional, args = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
}

// readSecretFile reads a secret kept in a file, without the line end. A
// file holding none is refused, naming it: the file was given, and "no
// client secret: set CARGOCTL_CLIENT_SECRET" (set, maybe) or the server
// generating a secret nobody sees would hide what went wrong.
func readSecretFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	secret := strings.TrimRight(string(b), "\r\n")
	if secret == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return secret, nil
}
