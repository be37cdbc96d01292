package main

import (
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
		usage:   "[--json] FILE...",
		run:     runValidate,
	})
}

func runValidate(g *globals, args []string) int {
	fs := newFlagSet(g, "validate", "FILE...")
	asJSON := fs.Bool("json", false, "print the result as JSON, every problem with its file and JSON path (see the README's JSON shapes)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(g, fs, "no intent file given")
	}
	if *asJSON {
		return validateJSON(g, fs.Args())
	}
	intended, code := loadIntent(g, fs.Args())
	if intended == nil {
		return code
	}
	fmt.Fprintf(g.stdout, "valid: %d files, %d items\n", fs.NArg(), intended.Len())
	return exitOK
}

// loadIntent reads, parses, merges, validates and renders intent files
// (render.Load), keyed by their paths as given. On failure it prints every
// problem, one per line ("file: path: message"), and returns a nil graph
// and the exit code. Every command that takes intent files calls it before
// it touches anything, so an invalid intent never reaches the kernel.
func loadIntent(g *globals, paths []string) (*dg.Graph, int) {
	intended, _, code := loadIntentFiles(g, paths)
	return intended, code
}

// loadIntentFiles is loadIntent, also returning the files parsed, by path
// (render.Load in its two steps).
func loadIntentFiles(g *globals, paths []string) (*dg.Graph, map[string]*intent.Intent, int) {
	files := make(map[string][]byte, len(paths))
	size := 0
	for _, p := range paths {
		if _, dup := files[p]; dup {
			fmt.Fprintf(g.stderr, "netagent: %s: given twice\n", p)
			return nil, nil, exitUsage
		}
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(g.stderr, "netagent: %v\n", err)
			return nil, nil, exitInternal // I/O, not an invalid intent
		}
		files[p] = data
		size += len(data)
	}
	sizeGC(size)
	parsed, err := render.ParseFiles(files)
	var intended *dg.Graph
	if err == nil {
		intended, err = render.RenderFiles(parsed)
	}
	if err != nil {
		printIntentErrors(g, err)
		return nil, nil, exitFailed
	}
	return intended, parsed, exitOK
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
