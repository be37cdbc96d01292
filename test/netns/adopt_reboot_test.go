//go:build !vmtest

package netns_test

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shippedUnit is the unit netagent ships (systemd/netagent.service).
const shippedUnit = "../../systemd/netagent.service"

// TestAdoptReboot follows docs/migrating.md past apply --adopt, for every
// oracle case. The intent import wrote into the intent directory is
// adopted; the daemon, started as the shipped unit starts it (its
// ExecStartPre= and ExecStart= command lines, with the unit's paths
// moved into the test's directories, and NOTIFY_SOCKET as Type=notify
// has it), takes over the adopted namespace without a write (systemctl
// enable --now) and leaves it as it is on SIGTERM. Then the reboot: a
// fresh namespace with the same NICs, the old tool not run (its unit
// disabled), the same state directory: the unit's commands bring up the
// state the old tool made (oracleView), by netagent alone.
func TestAdoptReboot(t *testing.T) {
	unit := takeoverUnitCommands(t)
	for _, c := range oracleCases(t) {
		t.Run(c.name, func(t *testing.T) { takeoverReboot(t, unit, c) })
	}
}

// takeoverReboot runs the switch-over and the reboot of one case.
func takeoverReboot(t *testing.T, unit takeoverUnit, c oracleCase) {
	root := t.TempDir()
	dirs := takeoverUnitDirs(t, root)
	e := cliNewEnv(t)
	e.stateDir = dirs["/var/lib/netagent/host"]
	oracleStandIns(e, c.in)
	c.old(t, e)
	auto := autoPriorities(c.in)
	want := oracleView(e, auto)

	file := filepath.Join(dirs["/etc/netagent"], "host.json")
	e.mustRun(0, "import", c.source, "--out", file, c.file)
	if auto {
		takeoverKernelPriorities(t, e, file) // step 2's fix, as in TestAdoptSwitchover
	}
	e.mustRun(0, "apply", "--adopt", file)
	mon := takeoverStartMonitor(t, e)
	d := unit.start(t, e, dirs)
	if events := mon.until(); len(events) > 0 {
		t.Errorf("the daemon's first reconcile of the adopted namespace wrote:\n%s", strings.Join(events, "\n"))
	}
	d.stop(t)
	if diff := lineDiff(want, oracleView(e, auto)); diff != "" {
		t.Errorf("stopping the daemon changed the kernel (-: before, +: after):\n%s", diff)
	}

	// The reboot: the same NICs, nothing else; the old tool is disabled.
	b := cliNewEnv(t)
	b.stateDir = e.stateDir
	oracleStandIns(b, c.in)
	d = unit.start(t, b, dirs)
	defer d.stop(t)
	var got string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if got = oracleView(b, auto); got == want {
			return
		}
	}
	t.Errorf("after the reboot the kernel differs from the old tool's (-: the old tool's, +: netagent's):\n%s", lineDiff(want, got))
}

// takeoverUnit is the shipped unit's netagent commands: ExecStartPre= (the
// ones that run netagent) and ExecStart=.
type takeoverUnit struct {
	pre  [][]string
	main []string
}

// takeoverUnitCommands reads the shipped unit's command lines: it must be
// Type=notify, start `netagent ... run` and run no other program but
// netagent, bar privileged ("+") helpers.
func takeoverUnitCommands(t *testing.T) takeoverUnit {
	t.Helper()
	f, err := os.Open(shippedUnit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var u takeoverUnit
	notify := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		key, val, _ := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		switch {
		case key == "Type":
			notify = val == "notify"
		case key == "ExecStartPre" && !strings.HasPrefix(val, "+"):
			u.pre = append(u.pre, strings.Fields(val))
		case key == "ExecStart":
			u.main = strings.Fields(val)
		}
	}
	if !notify || len(u.main) < 2 || !strings.Contains(" "+strings.Join(u.main, " ")+" ", " run ") {
		t.Fatalf("%s: want Type=notify and ExecStart=netagent ... run ...: %v", shippedUnit, u.main)
	}
	return u
}

// takeoverUnitDirs are the unit's directories, each mapped to one under root.
func takeoverUnitDirs(t *testing.T, root string) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	for _, d := range []string{"/var/lib/netagent/host", "/etc/netagent", "/run/netagent"} {
		dirs[d] = filepath.Join(root, d)
		if err := os.MkdirAll(dirs[d], 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// argv is a unit command line for e: the binary the test built, --netns
// e's namespace, and every path of the unit's under dirs (a path the
// test does not know fails it: the test follows the unit).
func (u takeoverUnit) argv(t *testing.T, e *cliEnv, dirs map[string]string, line []string) []string {
	t.Helper()
	out := []string{e.bin, "--netns", e.tgt.Name}
	for _, a := range line[1:] {
		switch {
		case dirs[a] != "":
			a = dirs[a]
		case strings.HasPrefix(a, "/run/netagent/"):
			a = filepath.Join(dirs["/run/netagent"], strings.TrimPrefix(a, "/run/netagent/"))
		case strings.HasPrefix(a, "/"):
			t.Fatalf("the unit's command %v names %s, which the test does not map", line, a)
		}
		out = append(out, a)
	}
	if !strings.HasSuffix(line[0], "/netagent") {
		t.Fatalf("the unit runs %s, not netagent", line[0])
	}
	return out
}

// takeoverDaemon is the unit's ExecStart= running.
type takeoverDaemon struct {
	cmd    *exec.Cmd
	out    daemonLog
	exited chan struct{}
}

// start runs the unit's ExecStartPre= commands, then ExecStart= with
// NOTIFY_SOCKET, and waits for its READY=1, as systemd does for
// Type=notify.
func (u takeoverUnit) start(t *testing.T, e *cliEnv, dirs map[string]string) *takeoverDaemon {
	t.Helper()
	for _, line := range u.pre {
		argv := u.argv(t, e, dirs, line)
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("ExecStartPre %v: %v\n%s", argv, err, out)
		}
	}
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	argv := u.argv(t, e, dirs, u.main)
	d := &takeoverDaemon{cmd: exec.Command(argv[0], argv[1:]...), exited: make(chan struct{})}
	d.cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock)
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.exited) }()
	t.Cleanup(func() { d.kill() })
	buf := make([]byte, 4096)
	conn.SetReadDeadline(time.Now().Add(daemonWait))
	for {
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("no READY=1 from %v: %v\n%s", argv, err, d.out.String())
		}
		if strings.Contains("\n"+string(buf[:n]), "\nREADY=1\n") {
			return d
		}
	}
}

// stop ends the daemon as systemd stops the unit (SIGTERM): it must exit
// 0.
func (d *takeoverDaemon) stop(t *testing.T) {
	t.Helper()
	select {
	case <-d.exited:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
		if code := d.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("the daemon exited with %d on SIGTERM:\n%s", code, d.out.String())
		}
	case <-time.After(10 * time.Second):
		d.kill()
		t.Errorf("the daemon ignored SIGTERM for 10 s:\n%s", d.out.String())
	}
}

func (d *takeoverDaemon) kill() {
	select {
	case <-d.exited:
	default:
		d.cmd.Process.Kill()
		<-d.exited
	}
}
