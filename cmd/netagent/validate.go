package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
)

func init() {
	register(&command{
		name:    "validate",
		summary: "check intent files as a whole; print every problem with its JSON path",
		usage:   "FILE...",
		run:     runValidate,
	})
}

func runValidate(g *globals, args []string) int {
	fs := newFlagSet(g, "validate", "FILE...")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(g, fs, "no intent file given")
	}
	intended, code := loadIntent(g, fs.Args())
	if intended == nil {
		return code
	}
	fmt.Fprintf(g.stdout, "valid: %d files, %d items\n", fs.NArg(), len(intended.Refs()))
	return exitOK
}

// loadIntent reads, parses, merges, validates and renders intent files
// (render.Load), keyed by their paths as given. On failure it prints every
// problem, one per line ("file: path: message"), and returns a nil graph
// and the exit code. Every command that takes intent files calls it before
// it touches anything, so an invalid intent never reaches the kernel.
func loadIntent(g *globals, paths []string) (*dg.Graph, int) {
	intended, _, code := loadIntentProtected(g, paths)
	return intended, code
}

// loadIntentProtected is loadIntent that also returns the links the files
// mark "protected": true (render.ProtectedLinks).
func loadIntentProtected(g *globals, paths []string) (*dg.Graph, []string, int) {
	files := make(map[string][]byte, len(paths))
	for _, p := range paths {
		if _, dup := files[p]; dup {
			fmt.Fprintf(g.stderr, "netagent: %s: given twice\n", p)
			return nil, nil, exitUsage
		}
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(g.stderr, "netagent: %v\n", err)
			return nil, nil, exitFailed
		}
		files[p] = data
	}
	intended, protected, err := render.LoadProtected(files)
	if err != nil {
		printIntentErrors(g, err)
		return nil, nil, exitFailed
	}
	return intended, protected, exitOK
}

// printIntentErrors prints every problem of an intent, one per line.
func printIntentErrors(g *globals, err error) {
	fes := intent.FieldErrors(err)
	for _, fe := range fes {
		fmt.Fprintln(g.stderr, fe)
	}
	if len(fes) == 0 {
		fmt.Fprintln(g.stderr, err)
	}
	fmt.Fprintf(g.stderr, "netagent: invalid intent: %d problems; nothing was changed\n", max(len(fes), 1))
}

// newFlagSet returns the flag set of a subcommand, printing its usage
// (with the exit codes) on error or -h.
func newFlagSet(g *globals, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("netagent "+name, flag.ContinueOnError)
	fs.SetOutput(g.stderr)
	fs.Usage = func() {
		fmt.Fprintf(g.stderr, "usage: netagent [global options] %s [options] %s\n", name, synopsis)
		if c, ok := commands[name]; ok {
			fmt.Fprintf(g.stderr, "\n%s\n", c.summary)
		}
		fmt.Fprintln(g.stderr, "\noptions:")
		fs.PrintDefaults()
		fmt.Fprintln(g.stderr, "\nexit codes:")
		fmt.Fprint(g.stderr, exitCodesHelp)
	}
	return fs
}

// parseFlags parses a subcommand's arguments; ok is false when the command
// must end with code (after -h, or a bad flag).
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return exitOK, true
}

// usageError reports a bad command line.
func usageError(g *globals, fs *flag.FlagSet, msg string) int {
	fmt.Fprintf(g.stderr, "%s: %s\n", fs.Name(), msg)
	fs.Usage()
	return exitUsage
}
