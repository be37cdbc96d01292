package main

// The command line, parsed the same way for every command: newFlagSet
// gives a command its flag set, parseFlags parses it.
//
//   - Options go anywhere: before, between or after the arguments
//     (`netagent plan f.json --json`), even before the command's name
//     (splitCommand); `--` ends them, so that a file named `--x` can
//     still be given (`netagent validate -- --x`).
//   - The global options (--netns, --state-dir, --log-level, --log-format)
//     are accepted before the command's name and after it; given in both
//     places, the later one wins, as with any option given twice.
//   - -h, -help and --help print the command's usage on stdout (exit 0),
//     as `netagent help COMMAND` does; a bad command line prints the error
//     and one line pointing at --help on stderr (exit 2). Options are
//     spelled with two dashes in every message (respell).

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/netagent/netagent/internal/suggest"
)

// globalNames are the global options.
var globalNames = []string{"netns", "state-dir", "log-level", "log-format"}

// globalUsage describes the global options.
var globalUsage = map[string]string{
	"netns":      "the named network namespace `NAME` to manage (default: the host's)",
	"state-dir":  "keep netagent's records in `DIR` (default /var/lib/netagent/<netns or host>)",
	"log-level":  "log `LEVEL`: debug, info, warn, error (default: warn; run, the daemon: info)",
	"log-format": "log `FORMAT`: text or json",
}

// globalDocs holds the global options as documented, for their
// placeholders (a command's own --netns has none).
var globalDocs = func() *flag.FlagSet {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	defineGlobals(&globals{}, fs, globalNames...)
	return fs
}()

func isGlobal(name string) bool { return slices.Contains(globalNames, name) }

// defineGlobals defines the global options named on fs, bound to the
// fields of g that the same options before the command's name set.
func defineGlobals(g *globals, fs *flag.FlagSet, names ...string) {
	for _, name := range names {
		gf := &globalFlag{g: g}
		switch name {
		case "netns":
			gf.p = &g.netns
		case "state-dir":
			gf.p, gf.given = &g.stateDir, &g.stateDirGiven
		case "log-level":
			gf.p = &g.logLevel
		case "log-format":
			gf.p = &g.logFormat
		}
		fs.Var(gf, name, globalUsage[name])
	}
}

// globalFlag is a global option in a command's flag set. It also carries
// the globals from newFlagSet to parseFlags.
type globalFlag struct {
	g *globals
	p *string
	// given, when set, records that the option was given.
	given *bool
}

func (f *globalFlag) String() string {
	if f == nil || f.p == nil {
		return ""
	}
	return *f.p
}

func (f *globalFlag) Set(v string) error {
	*f.p = v
	if f.given != nil {
		*f.given = true
	}
	return nil
}

// globalsOf returns the globals of a flag set made by newFlagSet.
func globalsOf(fs *flag.FlagSet) *globals {
	if f := fs.Lookup("log-level"); f != nil {
		if gf, ok := f.Value.(*globalFlag); ok {
			return gf.g
		}
	}
	return nil
}

// newFlagSet returns the flag set of a subcommand, with the global options
// (--netns is added by parseFlags unless the command defines its own:
// kernelFlags does, defaulting to the global one). Its usage goes to
// stderr on a bad command line, to stdout on -h.
func newFlagSet(g *globals, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("netagent "+name, flag.ContinueOnError)
	fs.SetOutput(g.stderr)
	defineGlobals(g, fs, "state-dir", "log-level", "log-format")
	fs.Usage = func() { commandUsage(fs.Output(), fs, name, synopsis) }
	return fs
}

// parseFlags parses a subcommand's arguments, options anywhere among them
// (see the top of this file), then settles the globals (the logger, the
// state directory). ok is false when the command must end with code:
// after -h, or a bad option.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	g := globalsOf(fs)
	if g != nil && fs.Lookup("netns") == nil {
		defineGlobals(g, fs, "netns")
	}
	if g != nil && g.collect != nil { // netagent completion: the flags, nothing run
		g.collect(fs)
		return exitOK, false
	}
	flags, positional, help := splitArgs(fs, args)
	if help {
		out := fs.Output()
		if g != nil {
			fs.SetOutput(g.stdout)
		}
		fs.Usage()
		fs.SetOutput(out)
		return exitOK, false
	}
	if err := parseQuiet(fs, flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		if g == nil {
			return exitUsage, false
		}
		return usageError(g, fs, respell(err.Error())+suggestFlag(fs, err)), false
	}
	if fs.NArg() > 0 { // not expected: splitArgs left only options
		fmt.Fprintf(fs.Output(), "%s: unexpected %q\n", fs.Name(), fs.Arg(0))
		return exitUsage, false
	}
	// Parse again to set the arguments: "--" ends the options at once.
	if err := fs.Parse(append([]string{"--"}, positional...)); err != nil {
		return exitUsage, false
	}
	if g != nil {
		if err := g.settle(); err != nil {
			return usageError(g, fs, err.Error()), false
		}
	}
	return exitOK, true
}

// parseQuiet parses args with fs's own error message and usage held back:
// the caller reports the error (usageError).
func parseQuiet(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	return fs.Parse(args)
}

// flagInMessage is an option as the flag package's errors spell it: one
// dash ("flag provided but not defined: -x", "invalid value … for flag -x").
var flagInMessage = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[\s:])-([A-Za-z][A-Za-z0-9-]*)`) })

// respell spells the options in one of the flag package's messages with
// two dashes, as netagent's documentation and its other messages do.
func respell(msg string) string {
	return flagInMessage().ReplaceAllString(msg, "$1--$2")
}

// suggestFlag is "; did you mean --X?" when err is an option fs does not
// define and X is the closest of fs's options.
func suggestFlag(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := suggest.Closest(strings.TrimPrefix(name, "-"), names); s != "" {
		return fmt.Sprintf("; did you mean --%s?", s)
	}
	return ""
}

// splitArgs separates the options of a command line (with their values)
// from its arguments, as the flag package reads them: "-x" and "--x" are
// options, "-" and what does not start with "-" are arguments, a value
// follows an option that is not boolean unless given as "--x=v", and
// everything after "--" is an argument. help reports -h, -help or --help
// among the options (unless the command defines them).
func splitArgs(fs *flag.FlagSet, args []string) (flags, positional []string, help bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f := fs.Lookup(name)
		if f == nil && (name == "h" || name == "help") {
			help = true
		}
		if f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, positional, help
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// usageError reports a bad command line: the error, and where the usage
// is.
func usageError(g *globals, fs *flag.FlagSet, msg string) int {
	fmt.Fprintf(g.stderr, "%s: %s\n", fs.Name(), msg)
	fmt.Fprintf(g.stderr, "Run '%s --help' for its usage.\n", fs.Name())
	return exitUsage
}

// commandUsage prints a command's usage: its synopsis and summary, its
// options and the global ones; the exit codes are `netagent help
// exit-codes`.
func commandUsage(w io.Writer, fs *flag.FlagSet, name, synopsis string) {
	fmt.Fprintf(w, "usage: netagent %s [options] %s\n", name, synopsis)
	if c, ok := commands[name]; ok {
		fmt.Fprintf(w, "\n%s\n", c.summary)
	}
	var own, global []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if isGlobal(f.Name) { // kernelFlags' --netns too
			global = append(global, f)
		} else {
			own = append(own, f)
		}
	})
	if len(own) > 0 {
		fmt.Fprintln(w, "\noptions (before or after the arguments; -- ends them):")
		printFlags(w, own)
	}
	if len(global) > 0 {
		fmt.Fprintln(w, "\nglobal options (also accepted before the command; given in both places, the later one wins):")
		printFlags(w, global)
	}
	fmt.Fprintln(w, exitCodesPointer)
}

// exitCodesPointer ends every usage: where the exit codes are.
const exitCodesPointer = "\nexit codes: netagent help exit-codes"

// placeholder is the name of f's value in its usage (flag.UnquoteUsage:
// its first back-quoted word, else its type) and the usage without the
// quotes. A boolean option takes none; back-quoted prose (`go doc
// agent/probe`) is no placeholder.
func placeholder(f *flag.Flag) (typ, usage string) {
	typ, usage = flag.UnquoteUsage(f)
	if strings.ContainsAny(typ, " /") {
		typ, usage = flag.UnquoteUsage(&flag.Flag{Name: f.Name, Usage: strings.ReplaceAll(f.Usage, "`", ""), Value: f.Value})
	}
	if isBoolFlag(f) {
		typ = ""
	}
	return typ, usage
}

// printFlags prints options as "--name TYPE" and their description, with
// the default when it is not the zero value and the description does not
// say it.
func printFlags(w io.Writer, flags []*flag.Flag) {
	for _, f := range flags {
		typ, usage := placeholder(f)
		if g := globalDocs.Lookup(f.Name); g != nil && typ != "" { // a global: its own placeholder
			typ, _ = placeholder(g)
		}
		line := "  --" + f.Name
		if typ != "" {
			line += " " + strings.ToUpper(typ)
		}
		fmt.Fprintf(w, "%s\n        %s", line, strings.ReplaceAll(usage, "\n", "\n        "))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" && !strings.Contains(usage, "(default") {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	}
}
