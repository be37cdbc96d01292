//go:build !vmtest

package netns_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/testns"
)

// TestAdoptSwitchover takes over, for every oracle case (the netplan
// examples networkd applies here, the ENI files ifupdown2 applies), a
// namespace the old tool configured, as docs/migrating.md says: import
// the old tool's file, plan --adopt lists only adoptions, apply --adopt,
// watched by ip monitor (links, addresses, routes, rules) and under a
// ping every 10 ms through the namespace to a peer namespace at the far
// end of the NIC's veth. Then: no deletion, no ping lost, the kernel as
// the old tool left it, a second apply writes nothing (no operation, no
// kernel event), and an intent without objects deletes exactly what was
// adopted (the operations, and the kernel's deletions), leaving a
// foreign address and route alone throughout.
func TestAdoptSwitchover(t *testing.T) {
	var table []string
	for _, c := range oracleCases(t) {
		var f takeoverFigures
		ok := t.Run(c.name, func(t *testing.T) { f = takeoverSwitchover(t, c) })
		table = append(table, fmt.Sprintf("%-45s %-4s %s", c.name, map[bool]string{true: "ok", false: "FAIL"}[ok], f))
	}
	t.Logf("switch-over figures:\n%s", strings.Join(table, "\n"))
}

// takeoverSwitchover runs the switch-over of one case.
func takeoverSwitchover(t *testing.T, c oracleCase) takeoverFigures {
	e := cliNewEnv(t)
	oracleStandIns(e, c.in)
	path := takeoverNewPath(t, e, c.in)
	c.old(t, e)
	f, adopted, mon := takeoverTakeOver(t, e, path, autoPriorities(c.in), c.source, c.file)
	f.removed = takeoverRemoval(t, e, mon, c.in, adopted)
	return f
}

// TestAdoptSwitchoverByHand takes over a namespace configured by hand
// with ip(8): a bridge whose port is the NIC (a veth whose peer is in
// the peer namespace), an address, routes in two tables, a rule and a
// permanent neighbour. import kernel makes the intent; plan --adopt lists
// only adoptions; apply --adopt deletes nothing and loses no ping (to an
// address beyond the gateway, through the bridge); a second apply writes
// nothing.
func TestAdoptSwitchoverByHand(t *testing.T) {
	e := cliNewEnv(t)
	p := testns.New(t)
	e.ip("link", "add", "h0", "type", "veth", "peer", "name", "h0-peer")
	e.ip("link", "set", "h0-peer", "netns", p.Name)
	for _, args := range [][]string{
		{"link", "add", "br-hand", "type", "bridge"}, {"link", "set", "h0", "master", "br-hand"},
		{"link", "set", "h0", "up"}, {"link", "set", "br-hand", "up"},
		{"addr", "add", "10.88.0.1/24", "dev", "br-hand"},
		{"route", "add", "10.89.0.0/16", "via", "10.88.0.2"},
		{"route", "add", "10.89.0.0/16", "via", "10.88.0.2", "table", "100"},
		{"rule", "add", "from", "10.88.0.0/24", "lookup", "100", "pref", "100"},
		{"neigh", "add", "10.88.0.9", "lladdr", "02:00:00:00:00:09", "dev", "br-hand", "nud", "permanent"},
	} {
		e.ip(args...)
	}
	for _, args := range [][]string{{"link", "set", "lo", "up"}, {"addr", "add", "10.88.0.2/24", "dev", "h0-peer"},
		{"link", "set", "h0-peer", "up"}, {"addr", "add", "10.89.0.1/32", "dev", "lo"}} {
		testns.Exec(t, p, "ip", args...)
	}
	path := takeoverPath{from: e.tgt, target: netip.MustParseAddr("10.89.0.1"), how: "from br-hand by 10.89.0.0/16 via 10.88.0.2 to 10.89.0.1"}
	f, _, _ := takeoverTakeOver(t, e, path, false, "kernel")
	t.Logf("switch-over of a namespace configured by hand: %s", f)
}
