package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
)

// recordingDaemon answers every request with answer(req) on a unix socket
// and keeps the requests; it returns the socket's path and the requests
// seen so far.
func recordingDaemon(t *testing.T, answer func(api.Request) api.Response) (string, func() []api.Request) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var seen []api.Request
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var req api.Request
			json.NewDecoder(c).Decode(&req)
			mu.Lock()
			seen = append(seen, req)
			mu.Unlock()
			json.NewEncoder(c).Encode(answer(req))
			c.Close()
		}
	}()
	return path, func() []api.Request {
		mu.Lock()
		defer mu.Unlock()
		return append([]api.Request(nil), seen...)
	}
}

// daemonTrialState makes stateDir look like that of a daemon (this
// process, holding the lock, answering on socket) with a trial pending
// since started.
func daemonTrialState(t *testing.T, stateDir, socket string, started time.Time) {
	t.Helper()
	lk, _, err := host.TryLock(stateDir, host.Holder{PID: os.Getpid(), Command: "run", Socket: socket, Since: started})
	if err != nil || lk == nil {
		t.Fatalf("taking the lock: %v", err)
	}
	t.Cleanup(lk.Release)
	data, _ := json.Marshal(host.Trial{PID: os.Getpid(), Started: started, Deadline: started.Add(time.Hour)})
	if err := os.MkdirAll(filepath.Join(stateDir, host.TrialDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stateDir, host.TrialDir, "trial.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// `netagent rollback` and `netagent confirm` of a daemon's trial name the
// trial they found pending (its id is its start), so that a trial that
// ended meanwhile makes them fail (exit 1, the daemon's answer shown)
// instead of rolling a version back.
func TestTrialRequestsNameTheDaemonsTrial(t *testing.T) {
	started := time.Date(2026, 12, 1, 21, 0, 0, 123456789, time.FixedZone("X", 3600))
	for _, cmd := range []string{"rollback", "confirm"} {
		t.Run(cmd, func(t *testing.T) {
			ended := "trial " + status.TrialID(started) + ": " + api.ErrTrialEnded.Error() + ": it was confirmed at ...; no trial is pending"
			sock, seen := recordingDaemon(t, func(req api.Request) api.Response {
				if req.Trial == "" {
					return api.Response{Status: &status.Status{Version: 7}} // a rollback of versions "succeeds"
				}
				return api.Response{Error: ended, TrialEnded: &status.TrialOutcome{Result: "confirmed"}}
			})
			sd := t.TempDir()
			daemonTrialState(t, sd, sock, started)
			code, out, errOut := runCLI("--state-dir", sd, cmd)
			reqs := seen()
			if len(reqs) != 1 || reqs[0].Command != cmd || reqs[0].Trial != "2026-12-01T20:00:00.123456789Z" {
				t.Fatalf("the requests sent: %+v", reqs)
			}
			if code != exitFailed || !strings.Contains(errOut, ended) {
				t.Errorf("a trial that ended meanwhile: exit %d, want %d naming it\n%s%s", code, exitFailed, out, errOut)
			}
		})
	}
}
