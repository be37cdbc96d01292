package oneshot

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"path/filepath"
	"testing"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
)

// answering is a daemon on a unix socket that answers each request with
// answer(req); it returns the daemon as a holder.
func answering(t *testing.T, answer func(api.Request) api.Response) host.Holder {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for c, err := ln.Accept(); err == nil; c, err = ln.Accept() {
			var req api.Request
			if json.NewDecoder(c).Decode(&req) == nil {
				json.NewEncoder(c).Encode(answer(req))
			}
			c.Close()
		}
	}()
	return host.Holder{PID: 1, Command: "run", Socket: sock}
}

// The outcome of plan, check and rollback through the daemon is decided
// from its answer: something blocked or failing does not converge; an
// error answer is a *DaemonRefusedError, no daemon a *DaemonCallError, a
// file not read its *fs.PathError.
func TestViaDaemonOutcomes(t *testing.T) {
	files := []string{"../../examples/gateway.json"}
	blocked := api.Response{Blocked: []api.BlockedItem{{Item: "route/x", Reason: "waiting"}}, Status: &status.Status{}}
	h := answering(t, func(req api.Request) api.Response {
		if req.Command == api.CmdCheck {
			return api.Response{Status: &status.Status{}}
		}
		return blocked
	})
	if _, o, err := PlanViaDaemon(h, files); err != nil || o != NotConverged {
		t.Errorf("plan with an item blocked: %v, %v", o, err)
	}
	if _, o, err := CheckViaDaemon(h, files); err != nil || o != Converged {
		t.Errorf("check with nothing differing: %v, %v", o, err)
	}
	if _, o, err := RollbackViaDaemon(h, 3); err != nil || o != NotConverged {
		t.Errorf("rollback with an item blocked: %v, %v", o, err)
	}
	refusing := answering(t, func(api.Request) api.Response { return api.Response{Error: "no", Conflict: true} })
	var refused *DaemonRefusedError
	if _, _, err := PlanViaDaemon(refusing, files); !errors.As(err, &refused) || !refused.Resp.Conflict {
		t.Errorf("an error answer: %v", err)
	}
	gone := host.Holder{Socket: filepath.Join(t.TempDir(), "none.sock")}
	if _, err := CallDaemon(t.Context(), gone, api.CmdPlan, files); !errors.As(err, new(*DaemonCallError)) {
		t.Errorf("no daemon: %v", err)
	}
	if _, err := CallDaemon(t.Context(), gone, api.CmdPlan, []string{"missing.json"}); !errors.As(err, new(*fs.PathError)) {
		t.Errorf("a missing file: %v", err)
	}
}
