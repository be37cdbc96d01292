package target

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
