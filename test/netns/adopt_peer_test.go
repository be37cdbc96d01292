//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// peerAddrs is `ip -j addr show dev DEV` of e as one sorted line per
// address: family, local, address (the peer), length, scope, broadcast,
// label; the kernel's link-local IPv6 address (of each veth's own MAC)
// left out.
func peerAddrs(t *testing.T, e *kimportEnv, dev string) []string {
	t.Helper()
	var links []struct {
		AddrInfo []struct {
			Family, Local, Address, Scope, Broadcast, Label string
			Prefixlen                                       int
		} `json:"addr_info"`
	}
	if err := json.Unmarshal([]byte(e.ip("-j", "addr", "show", "dev", dev)), &links); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range links {
		for _, a := range l.AddrInfo {
			if a.Scope == "link" && strings.HasPrefix(a.Local, "fe80:") {
				continue
			}
			out = append(out, fmt.Sprintf("%s %s peer %s/%d scope %s brd %q label %q", a.Family, a.Local, a.Address, a.Prefixlen, a.Scope, a.Broadcast, a.Label))
		}
	}
	slices.Sort(out)
	return out
}

// Point-to-point addresses made with `ip addr add A peer P/LEN` (IPv4
// /32 and /24 peers, IPv6) beside a plain one, and a route through the
// /32 peer: import kernel writes them
// as "A peer P/LEN" without a warning; plan --adopt lists only "mark
// only" adoptions and apply --adopt does the same with no deletion (ip
// monitor) and the addresses as they were but for the mark; a plan
// without --adopt has no changes (netagent's now), a second apply writes
// nothing; applied to a fresh namespace the intent gives
// the same addresses (ip -j addr: local, peer, length, scope, no
// broadcast), and removing the intent there removes them.
func TestImportKernelPeerRoundTrip(t *testing.T) {
	nic := func(e *kimportEnv) {
		// uplink0: the name adoptMonitor's sentinel route goes over
		e.ip("link", "add", "uplink0", "type", "veth", "peer", "name", "uplink0-far", "netns", e.peer.tgt.Name)
		e.peer.ip("link", "set", "uplink0-far", "up")
		e.ip("link", "set", "uplink0", "up")
	}
	a := newKimportEnv(t)
	nic(a)
	for _, args := range [][]string{
		{"addr", "add", "10.77.0.1/24", "brd", "+", "dev", "uplink0"},
		{"addr", "add", "10.9.0.1", "peer", "10.9.0.2/32", "dev", "uplink0"},
		{"addr", "add", "10.8.0.1", "peer", "10.8.1.0/24", "dev", "uplink0"},
		{"-6", "addr", "add", "2001:db8:9::1", "peer", "2001:db8:9::2/128", "dev", "uplink0"},
		{"route", "add", "10.66.0.0/16", "via", "10.9.0.2", "dev", "uplink0"},
	} {
		a.ip(args...)
	}
	found := peerAddrs(t, a, "uplink0")
	res := a.mustRun(0, "import", "kernel")
	for _, want := range []string{`"10.9.0.1 peer 10.9.0.2/32"`, `"10.8.0.1 peer 10.8.1.0/24"`, `"2001:db8:9::1 peer 2001:db8:9::2/128"`, `"10.77.0.1/24"`} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("import kernel lacks %s:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stderr, "warning:") {
		t.Errorf("import kernel warns:\n%s", res.stderr)
	}
	file := a.writeFile("imported.json", res.stdout)
	applied := a.adoptAgreeing(0, file)
	peers := 0
	for _, op := range applied {
		if !strings.HasSuffix(op, "[adopt mark only]") {
			t.Errorf("apply --adopt of the import: %q, want adoptions only", op)
		}
		if strings.HasPrefix(op, "create address/uplink0/") {
			peers++
		}
	}
	if peers != 4 || !slices.Contains(applied, "create route/main 10.66.0.0/16 metric 0 [adopt mark only]") {
		t.Errorf("want 4 addresses (%d) and the route through the peer adopted:\n%s", peers, strings.Join(applied, "\n"))
	}
	if got := peerAddrs(t, a, "uplink0"); !slices.Equal(got, found) {
		t.Errorf("the addresses after apply --adopt:\n%s\nwant as found:\n%s", strings.Join(got, "\n"), strings.Join(found, "\n"))
	}
	if plain := a.mustRun(0, "plan", file); !strings.Contains(plain.stdout, "no changes") {
		t.Errorf("a plan without --adopt after the adoption (this ip(8) shows no address protocol): %s", plain)
	}
	if again := a.mustRun(0, "apply", file); !strings.Contains(again.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", again)
	}
	b := newKimportEnv(t)
	nic(b)
	b.mustRun(0, "apply", b.writeFile("imported.json", res.stdout))
	if got := peerAddrs(t, b, "uplink0"); !slices.Equal(got, found) {
		t.Errorf("a fresh namespace after the apply:\n%s\nwant the first's:\n%s", strings.Join(got, "\n"), strings.Join(found, "\n"))
	}
	if out := b.ip("route", "show", "10.66.0.0/16"); !strings.Contains(out, "via 10.9.0.2 dev uplink0") {
		t.Errorf("the route through the peer in the fresh namespace: %q", out)
	}
	if again := b.mustRun(0, "apply", b.writeFile("imported.json", res.stdout)); !strings.Contains(again.stdout, "converged: 0 operations") {
		t.Errorf("second apply on the fresh namespace: %s", again)
	}
	b.mustRun(0, "apply", b.writeFile("empty.json", `{"version": 1}`))
	if got := peerAddrs(t, b, "uplink0"); len(got) > 0 {
		t.Errorf("after the intent went: %v", got)
	}
	t.Logf("%d addresses (3 with a peer) imported, adopted mark only, and made alike in a fresh namespace:\n%s", len(found), strings.Join(found, "\n"))
}

// An IPv4 address someone added without a broadcast (`ip addr add` without
// brd, as Debian's ifupdown2 3.0 adds them) is adopted as found: plan
// --adopt and apply --adopt say mark only, nothing is deleted (ip
// monitor), and the address keeps no broadcast (the mark is an in-place
// replace, which leaves the broadcast alone; the intent does not state
// one); a second apply writes nothing. One someone added with the
// subnet's broadcast keeps it too.
func TestAgentCLIAdoptKeepsTheBroadcastAsFound(t *testing.T) {
	e := cliNewEnv(t)
	e.ip("addr", "add", "192.0.2.10/24", "dev", "uplink0")
	e.ip("addr", "add", "198.51.100.10/24", "brd", "+", "dev", "uplink0")
	brd := func() map[string]string {
		var links []struct {
			AddrInfo []struct{ Family, Local, Broadcast string } `json:"addr_info"`
		}
		if err := json.Unmarshal([]byte(e.ip("-j", "addr", "show", "dev", "uplink0")), &links); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, l := range links {
			for _, a := range l.AddrInfo {
				if a.Family == "inet" {
					out[a.Local] = a.Broadcast
				}
			}
		}
		return out
	}
	found := brd()
	if found["192.0.2.10"] != "" || found["198.51.100.10"] != "198.51.100.255" {
		t.Fatalf("the addresses as made: %v", found)
	}
	file := e.writeFile("adopt.json", `{"version": 1,
	 "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24", "198.51.100.10/24"]}]}`)
	want := []string{"create address/uplink0/192.0.2.10/24 [adopt mark only]", "create address/uplink0/198.51.100.10/24 [adopt mark only]"}
	if got := e.adoptAgreeing(0, file); !slices.Equal(got, want) {
		t.Errorf("apply --adopt:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := brd(); got["192.0.2.10"] != "" || got["198.51.100.10"] != "198.51.100.255" {
		t.Errorf("the broadcasts after the adoption: %v, want as found %v", got, found)
	}
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
}
