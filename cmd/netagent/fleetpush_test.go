//go:build !nofleet

package main

import (
	"testing"

	"github.com/netagent/netagent/internal/etcdtest"
)

// A changed group document pushed under another file name conflicts with
// the one it was meant to replace: the refusal names that document and
// the --name that replaces it, and the push under that name succeeds.
func TestBinaryFleetPushReplaceHint(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	base := writeIntent(t, "base.json", fleetBase)
	if code, _, errOut := runBinary(t, append([]string{"fleet", "push", "--group", "edge", base}, e.args...)...); code != exitOK {
		t.Fatalf("push: exit %d\n%s", code, errOut)
	}
	changed := writeIntent(t, "base-v2.json", `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "mtu": 9000}]}`)
	code, out, errOut := runBinary(t, append([]string{"fleet", "push", "--group", "edge", changed}, e.args...)...)
	want := changed + `: interfaces[0]: interface "eth0" is also defined at interfaces[0] in groups/edge/base.json` + "\n" +
		`groups/edge/base.json: interfaces[0]: interface "eth0" is also defined at interfaces[0] in ` + changed + "\n" +
		"netagent: invalid intent: 2 problems; nothing was changed\n" +
		"netagent: hint: to replace groups/edge/base.json with " + changed + ", push it under that name: netagent fleet push --group edge --name base.json " + changed + "\n"
	if code != exitFailed || out != "" || errOut != want {
		t.Errorf("push of a changed document under another name: exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr:\n%s", code, out, errOut, want)
	}
	if code, _, errOut := runBinary(t, append([]string{"fleet", "push", "--group", "edge", "--name", "base.json", changed}, e.args...)...); code != exitOK {
		t.Errorf("push --name base.json: exit %d\n%s", code, errOut)
	}
}
