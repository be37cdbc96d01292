//go:build !vmtest

package netns_test

import (
	"net"
	"os"
	"testing"
)

// TestAgentDaemonSIGTERMRemovesTheSocket stops the daemon with SIGTERM
// again and again: every time, the socket must be gone when the process has
// exited (the socket used to be removed by a goroutine that raced the exit,
// and was left behind about one stop in three on a loaded machine). stop
// checks it.
func TestAgentDaemonSIGTERMRemovesTheSocket(t *testing.T) {
	e := daemonNewEnv(t)
	for range 30 {
		e.start()
		e.stop()
		if t.Failed() {
			return
		}
	}
}

// TestAgentDaemonReplacesAStaleSocket: a daemon killed with SIGKILL leaves
// its socket; the next daemon replaces it, while a second daemon on a live
// socket refuses to start.
func TestAgentDaemonReplacesAStaleSocket(t *testing.T) {
	e := daemonNewEnv(t)
	e.start()
	second := e.command()
	if out, err := second.CombinedOutput(); err == nil {
		t.Errorf("a second daemon on a live socket started:\n%s", out)
	}
	if _, err := net.Dial("unix", e.socket); err != nil {
		t.Fatalf("the second daemon broke the first one's socket: %v", err)
	}
	e.cmd.Process.Kill()
	<-e.exited
	e.cmd = nil
	if _, err := os.Stat(e.socket); err != nil {
		t.Fatalf("SIGKILL: the socket is not left behind (%v): the test proves nothing", err)
	}
	e.start() // waits for the daemon to answer
	e.stop()
}
