package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestSweepRemovesOnlyDeadProcessesBinaries(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(tmp, fmt.Sprintf("netagent-testbin-%d-123", cmd.Process.Pid))
	live := filepath.Join(tmp, fmt.Sprintf("netagent-testbin-%d-456", os.Getpid()))
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sweep()
	if _, err := os.Stat(dead); err == nil {
		t.Errorf("%s (its process ended) is still there", dead)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s (a live process's) was removed: %v", live, err)
	}
}
