package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// listModule runs go list over the whole module and returns its packages
// as built (test files are left out: a test may set up what its package
// may not reach).
func listModule(t *testing.T) []Package {
	t.Helper()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "list", "-e", "-json=ImportPath,Imports,Deps", Module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath    string
			Imports, Deps []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if rel, ok := own(p.ImportPath); ok {
			pkgs = append(pkgs, Package{Path: rel, Imports: p.Imports, Deps: p.Deps})
		}
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages of %s: not the module", len(pkgs), Module)
	}
	return pkgs
}

// TestLayering checks the tree: no package imports what its layer forbids.
func TestLayering(t *testing.T) {
	for _, v := range Violations(listModule(t), Rules) {
		t.Error(v)
	}
}

// TestViolationsCatchForbiddenEdges checks the checker: each rule, broken
// on purpose in a made-up graph, is reported, and allowed edges are not.
func TestViolationsCatchForbiddenEdges(t *testing.T) {
	m := func(p string) string { return Module + "/" + p }
	pkgs := []Package{
		{Path: "depgraph", Imports: []string{"fmt"}},
		{Path: "reconciler", Imports: []string{m("depgraph"), m("items")}},
		{Path: "configurators/link", Imports: []string{m("items"), m("internal/netnsx"), m("agent/host")}},
		{Path: "agent/status", Imports: []string{m("agent/host")}, Deps: []string{m("agent/host"), m("agent")}},
		{Path: "agent/api", Imports: []string{m("agent/status")}, Deps: []string{m("agent/status"), m("agent/host")}},
		{Path: "agent", Imports: []string{m("agent/api"), m("items")}, Deps: []string{m("agent/api")}},
		{Path: "cmd/netagent", Imports: []string{m("agent"), m("configurators/dns"), m("store/etcd")}},
		{Path: "agent/render", Imports: []string{m("items"), m("configurators/link")}},
		{Path: "fleet", Imports: []string{m("cmd/netagent")}},
		{Path: "test/netns", Imports: []string{m("cmd/netagent"), m("agent"), m("configurators/link")}},
	}
	got := Violations(pkgs, Rules)
	want := []string{
		"agent/render -> configurators/link",
		"agent/status -> agent",
		"cmd/netagent -> configurators/dns",
		"cmd/netagent -> store/etcd",
		"configurators/link -> agent/host",
		"fleet -> cmd/netagent",
		"reconciler -> items",
	}
	if len(got) != len(want) {
		t.Fatalf("violations:\n%s\nwant the edges:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w+": ") {
			t.Errorf("violation %d = %q, want edge %q", i, got[i], w)
		}
	}
}
