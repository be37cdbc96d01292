// Package testns makes throwaway named network namespaces for privileged
// tests. Each test gets its own namespace, removed in t.Cleanup; no test
// ever changes the namespace it runs in.
package testns

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// RequireRoot fails the test unless it runs as root. Privileged tests are
// part of the README's test command, which runs as root; a developer who
// runs `go test` as a normal user gets a skip that says why.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces (run scripts/test.sh as root)")
	}
}

// New creates a named namespace "na-test-<pid>-<random>" with lo up and
// returns it opened as a Target. The namespace is deleted when the test
// ends; one left by a test process that died first (a -timeout panic, a
// kill) is deleted by the next New (see sweep).
func New(t testing.TB) *netnsx.Target {
	t.Helper()
	RequireRoot(t)
	sweepOnce.Do(func() {
		if err := SharedRunNetns(); err != nil {
			t.Fatal(err)
		}
		sweep()
	})
	name := Name("na-test-")
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("saving namespace: %v", err)
	}
	ns, err := netns.NewNamed(name) // switches this thread into it
	if serr := netns.Set(orig); serr != nil {
		panic("testns: cannot return to the original namespace: " + serr.Error())
	}
	orig.Close()
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	ns.Close()
	t.Cleanup(func() {
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
	tgt, err := netnsx.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tgt.Close)
	lo, err := tgt.NL.LinkByName("lo")
	if err != nil {
		t.Fatalf("lo in %s: %v", name, err)
	}
	if err := tgt.NL.LinkSetUp(lo); err != nil {
		t.Fatalf("lo up in %s: %v", name, err)
	}
	return tgt
}

// Exec runs a command inside the namespace (ip netns exec) and returns its
// combined output, failing the test on error.
func Exec(t testing.TB, tgt *netnsx.Target, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", tgt.Name, name}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v in %s: %v\n%s", name, args, tgt.Name, err, out)
	}
	return string(out)
}

// Name returns a fresh name for a namespace a test makes some other way
// (a script, say): prefix, the test process's pid and a random suffix. The
// test deletes it; if the process dies first, sweep does.
func Name(prefix string) string {
	return fmt.Sprintf("%s%d-%s", prefix, os.Getpid(), randomSuffix())
}

// runNetns is where named namespaces are bound (iproute2's NETNS_RUN_DIR).
const runNetns = "/run/netns"

// SharedRunNetns makes /run/netns a shared mount point of its own, as
// `ip netns add` does the first time it runs. Named namespaces are bind
// mounts in it: one made (by netns.NewNamed, which does not do this) while
// /run/netns is a plain directory is hidden, and can never be deleted,
// once a later `ip netns add` mounts /run/netns over itself. It is
// idempotent; scripts/setup.sh does the same before any test runs, so
// that test processes starting at once do not race for it.
func SharedRunNetns() error {
	if err := os.MkdirAll(runNetns, 0o755); err != nil {
		return fmt.Errorf("testns: %w", err)
	}
	err := unix.Mount("", runNetns, "none", unix.MS_SHARED|unix.MS_REC, "")
	if errors.Is(err, unix.EINVAL) { // not a mount point yet
		if err = unix.Mount(runNetns, runNetns, "none", unix.MS_BIND|unix.MS_REC, ""); err == nil {
			err = unix.Mount("", runNetns, "none", unix.MS_SHARED|unix.MS_REC, "")
		}
	}
	if err != nil {
		return fmt.Errorf("testns: making %s a shared mount point: %w", runNetns, err)
	}
	return nil
}

// leftover matches the names Name makes ("na-<word>-<pid>-<random>"), and
// the names a script derives from one by appending "-<anything>".
var leftover = regexp.MustCompile(`^na-[a-z]+-([0-9]+)-[0-9a-f]{8}(-.*)?$`)

var sweepOnce sync.Once

// sweep deletes the namespaces that Name named for a test process that no
// longer runs: its cleanups never ran. Namespaces of live processes (other
// packages' tests running at the same time) are left alone.
func sweep() {
	entries, err := os.ReadDir(runNetns)
	if err != nil {
		return
	}
	for _, e := range entries {
		m := leftover.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if pid, err := strconv.Atoi(m[1]); err == nil && !alive(pid) {
			netns.DeleteNamed(e.Name())
		}
	}
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

func randomSuffix() string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
