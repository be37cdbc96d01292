package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/host"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// A command's own --netns picks that namespace's state directory unless
// --state-dir was given.
func TestKernelOptsStateDir(t *testing.T) {
	cases := []struct {
		globalNetns, stateDir, netns, want string
	}{
		{"", "/var/lib/netagent/host", "", "/var/lib/netagent/host"},
		{"", "/var/lib/netagent/host", "blue", "/var/lib/netagent/blue"},
		{"red", "/var/lib/netagent/red", "blue", "/var/lib/netagent/blue"},
		{"", "/tmp/state", "blue", "/tmp/state"},
		{"blue", "/var/lib/netagent/blue", "blue", "/var/lib/netagent/blue"},
	}
	for _, c := range cases {
		g := &globals{netns: c.globalNetns, stateDir: c.stateDir}
		if got := (&kernelOpts{netns: c.netns}).stateDir(g); got != c.want {
			t.Errorf("%+v: state dir %s", c, got)
		}
	}
}

// apply prints a summary on stdout and every item that did not converge,
// with why, on stderr; the exit code says which.
func TestReportApply(t *testing.T) {
	var out, errOut bytes.Buffer
	g := &globals{stdout: &out, stderr: &errOut}
	ops := reconciler.OperationLog{{Ref: dg.ItemRef{Type: "route", Name: "r"}, Op: reconciler.OpCreate}}
	if code := reportApply(g, &host.Result{Ops: ops}); code != exitOK || out.String() != "converged: 1 operation: 1 done, 0 failed, 0 blocked\n" {
		t.Errorf("converged: exit %d, %q", code, out.String())
	}
	out.Reset()
	res := &host.Result{Ops: ops, Err: errors.New("boom"), Problems: []host.Problem{
		{Ref: dg.ItemRef{Type: "route", Name: "r"}, Reason: "create failed: boom"},
		{Ref: dg.ItemRef{Type: "interface", Name: "eth0"}, Blocked: true, Reason: "waiting for link/eth0 (not in the intended state)"},
	}}
	if code := reportApply(g, res); code != exitFailed {
		t.Errorf("not converged: exit %d", code)
	}
	for _, want := range []string{"route/r: failed: create failed: boom\n", "interface/eth0: blocked: waiting for link/eth0"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q: %s", want, errOut.String())
		}
	}
	if !strings.Contains(out.String(), "not converged: 2 items failed or blocked (1 operation): 1 done, 0 failed, 1 blocked") {
		t.Errorf("stdout: %s", out.String())
	}
}
