//go:build !vmtest

package netns_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// adoptHandMade configures the namespace by hand, as another tool would:
// a bridge br-a with the veth va (peer vap) as its port, addresses on
// br-a and on the uplink, a route, a rule with the route of its table, a
// permanent neighbour (all of which adoptIntentJSON names, as they are),
// and on the uplink an address, a route and a rule that no intent names.
func adoptHandMade(ip func(args ...string) string) {
	for _, args := range [][]string{
		{"link", "add", "br-a", "type", "bridge"},
		{"link", "add", "va", "type", "veth", "peer", "name", "vap"},
		{"link", "set", "va", "master", "br-a"},
		{"link", "set", "br-a", "up"}, {"link", "set", "va", "up"}, {"link", "set", "vap", "up"},
		{"addr", "add", "10.77.0.1/24", "dev", "br-a"},
		{"addr", "add", "192.0.2.10/24", "dev", "uplink0"},
		{"route", "add", "172.30.0.0/16", "via", "192.0.2.1", "dev", "uplink0", "proto", "static"},
		{"route", "add", "default", "via", "192.0.2.1", "dev", "uplink0", "table", "77", "proto", "static"},
		{"rule", "add", "priority", "550", "from", "10.77.0.0/24", "lookup", "77", "proto", "static"},
		{"neigh", "add", "10.77.0.9", "lladdr", "02:00:00:00:77:09", "dev", "br-a", "nud", "permanent"},
		// Not in the intent: they stay someone else's.
		{"addr", "add", "198.18.0.1/24", "dev", "uplink0"},
		{"route", "add", "172.31.0.0/16", "via", "198.18.0.254", "dev", "uplink0", "proto", "static"},
		{"rule", "add", "priority", "560", "from", "198.18.0.0/24", "lookup", "78", "proto", "static"},
	} {
		ip(args...)
	}
}

const adoptIntentJSON = `{"version": 1,
 "interfaces": [
  {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]},
  {"name": "br-a", "type": "bridge", "addresses": ["10.77.0.1/24"]},
  {"name": "va", "type": "veth", "veth": {"peer": "vap"}, "master": "br-a"}
 ],
 "routes": [{"to": "172.30.0.0/16", "via": "192.0.2.1", "dev": "uplink0"},
            {"to": "default", "via": "192.0.2.1", "dev": "uplink0", "table": 77}],
 "rules": [{"priority": 550, "from": "10.77.0.0/24", "table": 77}],
 "neighbors": [{"dev": "br-a", "ip": "10.77.0.9", "mac": "02:00:00:00:77:09"}]
}`

// adoptMonitor runs `ip monitor` on the namespace's links, addresses,
// routes, rules and neighbours; stop ends it after a sentinel route's
// event (every event before it has been read) and returns the lines.
func adoptMonitor(t *testing.T, netns string, ip func(args ...string) string) (stop func() []string) {
	t.Helper()
	cmd := exec.Command("ip", "-n", netns, "monitor", "link", "address", "route", "rule", "neigh")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		lines []string
	)
	sentinel := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			if strings.Contains(sc.Text(), "203.0.113.77") {
				close(sentinel)
				return
			}
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	time.Sleep(200 * time.Millisecond) // ip monitor subscribes after it starts
	return func() []string {
		ip("route", "add", "203.0.113.77/32", "dev", "uplink0")
		select {
		case <-sentinel:
		case <-time.After(10 * time.Second):
			t.Fatal("ip monitor never showed the sentinel route")
		}
		ip("route", "del", "203.0.113.77/32", "dev", "uplink0")
		mu.Lock()
		defer mu.Unlock()
		return lines
	}
}

// adoptDeletions are the deletions among the lines of ip monitor but the
// sentinel's and those of rules of priority 550 (a rule's adoption adds
// netagent's copy, then deletes theirs): rules counts those.
func adoptDeletions(lines []string) (deleted []string, rules int) {
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "Deleted 550:"):
			rules++
		case strings.HasPrefix(l, "Deleted") && !strings.Contains(l, "203.0.113.77"):
			deleted = append(deleted, l)
		}
	}
	return deleted, rules
}

// TestAgentCLIAdopt: over objects another tool made (by hand, with ip),
// `plan --adopt` lists only adoptions ("adopt (mark only)", in the text
// and as "adopt": "mark only" in the JSON, exit 0) where a plain plan
// refuses them; `apply --adopt` (which prints them so too) under `ip
// monitor` deletes nothing but the
// replaced rule's old copy (a rule has no in-place replace: netagent's
// copy is added first); a second apply without --adopt writes nothing;
// an empty intent then removes exactly the adopted objects, and the
// objects no intent names stay as they were throughout.
func TestAgentCLIAdopt(t *testing.T) {
	e := cliNewEnv(t)
	adoptHandMade(e.ip)
	file := e.writeFile("adopt.json", adoptIntentJSON)
	theirs := func() string {
		return e.ip("addr", "show", "dev", "uplink0", "to", "198.18.0.0/24") + e.ip("route", "show", "172.31.0.0/16") +
			e.ip("rule", "show", "priority", "560")
	}
	unnamed := theirs()

	if res := e.netagent("plan", file); res.code != 1 || !strings.Contains(res.stdout, "not owned by netagent") {
		t.Errorf("plan without --adopt: %s", res)
	}
	text := e.mustRun(0, "plan", "--adopt", file).stdout
	res := e.mustRun(0, "plan", "--adopt", "--json", file)
	var doc struct {
		Operations []struct{ Op, Item, Adopt string }
		Problems   []any
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("plan --adopt --json: %v\n%s", err, res.stdout)
	}
	const want = 9 // 2 addresses, br-a, va, its port, 2 routes, the rule, the neighbour
	if len(doc.Operations) != want || len(doc.Problems) > 0 {
		t.Errorf("plan --adopt: %d operations (want %d), problems %v:\n%s", len(doc.Operations), want, doc.Problems, text)
	}
	for _, o := range doc.Operations {
		if o.Op != "create" || o.Adopt != "mark only" {
			t.Errorf("plan --adopt --json: %s %s adopt %q, want an adoption, mark only", o.Op, o.Item, o.Adopt)
		}
	}
	if n := strings.Count(text, "adopt (mark only) "); n != want {
		t.Errorf("plan --adopt prints %d \"adopt (mark only)\" lines, want %d:\n%s", n, want, text)
	}

	stop := adoptMonitor(t, e.tgt.Name, e.ip)
	applied := e.mustRun(0, "apply", "--adopt", file).stdout
	if n := strings.Count(applied, "adopt (mark only) "); n != want {
		t.Errorf("apply --adopt prints %d \"adopt (mark only)\" lines, want %d:\n%s", n, want, applied)
	}
	deleted, rules := adoptDeletions(stop())
	t.Logf("deletions seen during apply --adopt: %d (and the rule's old copy: %d)", len(deleted), rules)
	if len(deleted) > 0 || rules != 1 {
		t.Errorf("ip monitor during apply --adopt: deletions %q, rule copies deleted %d (want none, and one)", deleted, rules)
	}
	for _, check := range []struct{ args, want string }{
		{"addr show dev br-a", "10.77.0.1/24"},
		{"route show 172.30.0.0/16", "proto 211"},
		{"route show table 77", "proto 211"},
		{"rule show priority 550", "proto 211"},
		{"neigh show dev br-a nud permanent", "proto 211"},
		{"link show dev br-a", "alias netagent"},
		{"link show dev va", "alias netagent"},
		{"link show dev vap", "alias netagent"},
	} {
		if out := e.ip(strings.Fields(check.args)...); !strings.Contains(out, check.want) {
			t.Errorf("after apply --adopt, ip %s: %q, want %q", check.args, out, check.want)
		}
	}
	if out := e.ip("rule", "show", "priority", "550"); strings.Count(out, "\n") != 1 {
		t.Errorf("rules of priority 550 after the adoption:\n%s", out)
	}
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
	if got := theirs(); got != unnamed {
		t.Errorf("the unnamed objects changed:\n%s\nwant\n%s", got, unnamed)
	}

	e.mustRun(0, "apply", e.writeFile("empty.json", `{"version": 1}`))
	for _, l := range []string{"br-a", "va", "vap"} {
		if out, err := exec.Command("ip", "-n", e.tgt.Name, "link", "show", "dev", l).CombinedOutput(); err == nil {
			t.Errorf("%s is still there after the intent went: %s", l, out)
		}
	}
	for _, gone := range [][]string{
		{"addr", "show", "dev", "uplink0", "to", "192.0.2.0/24"}, {"route", "show", "172.30.0.0/16"},
		{"route", "show", "table", "77"}, {"rule", "show", "priority", "550"},
	} {
		if out := e.ip(gone...); strings.TrimSpace(out) != "" {
			t.Errorf("ip %v after the intent went: %q, want nothing", gone, out)
		}
	}
	if got := theirs(); got != unnamed {
		t.Errorf("the unnamed objects changed when the intent went:\n%s\nwant\n%s", got, unnamed)
	}
}

// TestAgentCLITryAdoptReverted: `try --adopt` that is not confirmed
// (--timeout 0s) reverts without deleting what it adopted: under `ip
// monitor`, the trial and its revert delete nothing but the replaced
// rule's old copy, and every adopted object is there after the revert as
// it was found (netagent's now: its before-image in the journal is the
// object found, not "absent").
func TestAgentCLITryAdoptReverted(t *testing.T) {
	e := cliNewEnv(t)
	adoptHandMade(e.ip)
	file := e.writeFile("adopt.json", adoptIntentJSON)
	view := func() string {
		return e.ip("-br", "link", "show", "master", "br-a") + e.ip("-br", "addr", "show", "dev", "br-a") +
			e.ip("-br", "addr", "show", "dev", "uplink0") + e.ip("route", "show", "172.30.0.0/16") +
			e.ip("route", "show", "table", "77") + e.ip("rule", "show", "priority", "550") + e.ip("neigh", "show", "nud", "permanent")
	}
	strip := func(s string) string { return strings.NewReplacer(" proto static", "", " proto 211", "").Replace(s) }
	before := view()
	stop := adoptMonitor(t, e.tgt.Name, e.ip)
	if res := e.trialRun(nil, "--adopt", "--timeout", "0s", file); res.code != 6 {
		t.Fatalf("try --adopt --timeout 0s: want exit 6 (not confirmed, reverted): %s", res)
	}
	deleted, _ := adoptDeletions(stop())
	t.Logf("deletions seen during try --adopt and its revert: %d", len(deleted))
	if len(deleted) > 0 {
		t.Errorf("ip monitor during try --adopt and its revert: deletions %q", deleted)
	}
	if after := view(); strip(after) != strip(before) {
		t.Errorf("after the revert:\n%s\nbefore the trial:\n%s", after, before)
	}
}

// TestAgentCLIAdoptDiffers: objects at the intent's places that differ
// from it are taken over and changed, in place where the kernel can: a
// route of another gateway ("adopt and modify", atomic: replaced, never
// deleted), a bridge that is down ("adopt and modify": set up), and a rule
// `ip rule` added without a protocol (0, which a delete request of the
// rule would match in any rule: theirs goes, as it comes before ours).
func TestAgentCLIAdoptDiffers(t *testing.T) {
	e := cliNewEnv(t)
	for _, args := range [][]string{
		{"link", "add", "br-a", "type", "bridge"},
		{"addr", "add", "192.0.2.10/24", "dev", "uplink0"},
		{"route", "add", "172.30.0.0/16", "via", "192.0.2.2", "dev", "uplink0", "proto", "static"},
		{"rule", "add", "priority", "550", "from", "10.77.0.0/24", "lookup", "77"},
	} {
		e.ip(args...)
	}
	file := e.writeFile("adopt.json", `{"version": 1,
	 "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]}, {"name": "br-a", "type": "bridge"}],
	 "routes": [{"to": "172.30.0.0/16", "via": "192.0.2.1", "dev": "uplink0"}],
	 "rules": [{"priority": 550, "from": "10.77.0.0/24", "table": 77}]}`)
	res := e.mustRun(0, "plan", "--adopt", "--json", file)
	var doc struct {
		Operations []struct {
			Item, Adopt string
			Disruption  struct{ Effect string }
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("plan --adopt --json: %v\n%s", err, res.stdout)
	}
	want := map[string]string{"route/main 172.30.0.0/16 metric 0": "modify atomic", "interface/br-a": "modify none",
		"address/uplink0/192.0.2.10/24": "mark only none", "rule/ipv4 550: from 10.77.0.0/24 lookup 77": "mark only none"}
	got := map[string]string{}
	for _, o := range doc.Operations {
		got[o.Item] = o.Adopt + " " + o.Disruption.Effect
	}
	if len(got) != len(want) {
		t.Errorf("plan --adopt: %v, want %v", got, want)
	}
	for item, w := range want {
		if got[item] != w {
			t.Errorf("plan --adopt of %s: %q, want %q", item, got[item], w)
		}
	}
	stop := adoptMonitor(t, e.tgt.Name, e.ip)
	e.mustRun(0, "apply", "--adopt", file)
	if deleted, _ := adoptDeletions(stop()); len(deleted) > 0 {
		t.Errorf("ip monitor during apply --adopt: deletions %q", deleted)
	}
	if out := e.ip("route", "show", "172.30.0.0/16"); !strings.Contains(out, "via 192.0.2.1") || !strings.Contains(out, "proto 211") {
		t.Errorf("the route after the adoption: %q", out)
	}
	if out := e.ip("rule", "show", "priority", "550"); strings.Count(out, "\n") != 1 || !strings.Contains(out, "proto 211") {
		t.Errorf("the rules of priority 550 after the adoption:\n%s", out)
	}
	if flags, _ := e.link("br-a")["flags"].([]any); !slices.Contains(flags, any("UP")) {
		t.Errorf("br-a after the adoption is not up: %v", flags)
	}
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
}

// TestDaemonRunAdopt: `netagent run --adopt` over objects made by hand
// takes them over in its first reconcile (ip monitor: no deletion but the
// rule's old copy; every object marked), and adopts nothing afterwards: a
// route someone adds later where a new intent file puts one stays theirs,
// its item failing as not owned.
func TestDaemonRunAdopt(t *testing.T) {
	e := daemonNewEnv(t)
	adoptHandMade(e.ip)
	e.writeIntent("10-adopt.json", adoptIntentJSON)
	stop := adoptMonitor(t, e.tgt.Name, e.ip)
	e.start("--adopt")
	deleted, rules := adoptDeletions(stop())
	t.Logf("deletions seen during the daemon's first reconcile: %d (and the rule's old copy: %d)", len(deleted), rules)
	if len(deleted) > 0 || rules != 1 {
		t.Errorf("ip monitor during run --adopt's start: deletions %q, rule copies deleted %d (want none, and one)", deleted, rules)
	}
	for _, check := range []struct{ args, want string }{
		{"route show 172.30.0.0/16", "proto 211"}, {"rule show priority 550", "proto 211"},
		{"neigh show dev br-a nud permanent", "proto 211"}, {"link show dev br-a", "alias netagent"},
	} {
		if out := e.ip(strings.Fields(check.args)...); !strings.Contains(out, check.want) {
			t.Errorf("after run --adopt's start, ip %s: %q, want %q", check.args, out, check.want)
		}
	}
	e.ip("route", "add", "172.29.0.0/16", "via", "192.0.2.1", "dev", "uplink0", "proto", "static")
	e.writeIntent("20-later.json", `{"version": 1, "routes": [{"to": "172.29.0.0/16", "via": "192.0.2.1", "dev": "uplink0"}]}`)
	e.waitFor("the later route's item to fail as not owned", func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		it, ok := daemonItem(st, "route/main 172.29.0.0/16 metric 0")
		return ok && strings.Contains(it.LastError, "not owned by netagent"), fmt.Sprintf("%+v", it)
	})
	if out := e.ip("route", "show", "172.29.0.0/16"); !strings.Contains(out, "proto static") {
		t.Errorf("the route added after the start: %q, want it theirs still", out)
	}
}
