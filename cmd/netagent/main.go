// Command netagent is the CLI and the daemon of netagent: it takes a JSON
// intent, works out the safe order of kernel changes and applies them.
//
// Every subcommand lives in its own file and registers itself in commands
// (see register); main parses the global flags, configures logrus (the only
// place that does) and dispatches. Each subcommand parses its arguments
// with newFlagSet and parseFlags (cli.go): options anywhere among the
// arguments, the global options also after the command's name.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/netagent/netagent/internal/gctune"
	"github.com/netagent/netagent/internal/profiling"
	"github.com/sirupsen/logrus"
)

// Exit codes, documented in --help and the README.
const (
	exitOK       = 0 // success; for apply/check: converged / no differences
	exitFailed   = 1 // invalid intent, failed or blocked items, differences found
	exitUsage    = 2 // bad command line
	exitInternal = 3 // I/O: an intent file could not be read, the kernel or the daemon could not be reached; or another internal error
	exitRefused  = 4 // apply, plan, rollback: it would disrupt a protected link; nothing changed (--force)
	exitConflict = 5 // --if-version: the current version of the intent is another
)

// command is one subcommand.
type command struct {
	name    string
	summary string // one line for --help
	usage   string // argument synopsis
	// logInfo: the command logs at info level unless --log-level says
	// otherwise (the daemon); the others log warnings and errors only,
	// their output being what they print.
	logInfo bool
	// run gets the global options and the subcommand's own arguments and
	// returns an exit code.
	run func(g *globals, args []string) int
}

var commands = map[string]*command{}

// register adds a subcommand; files call it from init.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("netagent: duplicate command " + c.name)
	}
	commands[c.name] = c
}

// fleetSub is one subcommand of fleet.
type fleetSub struct {
	summary, usage string
	run            func(g *globals, args []string) int
}

// fleetSubs are fleet's subcommands (set in fleet.go's init: their
// functions use it; none in a build without the fleet, fleet_nofleet.go).
var fleetSubs map[string]fleetSub

// globals are the options every subcommand accepts before its name (and
// after it: see parseFlags).
type globals struct {
	netns     string
	logFormat string
	// logLevel is --log-level; "" until given: the command's default
	// (command.logInfo).
	logLevel string
	stateDir string
	// stateDirGiven: --state-dir was given; otherwise stateDir follows
	// the namespace.
	stateDirGiven bool
	log           *logrus.Logger
	// logBuilt is the format and level log was made with.
	logBuilt [2]string
	stdout   io.Writer
	stderr   io.Writer
	// collect, when set, gets each command's flag set instead of a run
	// (netagent completion reads the commands' options with it).
	collect func(fs *flag.FlagSet)
	// asJSON: apply's --json (output.go), read by applyGuarded.
	asJSON bool
	// allOps: apply's --all-ops: print every operation, not the first
	// opsShown (output.go), read by applyGuarded.
	allOps bool
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	g := &globals{stdout: stdout, stderr: stderr, logFormat: "text"}
	fs, showVersion := topFlags(g)
	name, rest, err := splitCommand(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage(stdout, fs)
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "netagent: %s\nRun 'netagent --help' for the commands and options.\n", respell(err.Error()))
		return exitUsage
	case *showVersion:
		name, rest = "version", nil
	case name == "":
		fmt.Fprintln(stderr, "usage: netagent [global options] <command> [options] [arguments]")
		fmt.Fprintln(stderr, "Run 'netagent --help' for the commands and options.")
		return exitUsage
	}
	c, ok := commands[name]
	if !ok {
		return unknownCommand(g, name)
	}
	if g.logLevel == "" {
		g.logLevel = "warn"
		if c.logInfo {
			g.logLevel = "info"
		}
	}
	if err := g.settle(); err != nil {
		fmt.Fprintf(stderr, "netagent: %v\n", err)
		return exitUsage
	}
	gctune.Tune()
	defer profiling.Start(stderr)()
	return c.run(g, rest)
}

// topFlags are the options before the command's name: the global ones and
// --version.
func topFlags(g *globals) (fs *flag.FlagSet, showVersion *bool) {
	fs = flag.NewFlagSet("netagent", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and usage printed by run
	defineGlobals(g, fs, globalNames...)
	fs.Usage = func() {}
	return fs, fs.Bool("version", false, "print the version, as the version command does")
}

// splitCommand parses the global options before the command's name and
// returns the name ("" when none is given) and the command's arguments.
// An option before the name that is no global one (`netagent --json plan
// f.json`) is taken for the command's: what precedes the name is then
// given to the command, in its order, before the rest.
func splitCommand(fs *flag.FlagSet, args []string) (name string, rest []string, err error) {
	if err = fs.Parse(args); err == nil {
		if fs.NArg() == 0 {
			return "", nil, nil
		}
		return fs.Arg(0), fs.Args()[1:], nil
	}
	if errors.Is(err, flag.ErrHelp) {
		return "", nil, err
	}
	for i, a := range args {
		if _, ok := commands[a]; ok {
			return a, append(slices.Clone(args[:i]), args[i+1:]...), nil
		}
	}
	return "", nil, err
}

// settle makes the logger the log options ask for (again, when options
// after the command's name changed them) and the default state directory
// of the namespace, unless --state-dir was given.
func (g *globals) settle() error {
	if !g.stateDirGiven || g.stateDir == "" {
		g.stateDir = defaultStateDir(g.netns)
	}
	if g.log != nil && g.logBuilt == [2]string{g.logFormat, g.logLevel} {
		return nil
	}
	log, err := newLogger(g.logFormat, g.logLevel, g.stderr)
	if err != nil {
		return err
	}
	g.log, g.logBuilt = log, [2]string{g.logFormat, g.logLevel}
	return nil
}

func defaultStateDir(netns string) string {
	if netns == "" {
		netns = "host"
	}
	return "/var/lib/netagent/" + netns
}

func newLogger(format, level string, out io.Writer) (*logrus.Logger, error) {
	log := logrus.New()
	log.SetOutput(out)
	switch format {
	case "text":
		log.SetFormatter(&logrus.TextFormatter{DisableColors: true, FullTimestamp: true})
	case "json":
		log.SetFormatter(&logrus.JSONFormatter{})
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
	lvl, err := logrus.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	log.SetLevel(lvl)
	return log, nil
}

const exitCodesHelp = `  0  success (apply: every item converged; check: running matches intended)
  1  invalid intent, failed or blocked items, or differences found (check)
  2  bad command line; plan --detailed-exitcode: an apply would change something (and converge)
  3  I/O or internal error: an intent file could not be read (missing, unreadable); the kernel,
     the state directory or the daemon could not be reached; or another netagent holds the
     namespace (a daemon serves it; the lock wait timed out); plan, check: a trial is pending
     that its process left (run netagent recover)
  4  apply, plan, rollback: refused, it would disrupt a protected link (--protect, "protected": true);
     nothing was changed (--force applies it anyway)
  5  --if-version N: the current version of the intent is not N (someone else changed it)
  6  try: reverted, not confirmed before --timeout, or on request (SIGINT, SIGTERM, rollback)
  7  try: reverted, an item failed or stayed blocked (unless --keep-partial)
  8  try: reverted, the read-back after the apply differs from the intent
  9  try: reverted, a probe did not pass
`

// usage prints the commands and the global options; where the exit codes
// are.
func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: netagent [global options] <command> [options] [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\n`netagent help COMMAND` (or `netagent COMMAND --help`) prints a command's arguments and options.")
	fmt.Fprintln(w, "Options go before or after the arguments (or the command's name); -- ends them.")
	fmt.Fprintln(w, "\nglobal options (also accepted after the command; given in both places, the later one wins):")
	var flags []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	printFlags(w, flags)
	fmt.Fprintln(w, exitCodesPointer)
}

// commandNames returns the names of the commands, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
