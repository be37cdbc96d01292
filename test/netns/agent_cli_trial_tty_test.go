//go:build !vmtest

package netns_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the master, which plays the
// operator's terminal, and the slave, the process's stdin and stderr.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("the pty's number: %v", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, slave
}

// On a terminal, `netagent try` counts down and Enter confirms: exit 0,
// the trial's intent kept and recorded as a version. An Enter typed
// before the change (it came over the connection as it was before, so it
// proves nothing about the new one) does not confirm: the terminal's
// input is flushed when the trial starts waiting.
func TestTrialTerminalEnterConfirms(t *testing.T) {
	e := cliNewEnv(t)
	before := e.writeFile("before.json", `{"version": 1,
  "interfaces": [{"name": "br0", "type": "bridge", "addresses": ["10.0.0.1/24"]}]}`)
	e.mustRun(0, "apply", before)
	next := e.writeFile("next.json", `{"version": 1,
  "interfaces": [{"name": "br0", "type": "bridge", "addresses": ["10.0.1.1/24"]},
    {"name": "br9", "type": "bridge", "addresses": ["10.99.0.1/24"]}]}`)

	master, slave := openPTY(t)
	cmd := exec.Command(e.bin, "--state-dir", e.stateDir, "try", "--netns", e.tgt.Name, "--timeout", "60s", next)
	var out strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close() // the child holds it; reads of the master end when it exits
	// Typed ahead, during the apply: in the terminal's input queue.
	if _, err := master.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var term strings.Builder
	go func() {
		r := bufio.NewReader(master)
		entered := false
		for {
			b, err := r.ReadByte()
			if err != nil {
				done <- nil // EIO: the child closed the terminal
				return
			}
			term.WriteByte(b)
			if !entered && strings.Contains(term.String(), "reverting in") && strings.Contains(term.String(), "(Enter confirms)") {
				entered = true
				if _, err := master.Write([]byte("\n")); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	err := cmd.Wait()
	if err := <-done; err != nil {
		t.Fatalf("typing Enter: %v", err)
	}
	if err != nil {
		t.Fatalf("try on a terminal: %v\nstdout:\n%s\nterminal:\n%s", err, out.String(), term.String())
	}
	for _, s := range []string{"confirm with `netagent confirm` or Enter before", "reverting in"} {
		if !strings.Contains(term.String(), s) {
			t.Errorf("the terminal does not show %q:\n%s", s, term.String())
		}
	}
	if !strings.Contains(out.String(), "confirmed: confirmed on the terminal") {
		t.Errorf("stdout:\n%s", out.String())
	}
	if res := e.netagent("check", next); res.code != 0 {
		t.Errorf("the confirmed trial is not in the kernel: %s", res)
	}
	if h := e.mustRun(0, "history"); !strings.Contains(h.stdout, "try ") {
		t.Errorf("history does not show the confirmed trial:\n%s", h)
	}
	if _, err := os.Stat(e.stateDir + "/trial/trial.json"); err == nil {
		t.Error("the trial is still pending")
	}
}
