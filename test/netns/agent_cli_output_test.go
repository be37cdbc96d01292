//go:build !vmtest

package netns_test

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/status"
)

// apply prints each operation it ran, with what it does to traffic, and a
// summary; check --all --json then lists every item as ok.
func TestAgentCLIApplyPrintsOperationsAndCheckAllJSON(t *testing.T) {
	e := cliNewEnv(t)
	res := e.mustRun(0, "apply", cliGatewayFile)
	for _, want := range []string{"  1. create ", "       traffic: ", "converged: 18 operations: 18 done, 0 failed, 0 blocked in "} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("apply output lacks %q\n%s", want, res)
		}
	}
	if n := strings.Count(res.stdout, "traffic: "); n != 18 {
		t.Errorf("%d traffic lines, want one per operation\n%s", n, res)
	}
	res = e.mustRun(0, "check", cliGatewayFile, "--all", "--json")
	var doc struct {
		Format    int            `json:"format"`
		Converged bool           `json:"converged"`
		Counts    map[string]int `json:"counts"`
		Items     []struct {
			Item, State string
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("check --all --json: %v\n%s", err, res)
	}
	if doc.Format != 1 || !doc.Converged || len(doc.Items) == 0 || doc.Counts["ok"] != len(doc.Items) {
		t.Errorf("check --all --json after apply: %+v", doc)
	}
	e.ip("link", "set", "uplink0", "mtu", "1400") // not netagent's: no difference
	e.ip("addr", "flush", "dev", "br-lan")
	res = e.mustRun(1, "check", cliGatewayFile, "--all")
	if !strings.Contains(res.stdout, " ok ") || !strings.Contains(res.stdout, " missing ") {
		t.Errorf("check --all after flushing br-lan's addresses:\n%s", res)
	}
}

// status --watch follows the daemon: the uplink losing its carrier shows
// as a link event, the route through it as blocked, its file as not
// converged; and the way back.
func TestAgentDaemonStatusWatchSeesALinkGoDown(t *testing.T) {
	e := daemonNewEnv(t)
	e.converge()
	cmd := exec.Command(e.bin, "status", "--watch", "--json", "--socket", e.socket)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	events := make(chan api.Event, 100)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<22)
		for sc.Scan() {
			var ev api.Event
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				events <- ev
			}
		}
	}()
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("status --watch after SIGINT: %v", err)
		}
	}()
	// await finds an event among all those seen so far, then waits for
	// more: the events of one change come in one batch, in no order
	// that matters here.
	var seen []api.Event
	await := func(what string, match func(api.Event) bool) {
		t.Helper()
		timeout := time.After(daemonWait)
		for i := 0; ; i++ {
			for ; i < len(seen); i++ {
				if match(seen[i]) {
					return
				}
			}
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("the stream ended before %s; seen %v", what, seen)
				}
				seen = append(seen, ev)
			case <-timeout:
				t.Fatalf("no event %s; seen %v\n%s", what, seen, e.logs.String())
			}
			i--
		}
	}
	await("status first", func(ev api.Event) bool { return ev.Kind == api.EventStatus && ev.Status != nil && ev.Status.Ready })
	e.ip("link", "set", "uplink0-peer", "down")
	await("for uplink0's carrier", func(ev api.Event) bool {
		return ev.Kind == api.EventLink && ev.Link == "uplink0" && ev.From == "up" && ev.To != "up"
	})
	await("for the route", func(ev api.Event) bool {
		return ev.Kind == api.EventItem && strings.HasPrefix(ev.Item, "route/") && ev.To == status.StateBlocked
	})
	e.ip("link", "set", "uplink0-peer", "up")
	await("for the way back", func(ev api.Event) bool { return ev.Kind == api.EventReady && ev.To == "true" })
}
