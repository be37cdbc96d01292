package testns

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/vishvananda/netns"
)

// deadPid returns the pid of a process that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestSweepDeletesOnlyDeadProcessesNamespaces(t *testing.T) {
	RequireRoot(t)
	dead := strings.Replace(Name("na-test-"), "-"+itoa(os.Getpid())+"-", "-"+itoa(deadPid(t))+"-", 1)
	scripted := dead + "-up" // a script's derived name
	live := Name("na-test-")
	for _, n := range []string{dead, scripted, live} {
		makeNamed(t, n)
	}
	t.Cleanup(func() { netns.DeleteNamed(live) })
	sweep()
	for n, want := range map[string]bool{dead: false, scripted: false, live: true} {
		if _, err := os.Stat("/run/netns/" + n); (err == nil) != want {
			t.Errorf("after sweep, %s exists: %v, want %v", n, err == nil, want)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func makeNamed(t *testing.T, name string) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	ns, err := netns.NewNamed(name)
	if serr := netns.Set(orig); serr != nil {
		panic(serr)
	}
	if err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	ns.Close()
}

// TestRunNetnsIsAMountPoint: once New has run, /run/netns is a mount point
// of its own, so that a later `ip netns add` never mounts over (and hides)
// the namespaces New bound there.
func TestRunNetnsIsAMountPoint(t *testing.T) {
	New(t)
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == runNetns && f[3] == runNetns {
			return
		}
	}
	t.Errorf("%s is not a bind mount of its own:\n%s", runNetns, info)
}
