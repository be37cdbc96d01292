//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gnft "github.com/google/nftables"
	"golang.org/x/sys/unix"
)

// nftTableNow is `nft -j list table inet netagent` without what a
// re-creation renumbers (handles) and the metainfo: "" when there is no
// such table.
func (e *daemonEnv) nftTableNow() string {
	e.t.Helper()
	out, err := exec.Command("ip", "netns", "exec", e.tgt.Name, "nft", "-j", "list", "table", "inet", "netagent").Output()
	if err != nil {
		return ""
	}
	var doc struct {
		Nftables []map[string]map[string]any `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		e.t.Fatalf("nft -j list table: %v\n%s", err, out)
	}
	var objs []string
	for _, o := range doc.Nftables {
		if _, ok := o["metainfo"]; ok {
			continue
		}
		for _, v := range o {
			delete(v, "handle")
		}
		b, _ := json.Marshal(o)
		objs = append(objs, string(b))
	}
	return strings.Join(objs, "\n")
}

// nftTablePresent asks the kernel over netlink (cheaper than running nft,
// so that the latency measured is the daemon's, not the poll's) whether
// the table inet netagent is there.
func (e *daemonEnv) nftTablePresent() bool {
	e.t.Helper()
	c, err := gnft.New(gnft.WithNetNSFd(int(e.tgt.NsHandle())))
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = c.ListTableOfFamily("netagent", gnft.TableFamilyINet)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		e.t.Fatal(err)
	}
	return err == nil
}

// nftStartDaemon starts the daemon with the edge router's table (its file
// saying drift, "" for none) and returns the table as nft lists it, once
// the drift check that verifies the first reconcile is past: a change
// before it is read as the kernel not keeping netagent's write.
func (e *daemonEnv) nftStartDaemon(drift string) string {
	e.t.Helper()
	doc := nftEdgeIntent
	if drift != "" {
		doc = strings.Replace(doc, `{"version": 1,`, `{"version": 1, "drift": "`+drift+`",`, 1)
	}
	e.writeIntent("30-nft.json", doc)
	e.start("--drift-interval", "1m")
	want := e.nftTableNow()
	if !strings.Contains(want, `"masquerade"`) {
		e.t.Fatalf("the table after the start:\n%s", want)
	}
	e.waitForVerified()
	return want
}

// waitForVerified waits until the daemon's next drift check is the
// periodic one (a minute away), not the one that verifies a write.
func (e *daemonEnv) waitForVerified() {
	e.t.Helper()
	e.waitFor("the drift check that verifies the last write", func() (bool, string) {
		st, err := e.status()
		return err == nil && time.Until(st.NextDriftCheck) > 30*time.Second, st.NextDriftCheck.String()
	})
}

// waitRepaired polls (every 2 ms, over netlink) until the table is back,
// and returns how long that took from since.
func (e *daemonEnv) waitRepaired(since time.Time) time.Duration {
	e.t.Helper()
	for !e.nftTablePresent() {
		if time.Since(since) > daemonWait {
			e.t.Fatalf("the table was not repaired within %v\n%s", daemonWait, e.logs.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(since)
}

// TestAgentDaemonNftFlushRepaired: `nft flush ruleset`, 20 times, each
// after the daemon verified its last repair: each time the daemon puts
// the table back exactly as nft listed it before (handles aside), by its
// nftables event subscription (the periodic drift check is a minute
// away), and its own writes start no repair. The latencies are logged.
func TestAgentDaemonNftFlushRepaired(t *testing.T) {
	e := daemonNewEnv(t)
	want := e.nftStartDaemon("")
	var took []time.Duration
	for i := range 20 {
		start := time.Now() // before nft starts: its own run (a few ms) counts
		e.exec("nft", "flush ruleset")
		d := e.waitRepaired(start)
		took = append(took, d)
		if d > 3*time.Second {
			t.Errorf("flush %d: repaired after %v, want well within a second (3 s at most on a loaded machine)", i+1, d)
		}
		if got := e.nftTableNow(); got != want {
			t.Fatalf("flush %d: the table is back otherwise:\n got  %s\n want %s", i+1, got, want)
		}
		e.waitForVerified()
	}
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	t.Logf("repair after the start of nft flush ruleset, 20 times: median %v, max %v (all: %v)",
		(sorted[9]+sorted[10])/2, sorted[19], took)
	if n := len(e.logs.entries(map[string]string{"msg": "drift: repairing", "item": "nft-table/inet/netagent"})); n != 20 {
		t.Errorf("%d repairs logged, want 20 (one per flush, none for netagent's own writes)\n%s", n, e.logs.String())
	}
	if n := len(e.logs.entries(map[string]string{"msg": "not converging"})); n != 0 {
		t.Errorf("a flush taken for a fighting writer\n%s", e.logs.String())
	}
}

// TestAgentDaemonNftRuleDeleteRepaired: another writer deletes one rule
// of netagent's table; the daemon puts the table back as it was.
func TestAgentDaemonNftRuleDeleteRepaired(t *testing.T) {
	e := daemonNewEnv(t)
	want := e.nftStartDaemon("")
	var chain struct {
		Nftables []struct {
			Rule *struct {
				Handle int `json:"handle"`
			} `json:"rule"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal([]byte(e.exec("nft", "-j", "-a", "list", "chain", "inet", "netagent", "input")), &chain); err != nil {
		t.Fatal(err)
	}
	var handles []int
	for _, o := range chain.Nftables {
		if o.Rule != nil {
			handles = append(handles, o.Rule.Handle)
		}
	}
	if len(handles) != 2 {
		t.Fatalf("rules of the input chain: handles %v", handles)
	}
	start := time.Now()
	e.exec("nft", "delete", "rule", "inet", "netagent", "input", "handle", strconv.Itoa(handles[1]))
	e.waitForWithin(3*time.Second, "the deleted rule put back", func() (bool, string) {
		got := e.nftTableNow()
		return got == want, got
	})
	t.Logf("a deleted rule repaired after at most %v (polled with nft)", time.Since(start).Round(time.Millisecond))
	if len(e.logs.entries(map[string]string{"msg": "drift: repairing", "item": "nft-table/inet/netagent"})) != 1 {
		t.Errorf("the repair was not logged\n%s", e.logs.String())
	}
}

// TestAgentDaemonNftReportOnly: the table's file says "drift": "report".
// A flush is listed in status as drift and logged, and the table stays
// away.
func TestAgentDaemonNftReportOnly(t *testing.T) {
	e := daemonNewEnv(t)
	e.nftStartDaemon("report")
	e.exec("nft", "flush ruleset")
	e.waitFor("the flushed table listed as drifted", func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		for _, d := range st.Drifted {
			if d.Item == "nft-table/inet/netagent" {
				return true, ""
			}
		}
		return false, e.logs.String()
	})
	time.Sleep(1500 * time.Millisecond) // past any repair the events could ask for
	if e.nftTablePresent() {
		t.Errorf("a report table was repaired\n%s", e.logs.String())
	}
	if len(e.logs.entries(map[string]string{"msg": "drift: reporting, not repairing", "item": "nft-table/inet/netagent"})) != 1 {
		t.Errorf("the drift was not logged once\n%s", e.logs.String())
	}
}
