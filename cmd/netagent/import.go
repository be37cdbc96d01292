package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/internal/statefile"
)

func init() {
	register(&command{
		name:    "import",
		summary: "print an intent meaning the same as another tool's configuration (netplan, eni) or what the namespace holds (kernel)",
		usage:   "netplan FILE... | eni FILE | kernel [--all] [--ethtool]  [--out FILE] [--skip-unsupported]",
		run:     runImport,
	})
}

// importSource is one thing `netagent import` reads: run turns the
// arguments after the source's name into a result.
type importSource struct {
	// run imports; args are the arguments after the source's name, with
	// "--all" and "--ethtool" first when they were given. A bad argument is an
	// *importUsageError.
	run func(g *globals, args []string, opts importer.Options) (*importer.Result, error)
}

// importSources are the sources by name; each adds itself in its own file
// (import_netplan.go, import_eni.go, import_kernel.go).
var importSources = map[string]*importSource{}

// runImport parses `import SOURCE [options] ARGS`, runs the source's
// importer and prints the intent (or writes it to --out), the warnings of
// --skip-unsupported on stderr. Exit codes are validate's: 1 when
// something is refused (each refusal a line, FILE:LINE:COLUMN: key: why),
// 3 when a file cannot be read or written.
func runImport(g *globals, args []string) int {
	fs := newFlagSet(g, "import", "SOURCE ARGS...")
	out := fs.String("out", "", "write the intent to `FILE` (mode 0600, replaced atomically) instead of stdout")
	skip := fs.Bool("skip-unsupported", false, "warn on stderr about what netagent cannot express and leave it out, instead of refusing")
	all := fs.Bool("all", false, "import kernel: include the kernel's own objects (lo in the intent, the rest named in warnings)")
	eth := fs.Bool("ethtool", false, "import kernel: include each physical interface's ethtool settings at their current values")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(g, fs, "no source given: "+strings.Join(importSourceNames(), ", "))
	}
	src, ok := importSources[fs.Arg(0)]
	if !ok {
		return usageError(g, fs, fmt.Sprintf("unknown source %q: %s", fs.Arg(0), strings.Join(importSourceNames(), ", ")))
	}
	rest := fs.Args()[1:]
	if *all {
		rest = append([]string{"--all"}, rest...)
	}
	if *eth {
		rest = append([]string{"--ethtool"}, rest...)
	}
	res, err := src.run(g, rest, importer.Options{SkipUnsupported: *skip})
	if err != nil {
		return importError(g, fs.Arg(0), err)
	}
	for _, w := range res.Warnings {
		what := " (left out)"
		if w.Kept {
			what = ""
		}
		fmt.Fprintf(g.stderr, "netagent import: warning: %v%s\n", w, what)
	}
	return writeImported(g, res, *out)
}

func importSourceNames() []string {
	names := make([]string, 0, len(importSources))
	for name := range importSources {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// importError prints a failed import: every refusal on a line of its own
// (exit 1), a usage error (2), or an I/O error (3).
func importError(g *globals, source string, err error) int {
	var ie *importer.Error
	var use *importUsageError
	switch {
	case errors.As(err, &ie):
		for _, r := range ie.Refusals {
			fmt.Fprintf(g.stderr, "%v\n", r)
		}
		fmt.Fprintf(g.stderr, "netagent import %s: %d refused; nothing printed (--skip-unsupported leaves out what netagent cannot express)\n", source, len(ie.Refusals))
		return exitFailed
	case errors.As(err, &use):
		fmt.Fprintf(g.stderr, "netagent import %s: %v\n", source, use.msg)
		return exitUsage
	}
	fmt.Fprintf(g.stderr, "netagent import %s: %v\n", source, err)
	return exitInternal
}

// importUsageError is a source's bad arguments (exit 2).
type importUsageError struct{ msg string }

func (e *importUsageError) Error() string { return e.msg }

// writeImported prints the intent as indented JSON, or writes it to path
// as statefile writes its records: a new temporary file (never through a
// link), synced and renamed over path.
func writeImported(g *globals, res *importer.Result, path string) int {
	data, err := importer.Encode(res.Intent)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent import: encoding the intent: %v\n", err)
		return exitInternal
	}
	if path == "" {
		g.stdout.Write(data)
		return exitOK
	}
	if err := statefile.WriteShared(path, data, 0o600); err != nil {
		fmt.Fprintf(g.stderr, "netagent import: %v\n", err)
		return exitInternal
	}
	return exitOK
}
