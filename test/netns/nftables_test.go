//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nftEdgeIntent is an edge router's firewall in netagent's own table:
// input policy drop, established/related accepted, ssh from a management
// set, masquerade out of uplink0.
const nftEdgeIntent = `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}],
  "nftables": {"tables": [{"family": "inet", "name": "netagent",
    "sets": [{"name": "mgmt", "type": "ipv4_addr", "interval": true, "elements": ["192.0.2.0/24", "198.51.100.7"]}],
    "chains": [
      {"name": "input", "type": "filter", "hook": "input", "priority": "filter", "policy": "drop", "rules": [
        {"ctState": ["established", "related"], "verdict": "accept"},
        {"saddr": "@mgmt", "protocol": "tcp", "dport": "22", "counter": true, "verdict": "accept"}]},
      {"name": "post", "type": "nat", "hook": "postrouting", "priority": "srcnat", "rules": [
        {"oifname": "uplink0", "masquerade": true}]}]}]}}`

// nftJSON runs `nft -j list ...` in the namespace and returns its objects
// ("nftables" array members), each as {"kind": {...}}.
func nftJSON(e *cliEnv, args ...string) []map[string]json.RawMessage {
	e.t.Helper()
	var out struct {
		Nftables []map[string]json.RawMessage `json:"nftables"`
	}
	if err := json.Unmarshal([]byte(e.exec("nft", append([]string{"-j", "list"}, args...)...)), &out); err != nil {
		e.t.Fatalf("nft -j list %v: %v", args, err)
	}
	return out.Nftables
}

// nftForeign returns `nft -j list ruleset` without netagent's table
// inet/netagent and without the metainfo, as one string.
func nftForeign(e *cliEnv) string {
	e.t.Helper()
	var keep []string
	for _, o := range nftJSON(e, "ruleset") {
		if _, ok := o["metainfo"]; ok {
			continue
		}
		b, _ := json.Marshal(o)
		for _, raw := range o {
			var obj struct{ Family, Table, Name string }
			json.Unmarshal(raw, &obj)
			if obj.Family == "inet" && (obj.Table == "netagent" || obj.Name == "netagent" && obj.Table == "") {
				b = nil
			}
		}
		if b != nil {
			keep = append(keep, string(b))
		}
	}
	return strings.Join(keep, "\n")
}

// The intent's table is in the kernel as the intent means it, read with
// nft (the oracle, not netagent's own read-back); a second apply writes
// nothing; foreign tables and iptables-nft's rules stay byte for byte;
// removing the section deletes the table.
func TestNftablesApply(t *testing.T) {
	e := cliNewEnv(t)
	e.exec("nft", "add table inet other; add chain inet other in { type filter hook input priority 10; policy drop; }; add rule inet other in tcp dport 80 accept")
	e.exec("iptables-nft", "-A", "INPUT", "-s", "203.0.113.0/24", "-j", "ACCEPT")
	foreign := nftForeign(e)
	if !strings.Contains(foreign, `"other"`) || !strings.Contains(foreign, "203.0.113.0") {
		t.Fatalf("the foreign ruleset lacks the table or the iptables rule:\n%s", foreign)
	}

	file := e.writeFile("nft.json", nftEdgeIntent)
	e.mustRun(0, "apply", file)

	got := nftTableLines(e, "inet", "netagent")
	wantChains := []string{
		`{"family":"inet","name":"netagent-owned","table":"netagent"}`,
		`{"family":"inet","hook":"input","name":"input","policy":"drop","prio":0,"table":"netagent","type":"filter"}`,
		`{"family":"inet","hook":"postrouting","name":"post","policy":"accept","prio":100,"table":"netagent","type":"nat"}`,
	}
	wantRules := []string{
		`input [{"match":{"left":{"ct":{"key":"state"}},"op":"in","right":["established","related"]}},{"accept":null}]`,
		`input [{"match":{"left":{"payload":{"field":"saddr","protocol":"ip"}},"op":"==","right":"@mgmt"}},{"match":{"left":{"payload":{"field":"dport","protocol":"tcp"}},"op":"==","right":22}},{"counter":{"bytes":0,"packets":0}},{"accept":null}]`,
		`post [{"match":{"left":{"meta":{"key":"oifname"}},"op":"==","right":"uplink0"}},{"masquerade":null}]`,
	}
	wantSets := []string{`set {"elem":[{"prefix":{"addr":"192.0.2.0","len":24}},"198.51.100.7"],"flags":["interval"],"name":"mgmt","type":"ipv4_addr"}`}
	want := append(append(wantChains, wantRules...), wantSets...)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("nft -j list table inet netagent:\n got  %s\n want %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}

	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply wrote: %s", res)
	}
	if got := nftForeign(e); got != foreign {
		t.Errorf("foreign ruleset changed by the apply:\n before %s\n after  %s", foreign, got)
	}

	e.mustRun(0, "apply", e.writeFile("off.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}]}`))
	if out := e.exec("nft", "list", "tables"); strings.Contains(out, "netagent") {
		t.Errorf("table still there after the section's removal: %s", out)
	}
	if got := nftForeign(e); got != foreign {
		t.Errorf("foreign ruleset changed by the removal:\n before %s\n after  %s", foreign, got)
	}
}

// A table of the intent's family and name that netagent did not make is
// a clash: the apply fails on it and leaves it as it was.
func TestNftablesClash(t *testing.T) {
	e := cliNewEnv(t)
	e.exec("nft", "add table inet netagent; add chain inet netagent mine { type filter hook input priority 0; }; add rule inet netagent mine udp dport 53 accept")
	before := e.exec("nft", "-j", "list", "table", "inet", "netagent")
	res := e.netagent("apply", e.writeFile("nft.json", nftEdgeIntent))
	if res.code == 0 || !strings.Contains(res.stdout+res.stderr, "is not netagent's") {
		t.Errorf("apply over a hand-made table: want a clash, got %s", res)
	}
	if after := e.exec("nft", "-j", "list", "table", "inet", "netagent"); after != before {
		t.Errorf("hand-made table changed:\n before %s\n after  %s", before, after)
	}
}

// nftRecord is the state directory's record of the tables netagent made
// ("" when there is none).
func nftRecord(e *cliEnv) string {
	b, err := os.ReadFile(filepath.Join(e.stateDir, "nftables.json"))
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	return string(b)
}

// plan predicts the clash with a table of the intent's family and name
// that someone else made (here an empty one, made with `nft add table`)
// exactly as apply meets it; apply refuses it and changes nothing, in the
// ruleset or the record of netagent's tables; show --all lists the table
// as foreign.
func TestNftablesPlanClash(t *testing.T) {
	e := cliNewEnv(t)
	e.exec("nft", "add table inet netagent")
	before := e.exec("nft", "-j", "list", "ruleset")
	file := e.writeFile("nft.json", nftEdgeIntent)
	res := e.netagent("plan", file)
	if res.code != 1 || !strings.Contains(res.stdout, "nft-table inet/netagent") || !strings.Contains(res.stdout, "is not netagent's (no chain netagent-owned)") ||
		!strings.Contains(res.stdout, "1 item would not converge") {
		t.Errorf("plan over someone's table: want the predicted clash, got %s", res)
	}
	var doc struct {
		Operations []struct{ Item, Error string }
	}
	jres := e.netagent("plan", "--json", file)
	if err := json.Unmarshal([]byte(jres.stdout), &doc); err != nil || len(doc.Operations) == 0 ||
		!strings.Contains(doc.Operations[len(doc.Operations)-1].Error, "is not netagent's") {
		t.Errorf("plan --json: %v, %s", err, jres)
	}
	ares := e.netagent("apply", file)
	if ares.code == 0 || !strings.Contains(ares.stdout+ares.stderr, "is not netagent's") {
		t.Errorf("apply over someone's table: want the clash, got %s", ares)
	}
	if after := e.exec("nft", "-j", "list", "ruleset"); after != before {
		t.Errorf("the ruleset changed:\n before %s\n after  %s", before, after)
	}
	if rec := nftRecord(e); strings.Contains(rec, `"netagent"`) {
		t.Errorf("the refused table was recorded as netagent's: %s", rec)
	}
	if show := e.mustRun(0, "show", "--all"); !strings.Contains(show.stdout, "foreign nft-table inet/netagent (left alone)") {
		t.Errorf("show --all does not list the foreign table: %s", show)
	}
}

// A table netagent made is recorded in the state directory; once someone
// deletes it and makes their own of the same name, plan, apply and show
// --all report it as netagent's table that lost its mark, and leave it
// alone; after the operator deletes it, apply makes netagent's again, and
// the section's removal deletes the table and its record.
func TestNftablesMarkLost(t *testing.T) {
	e := cliNewEnv(t)
	file := e.writeFile("nft.json", nftEdgeIntent)
	e.mustRun(0, "apply", file)
	if rec := nftRecord(e); !strings.Contains(rec, `"family":"inet","name":"netagent"`) {
		t.Fatalf("record after the create: %q", rec)
	}
	e.exec("nft", "delete table inet netagent; add table inet netagent; add chain inet netagent theirs")
	before := e.exec("nft", "-j", "list", "ruleset")
	for _, cmd := range []string{"plan", "apply"} {
		res := e.netagent(cmd, file)
		if res.code == 0 || !strings.Contains(res.stdout+res.stderr, "was made by netagent") || !strings.Contains(res.stdout+res.stderr, "has lost its mark chain") {
			t.Errorf("%s over a recorded table without its mark: %s", cmd, res)
		}
	}
	if after := e.exec("nft", "-j", "list", "ruleset"); after != before {
		t.Errorf("the ruleset changed:\n before %s\n after  %s", before, after)
	}
	show := e.mustRun(0, "show", "--all")
	if !strings.Contains(show.stdout, "foreign nft-table inet/netagent: made by netagent") {
		t.Errorf("show --all: %s", show)
	}
	var all struct {
		Foreign []struct{ Kind, Object, MarkLost string }
	}
	if err := json.Unmarshal([]byte(e.mustRun(0, "show", "--all", "--json").stdout), &all); err != nil ||
		!slices.ContainsFunc(all.Foreign, func(f struct{ Kind, Object, MarkLost string }) bool {
			return f.Kind == "nft-table" && f.Object == "inet/netagent" && f.MarkLost != ""
		}) {
		t.Errorf("show --all --json: %v, %+v", err, all.Foreign)
	}
	e.exec("nft", "delete table inet netagent")
	e.mustRun(0, "apply", file)
	if out := e.exec("nft", "list", "table", "inet", "netagent"); !strings.Contains(out, "netagent-owned") {
		t.Errorf("netagent's table not made again: %s", out)
	}
	e.mustRun(0, "apply", e.writeFile("off.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}]}`))
	if rec := nftRecord(e); strings.Contains(rec, `"netagent"`) {
		t.Errorf("record after the delete: %q", rec)
	}
}

// plan warns of other owners' base chains on netagent's hooks that drop
// (iptables-nft's INPUT with policy drop, an inet table's drop rule),
// naming each, its priority and whether it runs before or after
// netagent's, as text and in plan --json; not of a chain that only
// accepts or of another hook. show --all lists their tables as foreign,
// and the plan changes nothing.
func TestNftablesPlanWarnings(t *testing.T) {
	e := cliNewEnv(t)
	e.exec("iptables-nft", "-P", "INPUT", "DROP")
	e.exec("nft", "add table inet other; add chain inet other in { type filter hook input priority -5; policy accept; }; add rule inet other in tcp dport 23 drop; "+
		"add chain inet other ok { type filter hook input priority 5; policy accept; }; add rule inet other ok accept; "+
		"add chain inet other forw { type filter hook forward priority 0; policy drop; }")
	before := e.exec("nft", "-j", "list", "ruleset")
	file := e.writeFile("nft.json", nftEdgeIntent)
	res := e.mustRun(0, "plan", file)
	for _, want := range []string{
		"~  warning: nftables: another owner's base chain ip/filter INPUT (type filter, hook input, priority 0) has policy drop; it runs at the same priority as netagent's",
		"~  warning: nftables: another owner's base chain inet/other in (type filter, hook input, priority -5) drops or rejects in 1 of its 1 rules; it runs before netagent's chain inet/netagent input (priority 0)",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "inet/other ok") || strings.Contains(res.stdout, "inet/other forw") {
		t.Errorf("plan warns of a chain that only accepts or of another hook:\n%s", res.stdout)
	}
	var doc struct {
		Warnings []struct{ Item, Text string }
	}
	if err := json.Unmarshal([]byte(e.mustRun(0, "plan", "--json", file).stdout), &doc); err != nil || len(doc.Warnings) != 2 ||
		doc.Warnings[0].Item != "nft-table/inet/netagent" || !strings.Contains(doc.Warnings[1].Text, "KEP-3866") {
		t.Errorf("plan --json warnings: %v, %+v", err, doc.Warnings)
	}
	show := e.mustRun(0, "show", "--all")
	for _, want := range []string{"foreign nft-table inet/other", "foreign nft-table ip/filter"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show --all lacks %q:\n%s", want, show.stdout)
		}
	}
	if after := e.exec("nft", "-j", "list", "ruleset"); after != before {
		t.Errorf("plan or show changed the ruleset:\n before %s\n after  %s", before, after)
	}
}

// A change of a base chain's priority or hook is planned as the recreate
// of that chain (in the operation's detail, text and JSON), and the apply
// makes it so.
func TestNftablesPlanChainRecreate(t *testing.T) {
	e := cliNewEnv(t)
	e.mustRun(0, "apply", e.writeFile("nft.json", nftEdgeIntent))
	moved := strings.Replace(nftEdgeIntent, `"priority": "filter"`, `"priority": -10`, 1)
	moved = strings.Replace(moved, `"hook": "postrouting", "priority": "srcnat"`, `"hook": "postrouting", "priority": 110`, 1)
	file := e.writeFile("moved.json", moved)
	res := e.mustRun(0, "plan", file)
	for _, want := range []string{"modify nft-table/inet/netagent",
		"recreate chain input (hook/priority/type cannot change in place: priority 0 → -10)",
		"recreate chain post (hook/priority/type cannot change in place: priority 100 → 110)"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, res.stdout)
		}
	}
	var doc struct {
		Operations []struct {
			Op         string
			Disruption struct{ Why string }
		}
	}
	if err := json.Unmarshal([]byte(e.mustRun(0, "plan", "--json", file).stdout), &doc); err != nil || len(doc.Operations) != 1 ||
		!strings.Contains(doc.Operations[0].Disruption.Why, "recreate chain input") {
		t.Errorf("plan --json: %v, %+v", err, doc.Operations)
	}
	e.mustRun(0, "apply", file)
	if out := e.exec("nft", "list", "chain", "inet", "netagent", "input"); !strings.Contains(out, "priority filter - 10") {
		t.Errorf("input chain after the apply: %s", out)
	}
	if show := e.mustRun(0, "show"); !strings.Contains(show.stdout, "nftables tables:\n  nft-table inet/netagent 2 chains, 3 rules, 1 sets") {
		t.Errorf("show does not list netagent's table: %s", show)
	}
}

// Many foreign tables and rules do not blow plan up: 40 tables of
// others, each with an input chain of 300 accepts and a drop (12040
// rules), are inspected up to the cap of 10000 rules in all, the chains
// past it are counted in one warning, and the plan takes well under the
// time of a dump of them all by nft.
func TestNftablesPlanWarningsBounded(t *testing.T) {
	e := cliNewEnv(t)
	var script strings.Builder
	for i := range 40 {
		fmt.Fprintf(&script, "table inet t%d {\n chain in {\n  type filter hook input priority %d; policy accept;\n", i, i+1)
		for p := range 300 {
			fmt.Fprintf(&script, "  tcp dport %d accept\n", 1000+p)
		}
		script.WriteString("  drop\n }\n}\n")
	}
	e.exec("nft", "-f", e.writeFile("many.nft", script.String()))
	start := time.Now()
	res := e.mustRun(0, "plan", e.writeFile("nft.json", nftEdgeIntent))
	took := time.Since(start)
	warned := strings.Count(res.stdout, "~  warning: nftables: another owner's base chain inet/t")
	m := regexp.MustCompile(`(\d+) base chains of other owners on netagent's hooks were not inspected for drop rules: the cap of 10000 rules inspected was reached`).FindStringSubmatch(res.stdout)
	if m == nil || warned < 30 || warned > 34 {
		t.Fatalf("plan over 40 foreign tables: %d chain warnings, cap warning %v:\n%s", warned, m, res.stdout)
	}
	if n, _ := strconv.Atoi(m[1]); n+warned < 39 || n+warned > 40 {
		t.Errorf("%d chains warned of and %d uninspected: want 39 or 40 (one cut short by the cap)", warned, n)
	}
	t.Logf("plan over 40 foreign tables, 12040 rules: %v, %d warnings, %s chains not inspected", took, warned, m[1])
	if took > 10*time.Second {
		t.Errorf("plan took %v", took)
	}
}

// A hand edit between two applies is found although a no-op apply takes
// the table from the state directory's dump (no dump of the kernel's
// table when the ruleset generation is the one recorded): every commit,
// of any writer, bumps the generation. Each edit (a rule added, an
// element deleted, a policy changed, a rule's content replaced in place)
// is repaired by the next apply, which makes the table exactly the first
// apply's again, and the apply after that writes nothing.
func TestNftablesHandEditBetweenApplies(t *testing.T) {
	e := cliNewEnv(t)
	file := e.writeFile("nft.json", nftEdgeIntent)
	e.mustRun(0, "apply", file)
	want := nftTableLines(e, "inet", "netagent")
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Fatalf("second apply wrote: %s", res)
	}
	if dumps, _ := filepath.Glob(filepath.Join(e.stateDir, "nftables-dumps", "*")); len(dumps) != 1 {
		t.Fatalf("the state directory's dumps: %v, want the table's", dumps)
	}
	handle := func() string {
		m := regexp.MustCompile(`tcp dport 22 counter packets \d+ bytes \d+ accept # handle (\d+)`).FindStringSubmatch(e.exec("nft", "-a", "list", "chain", "inet", "netagent", "input"))
		if m == nil {
			t.Fatal("no handle of the ssh rule")
		}
		return m[1]
	}
	for _, edit := range []string{
		"add rule inet netagent input tcp dport 23 accept",
		"delete element inet netagent mgmt { 198.51.100.7 }",
		"add chain inet netagent input { type filter hook input priority 0; policy accept; }",
		"replace rule inet netagent input handle " + handle() + " ip saddr @mgmt tcp dport 2222 counter accept",
	} {
		e.exec("nft", edit)
		if res := e.mustRun(0, "apply", file); strings.Contains(res.stdout, "converged: 0 operations") {
			t.Errorf("after %q: the apply found nothing to do: %s", edit, res)
		}
		if got := nftTableLines(e, "inet", "netagent"); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("after %q and an apply:\n got  %s\n want %s", edit, strings.Join(got, "\n      "), strings.Join(want, "\n      "))
		}
		if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
			t.Errorf("after %q: the apply after the repair wrote: %s", edit, res)
		}
	}
}
