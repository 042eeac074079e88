package main

import (
	"strings"
	"testing"

	"github.com/cargostream/cargostream/internal/hangwatch"
)

// TestMain ends a run that hangs before go test's timeout would, with the
// stacks of the tests still running last (see hangwatch).
func TestMain(m *testing.M) { hangwatch.Main(m) }

// A flag cargoctl cannot parse is named with two dashes, as the help names
// it, with what its value should have been, where package flag says
// "invalid value "x" for flag -n: parse error".
func TestAFlagThatCannotBeParsedIsNamedAsTheHelpNamesIt(t *testing.T) {
	fs := newFlagSet("test", "")
	fs.Uint64("seq", 0, "")
	fs.Int("count", 0, "")
	fs.Duration("wait", 0, "")
	fs.Bool("json", false, "")
	fs.String("name", "", "")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--seq", "abc"}, `--seq "abc": not a stream sequence: the first is 1`},
		{[]string{"--seq", "-1"}, `--seq "-1": not a stream sequence: the first is 1`},
		{[]string{"--seq", "99999999999999999999"}, `--seq "99999999999999999999": out of range`},
		{[]string{"--count", "1.5"}, `--count "1.5": not a whole number`},
		{[]string{"--wait", "soon"}, `--wait "soon": not a duration such as 30s or 2m`},
		{[]string{"--json=maybe"}, `--json "maybe": neither true nor false`},
		{[]string{"--name"}, "--name needs a value"},
		{[]string{"--bogus"}, "unknown flag --bogus"},
	} {
		if got := flagProblem(fs, fs.Parse(tt.args)); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.args, got, tt.want)
		}
	}
}

// 'cargoctl help' of a command and its subcommand prints the subcommand's
// help, as 'cargoctl admin help create-org' does, not the command's; a
// subcommand that does not exist is a usage error, not the command's help.
func TestHelpOfASubcommandIsItsOwn(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		want     string
		wantCode int // 0: no error
	}{
		{[]string{"help", "admin", "create-org"}, "Creates an organisation.", 0},
		{[]string{"help", "parked", "retry"}, "retry only the entries of this reactor", 0},
		{[]string{"help", "admin", "frobnicate"}, `unknown admin command "frobnicate"`, 2},
		{[]string{"help", "admin", "create-orgs"}, `unknown admin command "create-orgs" (did you mean create-org?)`, 2},
		{[]string{"help", "evnts"}, `unknown command "evnts" (did you mean events?)`, 2},
		{[]string{"evnts"}, `unknown command "evnts" (did you mean events?)`, 2},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, err := runCmd(t, env(nil), tt.args...)
			code := 0
			if err != nil {
				code = exitCode(err)
				out += err.Error()
			}
			if code != tt.wantCode || !strings.Contains(out, tt.want) || errOut != "" {
				t.Errorf("exit %d, printed %q %q; want exit %d and %q", code, out, errOut, tt.wantCode, tt.want)
			}
		})
	}
}
