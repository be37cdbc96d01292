//go:build !vmtest

package vm

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// script writes a shell script that stands in for a test binary: the VM runs
// /test/test.bin through the kernel, so a #! script works as well as an ELF.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fake.test")
	must(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755))
	return path
}

// TestVMReportsFailures runs a fake test binary that fails one test, and
// checks that the arguments arrive intact and the result names the failure.
func TestVMReportsFailures(t *testing.T) {
	bin := script(t, `for a in "$@"; do echo "arg<$a>"; done
echo "=== RUN   TestInVMGood"
echo "--- PASS: TestInVMGood (0.00s)"
echo "--- FAIL: TestInVMBad (0.00s)"
for m in 8021q bonding dummy veth bridge macvlan vxlan; do [ -d /sys/module/$m ] && echo "loaded<$m>"; done
[ -e /sys/class/net/bond0 ] && echo "bonding made bond0 despite max_bonds=0"
exit 1
`)
	res := RunTestBinary(t, bin, "-test.run=^TestInVM", "it's two words")
	for _, want := range []string{"arg<-test.v>", "arg<-test.run=^TestInVM>", "arg<it's two words>",
		"loaded<8021q>", "loaded<bonding>", "loaded<dummy>", "loaded<veth>", "loaded<bridge>", "loaded<macvlan>", "loaded<vxlan>"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("console lacks %q", want)
		}
	}
	if strings.Contains(res.Output, "made bond0") {
		t.Error("bonding was loaded without max_bonds=0")
	}
	if res.ExitCode != 1 || !reflect.DeepEqual(res.Failed, []string{"TestInVMBad"}) {
		t.Errorf("exit code %d, failed %q; want 1 and [TestInVMBad]", res.ExitCode, res.Failed)
	}
	r := record(t, func(tb testing.TB) { checkTests(tb, res, "^TestInVM") })
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "TestInVMBad failed") {
		t.Errorf("checkTests errors = %q, want one for TestInVMBad", r.errors)
	}
}

// TestVMTimeoutKillsQEMU gives a VM that never powers off a short timeout.
func TestVMTimeoutKillsQEMU(t *testing.T) {
	bin := script(t, "sleep 3600\n")
	start := time.Now()
	r := record(t, func(tb testing.TB) { Config{Timeout: 3 * time.Second}.RunTestBinary(tb, bin) })
	if !strings.Contains(r.fatal, "still running after 3s, killed it") {
		t.Errorf("fatal = %q, want the timeout named", r.fatal)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("run took %v; the 3s timeout did not stop it", d)
	}
}

func TestCheckTestsWantsAPass(t *testing.T) {
	r := record(t, func(tb testing.TB) { checkTests(tb, Result{}, "^TestInVMNone") })
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], `no in-VM test matched "^TestInVMNone"`) {
		t.Errorf("checkTests errors = %q, want one saying nothing matched", r.errors)
	}
	r = record(t, func(tb testing.TB) { checkTests(tb, Result{Skipped: []string{"TestInVMX"}}, "^TestInVM") })
	if len(r.errors) == 0 || !strings.Contains(r.errors[0], "TestInVMX skipped") {
		t.Errorf("checkTests errors = %q, want one for the skip", r.errors)
	}
}
