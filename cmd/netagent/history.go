package main

// Every intent a writer accepts for a namespace (apply, the daemon,
// rollback) becomes a numbered version in its state directory (package
// agent/versions): history lists them, diff compares two, rollback goes
// back to one. apply and rollback take --if-version N, refused (exit
// exitConflict) when the current version is not N: checked and written
// under the target's lock, so that of two writers expecting N exactly one
// wins.

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/versions"
	"github.com/netagent/netagent/internal/termsafe"
)

func init() {
	register(&command{
		name:    "history",
		summary: "list the versions of the intent accepted for the namespace (newest last)",
		usage:   "[--netns NAME] [--json]",
		run:     runHistory,
	})
}

func parseVersion(s string) (int, error) {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n < 0 || fmt.Sprint(n) != s {
		return 0, fmt.Errorf("%q: want a version number", s)
	}
	return n, nil
}

// store is the namespace's version store.
func (v *versionOpts) store(g *globals, k *kernelOpts) *versions.Local {
	return versions.Open(k.stateDir(g), v.keep)
}

// versionError prints err and returns its exit code: exitConflict for a
// compare-and-swap refused.
func versionError(g *globals, err error) int {
	fmt.Fprintf(g.stderr, "netagent: %v\n", err)
	switch {
	case errors.Is(err, versions.ErrConflict):
		return exitConflict
	case errors.Is(err, versions.ErrNotFound):
		return exitFailed
	}
	return exitInternal
}

func runHistory(g *globals, args []string) int {
	fs := newFlagSet(g, "history", "[--json]")
	k := kernelFlags(g, fs)
	asJSON := fs.Bool("json", false, "print the versions as JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments")
	}
	list, err := oneshot.History(k.stateDir(g))
	switch {
	case err != nil:
		return versionError(g, err)
	case *asJSON:
		if writeJSON(g, list) != nil {
			return exitInternal
		}
		return exitOK
	case len(list) == 0:
		fmt.Fprintln(g.stdout, "no versions yet: nothing has been applied to this namespace with this state directory")
		return exitOK
	}
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tTIME\tDIGEST\tSOURCE")
	for _, m := range list {
		mark := ""
		if m.Current {
			mark = " (current)"
		}
		fmt.Fprintf(tw, "%d%s\t%s\t%s\t%s\n", m.Number, mark, m.Time.Local().Format(time.DateTime), versions.Short(m.Digest), termsafe.String(m.Source))
	}
	tw.Flush()
	return exitOK
}

// request puts --if-version into a request to the daemon.
func (v *versionOpts) request(req *api.Request) {
	if v.ifVersion != versions.Any {
		n := v.ifVersion
		req.IfVersion = &n
	}
}
