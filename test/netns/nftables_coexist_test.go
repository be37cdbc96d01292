//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// nftOwnTables are the tables the nftables tests give netagent: the
// ruleset's objects in them are netagent's, every other object foreign.
var nftOwnTables = []string{"inet/netagent", "ip/netagent4", "ip6/netagent6", "inet/edge"}

// nftObjTable returns the "family/table" an object of `nft -j list
// ruleset` belongs to (a table object: its own), and false for the
// metainfo.
func nftObjTable(o map[string]json.RawMessage) (string, bool) {
	for kind, raw := range o {
		if kind == "metainfo" {
			return "", false
		}
		var obj struct{ Family, Table, Name string }
		json.Unmarshal(raw, &obj)
		if kind == "table" {
			return obj.Family + "/" + obj.Name, true
		}
		return obj.Family + "/" + obj.Table, true
	}
	return "", false
}

// nftSplit returns `nft -j list ruleset` in two parts, one object a line:
// the foreign objects exactly as nft printed them (handles included: a
// foreign table must not even be re-created), then nftIptablesSave; and netagent's objects
// (nftOwnTables) without their handles, table by table in the order of
// their names (the kernel numbers a table it re-creates anew, as it
// numbers a re-created link's ifindex, and lists it after the others),
// with everything else, counters and the order within a table included.
func nftSplit(e *cliEnv) (foreign, own string) {
	e.t.Helper()
	var f []string
	o := map[string][]string{}
	for _, obj := range nftJSON(e, "ruleset") {
		table, ok := nftObjTable(obj)
		if !ok {
			continue
		}
		if !slices.Contains(nftOwnTables, table) {
			b, _ := json.Marshal(obj) // json.RawMessage: the bytes nft printed
			f = append(f, string(b))
			continue
		}
		o[table] = append(o[table], nftWithoutHandle(e.t, obj))
	}
	var mine []string
	for _, table := range slices.Sorted(maps.Keys(o)) {
		mine = append(mine, o[table]...)
	}
	return strings.Join(f, "\n") + "\n" + nftIptablesSave(e), strings.Join(mine, "\n")
}

// nftIptablesSave is `iptables-nft-save -c` without its dated comments:
// nft -j shows iptables' targets (Docker's DNAT, its MASQUERADE) only by
// name, iptables-nft-save with their arguments.
func nftIptablesSave(e *cliEnv) string {
	e.t.Helper()
	var keep []string
	for _, line := range strings.Split(e.exec("iptables-nft-save", "-c"), "\n") {
		if !strings.HasPrefix(line, "#") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// nftWithoutHandle is an object of netagent's table without its handle.
func nftWithoutHandle(t *testing.T, obj map[string]json.RawMessage) string {
	t.Helper()
	out := map[string]map[string]json.RawMessage{}
	for kind, raw := range obj {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			t.Fatalf("nft -j: %s: %v", raw, err)
		}
		delete(fields, "handle")
		out[kind] = fields
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// nftForeignSetup writes what other owners would into the namespace:
// iptables-nft rules in ip filter (a user chain jumped to from INPUT and
// a FORWARD drop), Docker's nat chains in ip nat (a DOCKER chain with a
// DNAT, jumped to from PREROUTING and OUTPUT, and its masquerade), and an
// inet table of a firewall with a drop policy on the input hook, before
// netagent's priority, and a drop rule on forward.
func nftForeignSetup(e *cliEnv) {
	e.t.Helper()
	ipt := [][]string{
		{"-N", "FW-IN"},
		{"-A", "FW-IN", "-s", "203.0.113.0/24", "-p", "tcp", "--dport", "443", "-j", "ACCEPT"},
		{"-A", "INPUT", "-j", "FW-IN"},
		{"-A", "FORWARD", "-i", "uplink0", "-o", "uplink0", "-j", "DROP"},
		{"-t", "nat", "-N", "DOCKER"},
		{"-t", "nat", "-A", "PREROUTING", "-m", "addrtype", "--dst-type", "LOCAL", "-j", "DOCKER"},
		{"-t", "nat", "-A", "OUTPUT", "!", "-d", "127.0.0.0/8", "-m", "addrtype", "--dst-type", "LOCAL", "-j", "DOCKER"},
		{"-t", "nat", "-A", "POSTROUTING", "-s", "172.17.0.0/16", "!", "-o", "docker0", "-j", "MASQUERADE"},
		{"-t", "nat", "-A", "DOCKER", "-i", "docker0", "-j", "RETURN"},
		{"-t", "nat", "-A", "DOCKER", "!", "-i", "docker0", "-p", "tcp", "--dport", "8080", "-j", "DNAT", "--to-destination", "172.17.0.2:80"},
	}
	for _, args := range ipt {
		e.exec("iptables-nft", args...)
	}
	e.exec("nft", `add table inet fw
add chain inet fw in { type filter hook input priority -10; policy drop; }
add rule inet fw in ct state established,related accept
add rule inet fw in tcp dport 22 accept
add chain inet fw forwarding { type filter hook forward priority 10; }
add rule inet fw forwarding iifname "uplink0" ip saddr 10.0.0.0/8 counter drop`)
}

// nftCoexistIntents are the intents of TestNftablesCoexist, each a
// table list: A one table, B A's table changed and an ip6 table beside
// it, C (the trial's) B's inet table changed again, its ip6 table gone,
// an ip table new.
var nftCoexistIntents = map[string]string{
	"A": `[{"family": "inet", "name": "netagent", "sets": [{"name": "mgmt", "type": "ipv4_addr", "interval": true, "elements": ["192.0.2.0/24"]}],
	  "chains": [{"name": "input", "type": "filter", "hook": "input", "priority": "filter", "policy": "drop", "rules": [
	    {"ctState": ["established", "related"], "verdict": "accept"},
	    {"saddr": "@mgmt", "protocol": "tcp", "dport": "22", "counter": true, "verdict": "accept"}]}]}]`,
	"B": `[{"family": "inet", "name": "netagent", "sets": [{"name": "mgmt", "type": "ipv4_addr", "interval": true, "elements": ["192.0.2.0/24", "198.51.100.7"]}],
	  "chains": [{"name": "input", "type": "filter", "hook": "input", "priority": "filter", "policy": "drop", "rules": [
	    {"ctState": ["established", "related"], "verdict": "accept"},
	    {"saddr": "@mgmt", "protocol": "tcp", "dport": "22", "counter": true, "verdict": "accept"},
	    {"protocol": "udp", "dport": "53", "verdict": "accept"}]},
	    {"name": "post", "type": "nat", "hook": "postrouting", "priority": "srcnat", "rules": [{"oifname": "uplink0", "masquerade": true}]}]},
	  {"family": "ip6", "name": "netagent6", "chains": [{"name": "fwd", "type": "filter", "hook": "forward", "priority": 5, "policy": "drop", "rules": [
	    {"iifname": "uplink0", "daddr": "2001:db8::/32", "verdict": "accept"}]}]}]`,
	"C": `[{"family": "inet", "name": "netagent", "sets": [{"name": "mgmt", "type": "ipv4_addr", "elements": ["203.0.113.9"]}],
	  "chains": [{"name": "input", "type": "filter", "hook": "input", "priority": -5, "policy": "accept", "rules": [
	    {"saddr": "@mgmt", "protocol": "tcp", "dport": "22-23", "verdict": "drop"}]}]},
	  {"family": "ip", "name": "netagent4", "chains": [{"name": "pre", "type": "nat", "hook": "postrouting", "priority": "srcnat", "rules": [
	    {"oifname": "uplink0", "saddr": "10.1.0.0/16", "masquerade": true}]}]}]`,
}

// nftIntentFile writes an intent of the uplink and the tables (a JSON
// list; "" for no nftables section).
func nftIntentFile(e *cliEnv, name, tables string) string {
	e.t.Helper()
	section := ""
	if tables != "" {
		section = `, "nftables": {"tables": ` + tables + `}`
	}
	return e.writeFile(name, `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}]`+section+`}`)
}

// iptables-nft's rules (ip filter), Docker-like nat chains (ip nat) and
// a foreign inet table with drops on the hooks netagent's chains use
// survive, byte for byte in `nft -j list ruleset` (handles and counters
// included), every apply (create, no-op, modify with a table added), a
// trial's revert (not confirmed; killed with SIGKILL after its apply and
// recovered), and the removal of netagent's tables; and after each trial
// revert netagent's own tables are again what they were.
func TestNftablesCoexist(t *testing.T) {
	e := cliNewEnv(t)
	nftForeignSetup(e)
	foreign, own := nftSplit(e)
	for _, want := range []string{`"FW-IN"`, `"DOCKER"`, `--to-destination 172.17.0.2:80`, `"fw"`, `"policy":"drop"`} {
		if !strings.Contains(foreign, want) {
			t.Fatalf("the foreign ruleset lacks %s:\n%s", want, foreign)
		}
	}
	if own != "" {
		t.Fatalf("netagent's tables before any apply: %s", own)
	}
	same := func(step string) string {
		t.Helper()
		f, o := nftSplit(e)
		if f != foreign {
			t.Errorf("%s changed the foreign ruleset:\n%s", step, lineDiff(foreign, f))
		}
		return o
	}
	a, b, c := nftIntentFile(e, "a.json", nftCoexistIntents["A"]), nftIntentFile(e, "b.json", nftCoexistIntents["B"]), nftIntentFile(e, "c.json", nftCoexistIntents["C"])
	e.mustRun(0, "apply", a)
	ownA := same("the apply (create)")
	if res := e.mustRun(0, "apply", a); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("the second apply wrote: %s", res)
	}
	same("the no-op apply")
	e.mustRun(0, "apply", b)
	ownB := same("the apply (modify, a table added)")
	if ownB == ownA || !strings.Contains(ownB, `"netagent6"`) {
		t.Fatalf("the modify did not reach the kernel:\n%s", ownB)
	}

	full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", c)
	if full.code != 6 {
		t.Fatalf("the trial: want exit 6 (not confirmed), got %s", full)
	}
	if o := same("the trial's revert"); o != ownB {
		t.Errorf("the trial's revert is not exact:\n%s", lineDiff(ownB, o))
	}
	apply, _ := killPoints(t, full)
	if res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", apply)}, "--timeout", "0s", c); res.code != -1 {
		t.Fatalf("the trial was not killed after its apply: %s", res)
	}
	if o := same("the killed trial's apply"); !strings.Contains(o, `"netagent4"`) || strings.Contains(o, `"netagent6"`) {
		t.Fatalf("the killed trial had not applied:\n%s", o)
	}
	e.mustRun(0, "recover")
	if o := same("recover"); o != ownB {
		t.Errorf("recover after the killed trial is not exact:\n%s", lineDiff(ownB, o))
	}

	e.mustRun(0, "apply", nftIntentFile(e, "off.json", ""))
	if o := same("the removal"); o != "" {
		t.Errorf("netagent's tables after the section's removal:\n%s", o)
	}
}
