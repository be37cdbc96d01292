//go:build !vmtest

package netns_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// nftMapsIntent has a verdict map of ports (accept, drop, jump) and an
// interval map of addresses, looked up by two rules.
const nftMapsIntent = `{"version": 1, "nftables": {"tables": [{"family": "inet", "name": "netagent",
  "maps": [{"name": "svc", "type": "inet_service", "elements": [
             {"key": "22", "verdict": "accept"}, {"key": "23", "verdict": "drop"}, {"key": "80", "verdict": "jump", "target": "web"}]},
           {"name": "nets", "type": "ipv4_addr", "interval": true, "elements": [
             {"key": "10.0.0.0/8", "verdict": "accept"}, {"key": "192.0.2.1-192.0.2.9", "verdict": "goto", "target": "web"}]}],
  "chains": [{"name": "input", "type": "filter", "hook": "input", "priority": 0, "rules": [
    {"protocol": "tcp", "counter": true, "vmap": {"on": "dport", "map": "svc"}},
    {"vmap": {"on": "saddr", "map": "nets"}}]},
   {"name": "web", "rules": [{"verdict": "accept"}]}]}]}}`

// nftMapsOracle is the same table written for nft.
const nftMapsOracle = `table inet netagent_nft {
map svc { type inet_service : verdict; elements = { 22 : accept, 23 : drop, 80 : jump web }; }
map nets { type ipv4_addr : verdict; flags interval; elements = { 10.0.0.0/8 : accept, 192.0.2.1-192.0.2.9 : goto web }; }
chain input { type filter hook input priority 0; meta l4proto tcp counter tcp dport vmap @svc; ip saddr vmap @nets; }
chain web { accept; }
}`

// Verdict maps: the kernel holds the expressions nft writes for the same
// rules and nft lists the same maps; a second apply writes nothing; one
// changed element is one batch of that element only.
func TestNftablesVerdictMaps(t *testing.T) {
	e := cliNewEnv(t)
	e.exec("nft", "-f", e.writeFile("oracle.nft", nftMapsOracle))
	file := e.writeFile("maps.json", nftMapsIntent)
	e.mustRun(0, "apply", file)

	// nft also writes an interval map's (and set's) end element at key 0
	// before a first range that does not start there: the same map.
	nftZeroEnd := "\telement 00000000  : 1 [end]\n"
	// A hash map lists its elements in no fixed order: the lines are
	// compared sorted (the rules' order is nft -j's below).
	sorted := func(s string) string { l := strings.Split(s, "\n"); slices.Sort(l); return strings.Join(l, "\n") }
	if g, w := sorted(nftRulesNetlink(e, "inet", "netagent")), sorted(strings.Replace(nftRulesNetlink(e, "inet", "netagent_nft"), nftZeroEnd, "", 1)); g != w {
		t.Errorf("the kernel's expressions\n got\n%s\n want\n%s", g, w)
	}
	if g, w := strings.Join(nftRulesJSON(e, "inet", "netagent"), "\n"), strings.Join(nftRulesJSON(e, "inet", "netagent_nft"), "\n"); g != w {
		t.Errorf("nft -j list rules\n got  %s\n want %s", g, w)
	}
	mapsOf := func(table string) string {
		var out []string
		for _, o := range nftJSON(e, "table", "inet", table) {
			if raw, ok := o["map"]; ok {
				out = append(out, strings.ReplaceAll(nftNoHandle.ReplaceAllString(string(raw), ""), table, "T"))
			}
		}
		return strings.Join(out, "\n")
	}
	if g, w := mapsOf("netagent"), mapsOf("netagent_nft"); g != w || !strings.Contains(g, `"jump": {"target": "web"}`) {
		t.Errorf("nft -j list maps\n got  %s\n want %s", g, w)
	}
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply wrote: %s", res)
	}
	e.mustRun(0, "check", file)

	// Another writer changes an element: check names it, apply restores it.
	e.exec("nft", "delete element inet netagent svc { 23 }; add element inet netagent svc { 23 : accept }")
	if res := e.mustRun(1, "check", file); !strings.Contains(res.stdout, "map svc elements: want 23 : drop (missing), have 23 : accept (not intended)") {
		t.Errorf("check of a changed map element: %s", res)
	}
	e.mustRun(0, "apply", file)
	e.mustRun(0, "check", file)

	handles, mapsBefore := nftRuleHandles(e, "input"), nftJSON(e, "map", "inet", "netagent", "nets")
	changed := e.writeFile("changed.json", strings.Replace(nftMapsIntent, `{"key": "23", "verdict": "drop"}`, `{"key": "23", "verdict": "accept"}`, 1))
	if res := e.mustRun(0, "apply", changed); !strings.Contains(res.stdout, "converged: 1 operation: 1 done") {
		t.Errorf("apply of one changed element: %s", res)
	}
	// The rules and the other map stay as they were (handles, content):
	// only the element changed (the batch itself is diffTable's, in
	// TestMapsDiffOneElement).
	if h := nftRuleHandles(e, "input"); strings.Join(h, " ") != strings.Join(handles, " ") {
		t.Errorf("rule handles %v after the change, want %v", h, handles)
	}
	if m := nftJSON(e, "map", "inet", "netagent", "nets"); fmt.Sprint(m) != fmt.Sprint(mapsBefore) {
		t.Errorf("map nets changed:\n%v\n%v", m, mapsBefore)
	}
	listed := e.exec("nft", "list", "map", "inet", "netagent", "svc")
	if !strings.Contains(listed, "23 : accept") || !strings.Contains(listed, "80 : jump web") {
		t.Errorf("the map after the change:\n%s", listed)
	}
	if res := e.mustRun(0, "apply", changed); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("apply after the change wrote: %s", res)
	}
	// show --json is the read-back as an intent, maps and vmaps included.
	shown := e.mustRun(0, "show", "--json").stdout
	if !strings.Contains(shown, `"vmap"`) || !strings.Contains(shown, `"maps"`) {
		t.Errorf("show --json lacks the maps or the vmaps:\n%s", shown)
	}
	if res := e.mustRun(0, "apply", e.writeFile("shown.json", shown)); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("apply of show --json wrote: %s", res)
	}
}
