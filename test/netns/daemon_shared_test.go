package netns_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/status"
)

// What the daemon tests on the host (agent_daemon_helpers_test.go) and in
// the VM (agent_daemon_match_vm_test.go) share.

// item finds an item in a status.
func daemonItem(st status.Status, ref string) (status.ItemStatus, bool) {
	for _, it := range st.Items {
		if it.Item == ref {
			return it, true
		}
	}
	return status.ItemStatus{}, false
}

// daemonLog collects the daemon's JSON log lines.
type daemonLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *daemonLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *daemonLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// entries returns the log lines whose fields include every key=value of
// match.
func (l *daemonLog) entries(match map[string]string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(l.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if daemonMatches(e, match) {
			out = append(out, e)
		}
	}
	return out
}

func daemonMatches(e map[string]any, match map[string]string) bool {
	for k, v := range match {
		got, _ := e[k].(string)
		if !strings.Contains(got, v) {
			return false
		}
	}
	return true
}

// pollDaemon polls cond every step until it holds, for at most d; cond
// says what it saw. The daemon exiting (exited closed) or the time
// running out fails t, with the daemon's log.
func pollDaemon(t *testing.T, d, step time.Duration, exited <-chan struct{}, logs *daemonLog, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	var seen string
	for time.Now().Before(deadline) {
		var ok bool
		if ok, seen = cond(); ok {
			return
		}
		select {
		case <-exited:
			t.Fatalf("the daemon exited while waiting for %s\n%s", what, logs.String())
		case <-time.After(step):
		}
	}
	t.Fatalf("timed out after %v waiting for %s; last seen: %s\ndaemon log:\n%s", d, what, seen, logs.String())
}

// stopDaemon ends the daemon cmd (exited is closed when its Wait
// returns): SIGTERM, and SIGKILL if it lingers past grace. t fails unless
// it exited 0 within grace.
func stopDaemon(t *testing.T, cmd *exec.Cmd, exited <-chan struct{}, logs *daemonLog, grace time.Duration) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("the daemon exited with %d after SIGTERM\n%s", code, logs.String())
		}
	case <-time.After(grace):
		cmd.Process.Kill()
		<-exited
		t.Errorf("the daemon ignored SIGTERM for %v\n%s", grace, logs.String())
	}
}
