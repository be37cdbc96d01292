package layering

import (
	"fmt"
	"slices"
	"strings"
)

// Module is the module path the rules' package names are relative to.
const Module = "github.com/netagent/netagent"

// A Rule forbids the packages of From to import (Imports) or to depend on
// at all (Deps) the packages of Not. Why is said when it is broken.
type Rule struct {
	From []string
	Not  []string
	Deps bool // transitive: Deps rather than Imports
	// Only, when set, is the whole list of the module's packages that
	// From may import (Not is then ignored).
	Only []string
	Why  string
}

// Package is one package of the graph: its path relative to the module,
// its direct imports and all its dependencies (paths as go list gives
// them, the module's prefixed with Module).
type Package struct {
	Path    string
	Imports []string
	Deps    []string
}

// Rules are the project's layers, lowest first.
var Rules = []Rule{
	{From: []string{"depgraph"}, Only: []string{}, Why: "the engine's graph knows nothing but Go"},
	{From: []string{"reconciler"}, Only: []string{"depgraph"}, Why: "the engine is generic: it never sees items, netlink or configurators"},
	{From: []string{"items/..."}, Only: []string{"depgraph", "items/...", "internal/..."}, Why: "items describe the kernel's objects, they do not touch it"},
	{From: []string{"internal/..."}, Only: []string{"internal/...", "depgraph", "store"},
		Why: "internal helpers sit below every layer but the generic graph and store"},
	{From: []string{"store/..."}, Only: []string{"store/...", "internal/..."}, Why: "the store is generic over values"},
	{From: []string{"configurators/..."}, Not: []string{"agent/...", "cmd/...", "store/...", "fleet/...", "systemd/..."},
		Why: "configurators write the kernel for whoever calls them; they never reach up"},
	{From: []string{"agent/intent", "agent/render"}, Not: []string{"configurators/...", "reconciler", "agent/host", "store/..."},
		Why: "intent is rendered, never executed: rendering is pure"},
	{From: []string{"agent/importer/..."}, Not: []string{"configurators/...", "reconciler", "agent/host", "agent/oneshot", "store/..."},
		Why: "importers read the files they are given into an intent: no kernel, no state"},
	{From: []string{"agent/..."}, Not: []string{"agent"}, Deps: true,
		Why: "a sub-package of agent/ is written against explicit inputs: it never reaches the loop's package"},
	{From: []string{"cmd/netagent"}, Not: []string{"items/...", "configurators/...", "store/..."},
		Why: "the CLI parses flags, wires components and prints: workflows live in agent/ packages"},
	{From: []string{"..."}, Not: []string{"cmd/..."}, Why: "nothing imports a command"},
}

// covers reports whether pattern (a package, "p/..." or "...") names pkg.
func covers(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == p || strings.HasPrefix(pkg, p+"/")
	}
	return pattern == pkg
}

func coveredBy(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return covers(p, pkg) })
}

// own returns path relative to the module, or false for another module's
// or the standard library's package.
func own(path string) (string, bool) {
	if path == Module {
		return "", true
	}
	return strings.CutPrefix(path, Module+"/")
}

// Violations lists every edge of pkgs that a rule forbids, one line each:
// "from -> to: why". Packages under test/ are exempt: end-to-end tests may
// reach everything.
func Violations(pkgs []Package, rules []Rule) []string {
	var out []string
	for _, p := range pkgs {
		if covers("test/...", p.Path) {
			continue
		}
		for _, r := range rules {
			if coveredBy(r.From, p.Path) {
				out = append(out, broken(p, r)...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// broken lists the edges of p that r forbids.
func broken(p Package, r Rule) []string {
	edges := p.Imports
	if r.Deps {
		edges = p.Deps
	}
	var out []string
	for _, e := range edges {
		to, ok := own(e)
		if !ok || to == p.Path {
			continue
		}
		bad := coveredBy(r.Not, to)
		if r.Only != nil {
			bad = !coveredBy(r.Only, to)
		}
		if bad {
			out = append(out, fmt.Sprintf("%s -> %s: %s", p.Path, to, r.Why))
		}
	}
	return out
}
