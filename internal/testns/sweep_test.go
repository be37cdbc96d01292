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
