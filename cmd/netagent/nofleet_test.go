package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/member"
)

// noFleet reports whether a test's command line is fleet's and this
// build has none (go test -tags nofleet).
func noFleet(args []string) bool { return !member.Built && slices.Contains(args, "fleet") }

// goTool is the go command of the toolchain running the tests.
func goTool() string { return filepath.Join(runtime.GOROOT(), "bin", "go") }

// listDeps returns the packages netagent is built from with the tags,
// each with its imports (go list -deps).
func listDeps(t *testing.T, tags string) map[string][]string {
	t.Helper()
	cmd := exec.Command(goTool(), "list", "-deps", "-tags", tags, "-json=ImportPath,Imports", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -tags %q: %v\n%s", tags, err, stderr.String())
	}
	pkgs := map[string][]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs[p.ImportPath] = p.Imports
	}
	return pkgs
}

// fleetOnly are the modules a build without the fleet leaves out.
func fleetOnly(pkg string) bool {
	return strings.Contains(pkg, "etcd") || strings.Contains(pkg, "grpc")
}

// The build tag nofleet leaves the etcd client and gRPC out of the binary
// (docs/binary-size.md). Protobuf stays only as the daemon's metrics'
// dependency (prometheus/client_model is protobuf-generated): no package
// but protobuf's own and prometheus's imports it.
func TestNoFleetBuildLeavesOutEtcdAndGRPC(t *testing.T) {
	full := listDeps(t, "")
	if !slices.ContainsFunc(slices.Collect(maps.Keys(full)), fleetOnly) {
		t.Fatal("the default build has no etcd or grpc package: the test would prove nothing")
	}
	pkgs := listDeps(t, "nofleet")
	for pkg, imports := range pkgs {
		if fleetOnly(pkg) {
			t.Errorf("-tags nofleet still links %s", pkg)
		}
		if strings.HasPrefix(pkg, "google.golang.org/protobuf/") || strings.HasPrefix(pkg, "github.com/prometheus/") {
			continue
		}
		for _, imp := range imports {
			if strings.Contains(imp, "protobuf") {
				t.Errorf("-tags nofleet: %s imports %s (protobuf is for prometheus's metrics only)", pkg, imp)
			}
		}
	}
}

// A netagent built with -tags nofleet says so for fleet and for run's
// fleet member (exit 2), and does everything else.
func TestNoFleetBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds netagent")
	}
	bin := filepath.Join(t.TempDir(), "netagent")
	build := exec.Command(goTool(), "build", "-tags", "nofleet", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags nofleet: %v\n%s", err, out)
	}
	const msg = "this netagent was built without the fleet (build tag nofleet)"
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"fleet", "list"}, exitUsage, "netagent fleet: " + msg + "\n"},
		{[]string{"fleet", "push", "--host", "h1", "x.json"}, exitUsage, "netagent fleet: " + msg + "\n"},
		{[]string{"run", "--etcd-endpoints", "http://127.0.0.1:1", "--state-dir", t.TempDir()}, exitUsage,
			"netagent run: --etcd-endpoints: " + msg + "\nRun 'netagent run --help' for its usage.\n"},
		{[]string{"run", "--intent-dir", t.TempDir(), "--group", "g1"}, exitUsage,
			"netagent run: --group: " + msg + "\nRun 'netagent run --help' for its usage.\n"},
		{[]string{"version"}, exitOK, ""},
		{[]string{"validate", "../../examples/gateway.json"}, exitOK, ""},
	} {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, c.args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := 0
		if err := cmd.Run(); err != nil {
			ee := (*exec.ExitError)(nil)
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		if code != c.code || stderr.String() != c.stderr {
			t.Errorf("netagent %s: exit %d, stderr %q; want exit %d, stderr %q", strings.Join(c.args, " "), code, stderr.String(), c.code, c.stderr)
		}
		if c.code == exitOK && stdout.Len() == 0 {
			t.Errorf("netagent %s printed nothing", strings.Join(c.args, " "))
		}
	}
}
