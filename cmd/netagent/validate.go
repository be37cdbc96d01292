package main

import (
	"fmt"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/oneshot"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/gctune"
	"github.com/netagent/netagent/internal/plural"
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
	fmt.Fprintf(g.stdout, "valid: %s, %s\n", plural.N(fs.NArg(), "file"), plural.N(intended.Len(), "item"))
	return exitOK
}

// loadIntent reads, parses, merges, validates and renders intent files
// (oneshot.Validate), keyed by their paths as given. On failure it prints
// every problem, one per line ("file: path: message"), and returns a nil
// graph and the exit code. Every command that takes intent files calls it
// (or oneshot.Load) before it touches anything, so an invalid intent never
// reaches the kernel.
func loadIntent(g *globals, paths []string) (*dg.Graph, int) {
	intended, _, code := loadIntentFiles(g, paths)
	return intended, code
}

// loadIntentFiles is loadIntent, also returning the files parsed, by path.
func loadIntentFiles(g *globals, paths []string) (*dg.Graph, map[string]*intent.Intent, int) {
	v, err := oneshot.Validate(paths, gctune.Size)
	if err != nil {
		return nil, nil, printError(g, "", err)
	}
	return v.Graph, v.Intent.Files, exitOK
}
