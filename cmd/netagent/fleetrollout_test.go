//go:build !nofleet

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/etcdtest"
)

// fakeMembers writes a Ready status for each host, then confirms every
// trial pushed to its key, until the test ends.
func fakeMembers(t *testing.T, e *fleetEnv, hosts []string) {
	t.Helper()
	l := fleet.Layout{Prefix: "/fleet"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	write := func(st fleet.Status) {
		raw, _ := json.Marshal(st)
		cur, _ := e.st.Read(ctx, l.Status(st.Host))
		e.st.WriteCAS(ctx, l.Status(st.Host), raw, cur.Version)
	}
	for _, h := range hosts {
		write(fleet.Status{Host: h, Ready: true})
	}
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			for _, h := range hosts {
				en, err := e.st.Read(ctx, l.HostDoc(h, "dns.json"))
				if err != nil {
					continue
				}
				if _, _, err := member.ParseTrialEnvelope(en.Value); err != nil {
					continue
				}
				src := "hosts/" + h + "/dns.json"
				write(fleet.Status{Host: h, Ready: true, Trial: &fleet.Trial{Source: src, Revision: int64(en.Version), State: member.FleetTrialConfirmed}})
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

func TestFleetRolloutCLI(t *testing.T) {
	defer func(p time.Duration) { rolloutPoll = p }(rolloutPoll)
	rolloutPoll = 20 * time.Millisecond
	e := newFleetEnv(t, etcdtest.Options{})
	fakeMembers(t, e, []string{"h1", "h2", "h3", "h4", "h5"})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "dns.json"), []byte(fleetRoutes), 0o600)
	spec := func(id, gate string) string {
		p := filepath.Join(dir, id+".json")
		os.WriteFile(p, fmt.Appendf(nil, `{"rollout": %q, "document": "dns.json", "intent": "dns.json", "waves": [
			{"name": "canary", "hosts": ["h1"]}, %s {"name": "rest", "percent": 100, "concurrency": 2}]}`, id, gate), 0o600)
		return p
	}
	code, out, errOut := e.fleet("rollout", "start", "--follow", spec("r1", ""))
	if code != exitOK || !strings.Contains(out, "r1: completed") {
		t.Fatalf("start --follow: exit %d\n%s%s", code, out, errOut)
	}
	if _, ok := e.keys(t)["/fleet/rollouts/r1/lease"]; ok {
		t.Error("the controller that ended left its lease")
	}
	code, out, _ = e.fleet("rollout", "status", "r1", "--json")
	var sums []struct {
		Phase string
		Waves []struct{ Counts map[string]int }
	}
	if json.Unmarshal([]byte(out), &sums); code != exitOK || len(sums) != 1 || sums[0].Phase != "completed" ||
		sums[0].Waves[0].Counts["confirmed"] != 1 || sums[0].Waves[1].Counts["confirmed"] != 4 {
		t.Fatalf("status --json: exit %d %s", code, out)
	}
	gated := spec("r2", `{"name": "gate", "approvalRequired": true},`)
	if code, out, _ := e.fleet("rollout", "start", gated); code != exitOK || !strings.Contains(out, "rollout r2 (dns.json): running") {
		t.Fatalf("start: exit %d %s", code, out)
	}
	if code, out, _ := e.fleet("rollout", "approve", "r2"); code != exitOK || !strings.Contains(out, "running") {
		t.Fatalf("approve: exit %d %s", code, out)
	}
	if code, out, _ := e.fleet("rollout", "abort", "r2"); code != exitOK || !strings.Contains(out, "aborting") {
		t.Fatalf("abort: exit %d %s", code, out)
	}
	if code, out, errOut := e.fleet("rollout", "start", "--follow", gated); code != exitFailed || !strings.Contains(out, "r2: aborted") {
		t.Fatalf("start --follow of an aborted rollout: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := e.fleet("rollout", "status"); code != exitOK || !strings.Contains(out, "rollout r1 (dns.json): completed") ||
		!strings.Contains(out, "rollout r2 (dns.json): aborted") {
		t.Fatalf("status: exit %d %s", code, out)
	}
	if code, _, errOut := e.fleet("rollout", "halt", "nope"); code != exitFailed || !strings.Contains(errOut, "no such rollout") {
		t.Errorf("halt of a missing rollout: exit %d %s", code, errOut)
	}
	if code, _, errOut := e.fleet("rollout", "start", spec("r1", `{"name": "gate", "approvalRequired": true},`)); code != exitFailed ||
		!strings.Contains(errOut, "differ") {
		t.Errorf("start of another r1: exit %d %s", code, errOut)
	}
}

func TestFleetControllerAndExcludeUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fleet", "controller", "--etcd-endpoints", "http://x", "--poll", "1ms"}, "--poll: at least 10ms"},
		{[]string{"fleet", "controller", "--etcd-endpoints", "http://x", "extra"}, "unexpected arguments"},
		{[]string{"fleet", "controller"}, "--etcd-endpoints is required"},
		{[]string{"fleet", "rollout", "exclude", "--etcd-endpoints", "http://x", "r1"}, "exclude ID HOST"},
	} {
		code, _, errOut := runCLI(c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, want %d and %q\n%s", c.args, code, exitUsage, c.want, errOut)
		}
	}
}
