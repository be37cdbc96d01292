package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A second writer finds the lock held and by whom; a reader sees the
// holder without waiting; a wait that ends names the holder; the lock is
// free again once released.
func TestLockOneWriter(t *testing.T) {
	dir := t.TempDir()
	me := Holder{PID: os.Getpid(), Command: "run", Socket: "/run/netagent/netagent.sock", Since: time.Now()}
	lk, h, err := TryLock(dir, me)
	if err != nil || lk == nil || h != nil {
		t.Fatalf("first TryLock: %v, %v, %v", lk, h, err)
	}
	other := Holder{PID: 1, Command: "apply"}
	if lk2, h, err := TryLock(dir, other); err != nil || lk2 != nil || h == nil || h.PID != me.PID || !h.Daemon() {
		t.Fatalf("second TryLock: %v, %+v, %v", lk2, h, err)
	}
	if h, err := HolderOf(dir); err != nil || h == nil || h.Socket != me.Socket {
		t.Fatalf("HolderOf: %+v, %v", h, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = WaitLock(ctx, dir, other)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d, socket %s", me.PID, me.Socket)) {
		t.Fatalf("WaitLock on a held lock: %v", err)
	}

	// A wait ends when a one-shot holder lets go (a daemon would hold it
	// for its life: WaitLock stops at one, see TestWaitLockStopsAtADaemon).
	lk.Release()
	lk, _, err = TryLock(dir, Holder{PID: os.Getpid(), Command: "apply"})
	if err != nil || lk == nil {
		t.Fatalf("TryLock of a one-shot holder: %v, %v", lk, err)
	}
	got := make(chan error, 1)
	go func() {
		lk2, err := WaitLock(context.Background(), dir, other)
		if err == nil {
			lk2.Release()
		}
		got <- err
	}()
	lk.Release()
	if err := <-got; err != nil {
		t.Fatalf("WaitLock after the release: %v", err)
	}
	if h, err := HolderOf(dir); err != nil || h != nil {
		t.Fatalf("HolderOf a free lock: %+v, %v", h, err)
	}
}

// lockHelperEnv makes the test binary a lock holder (TestLockHelperProcess).
const lockHelperEnv = "NETAGENT_LOCK_HELPER_DIR"

// TestLockHelperProcess is not a test: run by TestLockKilledHolder as a
// process that takes the lock, says so and waits to be killed.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv(lockHelperEnv)
	if dir == "" {
		t.Skip("a helper process of TestLockKilledHolder")
	}
	if _, err := WaitLock(context.Background(), dir, Holder{PID: os.Getpid(), Command: "apply"}); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("locked")
	select {}
}

// A holder killed with SIGKILL leaves no stale lock: the kernel releases
// the flock, and the lock file's stale content is not believed.
func TestLockKilledHolder(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("the holder said %q", line)
	}
	if _, h, err := TryLock(dir, Holder{PID: os.Getpid()}); err != nil || h == nil || h.PID != cmd.Process.Pid {
		t.Fatalf("while held by %d: holder %+v, %v", cmd.Process.Pid, h, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if h, err := HolderOf(dir); err != nil || h != nil {
		t.Fatalf("HolderOf after the kill: %+v, %v", h, err)
	}
	// The file still names the dead holder: while a reader's probe holds
	// the lock for a moment, a writer does not take it for the holder.
	probe, err := syscall.Open(dir+"/"+LockFile, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(probe, syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, h, err := TryLock(dir, Holder{PID: os.Getpid()}); err != nil || h == nil || h.PID != 0 {
		t.Fatalf("TryLock during a probe: %+v, %v (the dead holder is %d)", h, err, cmd.Process.Pid)
	}
	syscall.Close(probe)
	lk, h, err := TryLock(dir, Holder{PID: os.Getpid()})
	if err != nil || lk == nil {
		t.Fatalf("TryLock after the kill: %+v, %v", h, err)
	}
	lk.Release()
}

// A wait for the lock ends at once when a daemon holds it: a daemon holds
// it for its life. The error names the daemon.
func TestWaitLockStopsAtADaemon(t *testing.T) {
	dir := t.TempDir()
	daemon := Holder{PID: os.Getpid(), Command: "run", Socket: "/run/netagent/netagent.sock"}
	lk, _, err := TryLock(dir, daemon)
	if err != nil || lk == nil {
		t.Fatal(err)
	}
	defer lk.Release()
	_, err = WaitLock(context.Background(), dir, Holder{PID: os.Getpid(), Command: "apply"})
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || le.Holder.Socket != daemon.Socket {
		t.Fatalf("WaitLock with a daemon holding the lock: %v", err)
	}
}

// TestLockRefusesAStateDirOthersCanChange: a state directory owned by
// another user, or writable by its group or others, is refused with the
// reason (its owner could plant the lock or forge records), and nothing is
// made in it.
func TestLockRefusesAStateDirOthersCanChange(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: chown to nobody")
	}
	cases := []struct {
		name  string
		setup func(dir string) error
		why   string
	}{
		{"owned by nobody", func(dir string) error { return os.Chown(dir, 65534, 65534) }, "is owned by uid 65534, not by root"},
		{"group-writable", func(dir string) error { return os.Chmod(dir, 0o770) }, "is writable by its group (mode 0770)"},
		{"world-writable", func(dir string) error { return os.Chmod(dir, 0o777) }, "is writable by group and others (mode 0777)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := c.setup(dir); err != nil {
				t.Fatal(err)
			}
			lk, h, err := TryLock(dir, Holder{PID: os.Getpid(), Command: "apply"})
			if err == nil || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "state directory "+dir) {
				lk.Release()
				t.Fatalf("TryLock: %v, %v, %v; want a refusal naming %s and %q", lk, h, err, dir, c.why)
			}
			if _, err := HolderOf(dir); err == nil {
				t.Error("HolderOf believed a lock file in a directory others can change")
			}
			if _, err := os.Lstat(filepath.Join(dir, LockFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a lock file was made in the refused directory: %v", err)
			}
		})
	}
}

// TestLockNotFollowedThroughAPlantedLink: a `lock` planted as a symbolic
// link to a root-only file is not opened through: TryLock fails naming
// it, and the file it points at is unchanged.
func TestLockNotFollowedThroughAPlantedLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "shadow")
	const content = "root:$6$secret:19000:0:99999:7:::\n"
	if err := os.WriteFile(victim, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, LockFile)); err != nil {
		t.Fatal(err)
	}
	lk, _, err := TryLock(dir, Holder{PID: os.Getpid(), Command: "apply"})
	if err == nil {
		lk.Release()
	}
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("TryLock over a planted link: %v, want a refusal naming the symbolic link", err)
	}
	if _, err := HolderOf(dir); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("HolderOf over a planted link: %v, want a refusal", err)
	}
	if got, _ := os.ReadFile(victim); string(got) != content {
		t.Errorf("the link's target was written through: %q", got)
	}
}
