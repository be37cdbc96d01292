package vm

import (
	"reflect"
	"strings"
	"testing"
)

func TestConsoleParsesMarkersAndTestLines(t *testing.T) {
	out := strings.Join([]string{
		"SeaBIOS (version 1.16)",
		"[    0.1] kernel noise before the start: --- FAIL: NotATest",
		"NETAGENT-VM-EXIT-OTHER 0", // another run's nonce
		"",
		"NETAGENT-VM-START-N0NCE\r",
		"=== RUN   TestInVMA",
		"--- PASS: TestInVMA (0.01s)",
		"=== RUN   TestInVMB",
		"NETAGENT-VM-HOTADD-OTHER nicX", // another run's nonce: not a request
		"    nics_vm_test.go:10: NETAGENT-VM-HOTADD-N0NCE hot0",
		"    --- PASS: TestInVMB/sub (0.00s)",
		"    --- SKIP: TestInVMB/other (0.00s)",
		"--- FAIL: TestInVMB (0.02s)",
		"FAIL",
		"NETAGENT-VM-EXIT-N0NCE 1",
		"[    4.2] reboot: Power down",
	}, "\n")
	c := newConsole(t, "N0NCE", nil)
	var hot []string
	c.hotAdd = func(id string) { hot = append(hot, id) }
	c.read(strings.NewReader("NETAGENT-VM-HOTADD-N0NCE early\n" + out)) // before the start: not a request
	res := c.result()
	if !reflect.DeepEqual(hot, []string{"hot0"}) {
		t.Errorf("hot-add requests = %q, want [hot0]", hot)
	}
	if res.ExitCode != 1 {
		t.Errorf("exit code %d, want 1", res.ExitCode)
	}
	for name, pair := range map[string][2][]string{
		"passed":  {res.Passed, {"TestInVMA", "TestInVMB/sub"}},
		"failed":  {res.Failed, {"TestInVMB"}},
		"skipped": {res.Skipped, {"TestInVMB/other"}},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s = %q, want %q", name, pair[0], pair[1])
		}
	}
	if strings.Contains(res.Output, "\r") || !strings.Contains(res.Output, "SeaBIOS") {
		t.Errorf("output should keep every line without carriage returns:\n%s", res.Output)
	}
	if res.Boot <= 0 || c.setupErr != nil {
		t.Errorf("boot time %v, setup error %v; want a start time and no error", res.Boot, c.setupErr)
	}
}

func TestConsoleReportsSetupFailure(t *testing.T) {
	c := newConsole(t, "N0NCE", nil)
	c.read(strings.NewReader("insmod: can't insert 'x.ko': invalid module format\nNETAGENT-VM-SETUP-FAILED: insmod x\n"))
	if c.setupErr == nil || !strings.Contains(c.setupErr.Error(), "insmod x") {
		t.Errorf("setup error = %v, want one naming insmod x", c.setupErr)
	}
	if c.result().ExitCode != -1 {
		t.Errorf("exit code %d, want -1 for a binary that never ran", c.result().ExitCode)
	}
}

func TestTopLevelDropsSubtests(t *testing.T) {
	if got := topLevel([]string{"TestA", "TestA/x", "TestB"}); !reflect.DeepEqual(got, []string{"TestA", "TestB"}) {
		t.Errorf("topLevel = %q", got)
	}
}
