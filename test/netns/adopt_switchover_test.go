//go:build !vmtest

package netns_test

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/testns"
)

// takeoverFigures are what one switch-over measured.
type takeoverFigures struct {
	adopted    int // adoptions plan --adopt listed
	deletions  int // deletions ip monitor saw during apply --adopt
	ruleCopies int // of which a rule's old copy, after netagent's copy
	sent, lost int // pings during apply --adopt
	again      int // operations of the second apply, and kernel events
	removed    int // objects the removal of the intent deleted
	pinned     int // rule priorities the intent took from the kernel
}

func (f takeoverFigures) String() string {
	return fmt.Sprintf("adopted %d, deletions seen %d (and %d rules' old copies), pings lost %d of %d, second apply %d writes, removal deleted %d, rule priorities pinned %d",
		f.adopted, f.deletions, f.ruleCopies, f.lost, f.sent, f.again, f.removed, f.pinned)
}

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
	f.removed = takeoverRemoval(t, e, mon, c, adopted)
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

// takeoverTakeOver is the switch-over of a namespace the old tool (or the
// administrator) configured: import SOURCE ARGS, plan --adopt lists only
// adoptions, apply --adopt under ip monitor and a ping along path loses
// nothing and leaves the kernel as it was, a second apply writes nothing.
// It returns the figures, the items adopted and the monitor.
func takeoverTakeOver(t *testing.T, e *cliEnv, path takeoverPath, auto bool, source string, args ...string) (f takeoverFigures, adopted []string, mon *takeoverMonitor) {
	t.Helper()
	path.check(t)
	mon = takeoverStartMonitor(t, e) // and the namespace settled
	before := oracleView(e, auto)
	file := filepath.Join(t.TempDir(), "imported.json")
	e.mustRun(0, "import", append([]string{source, "--out", file}, args...)...)
	if auto {
		f.pinned = takeoverKernelPriorities(t, e, file)
	}
	adopted, f.adopted = takeoverPlanOnlyAdoptions(t, e, file)
	if events := mon.until(); len(events) > 0 {
		t.Errorf("plan --adopt changed the kernel:\n%s", strings.Join(events, "\n"))
	}

	ping := path.start(t)
	time.Sleep(300 * time.Millisecond)
	res := e.mustRun(0, "apply", "--adopt", "--json", file)
	time.Sleep(300 * time.Millisecond)
	f.sent, f.lost = ping.stop(t)
	events := mon.until()
	dels, copies := takeoverRuleCopies(takeoverDeletions(events), events)
	f.deletions, f.ruleCopies = len(dels), len(copies)
	if f.deletions > 0 || f.lost > 0 {
		t.Errorf("apply --adopt: %d deletions, %d of %d pings lost (%s):\n%s\nall events:\n%s",
			f.deletions, f.lost, f.sent, path.how, strings.Join(dels, "\n"), strings.Join(events, "\n"))
	}
	if f.sent < 20 {
		t.Errorf("only %d pings during the apply", f.sent)
	}
	if ops := takeoverOps(t, res.stdout); !slices.Equal(takeoverItems(ops, "create"), adopted) || len(ops) != len(adopted) {
		t.Errorf("apply --adopt ran %v, want only the adoptions plan --adopt listed: %v", ops, adopted)
	}
	if diff := lineDiff(before, oracleView(e, auto)); diff != "" {
		t.Errorf("apply --adopt changed the kernel (-: before, +: after):\n%s", diff)
	}
	f.again = takeoverSecondApply(t, e, mon, file)
	return f, adopted, mon
}

// takeoverKernelPriorities is docs/migrating.md's fix, in step 2, for
// rules the old file gave no priority (see autoPriorities): the kernel
// numbered them in the order the old tool added them, which the import
// cannot know, so the intent takes each such rule's priority from the
// kernel's rule of the same source and table. It returns how many it
// changed.
func takeoverKernelPriorities(t *testing.T, e *cliEnv, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	in, err := intent.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, r := range in.Rules {
		if r.Priority <= 32700 || r.Priority >= 32766 {
			continue
		}
		for _, k := range e.ipJSON("rule", "show") {
			p, _ := k["priority"].(float64)
			if fmt.Sprintf("%v/%v", k["src"], k["srclen"]) == r.From && fmt.Sprint(k["table"]) == fmt.Sprint(r.Table) && uint32(p) != r.Priority {
				in.Rules[i].Priority = uint32(p)
				n++
			}
		}
	}
	if data, err = importer.Encode(in); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return n
}

// takeoverPlanOnlyAdoptions checks that plan --adopt lists adoptions
// only, at least one: each line "adopt (mark only) ITEM" in the text, and
// "adopt": "mark only" in the JSON; but for sysctls, which carry no mark:
// one may be written if the kernel already holds its value. It returns
// the items of every operation, sorted, and how many are adoptions.
func takeoverPlanOnlyAdoptions(t *testing.T, e *cliEnv, file string) (items []string, adoptions int) {
	t.Helper()
	text := e.mustRun(0, "plan", "--adopt", file).stdout
	n := 0
	for _, l := range strings.Split(text, "\n") {
		op, ok := takeoverPlanOp(l)
		switch {
		case !ok || strings.HasPrefix(op, "create sysctl/"):
		case strings.HasPrefix(op, "adopt (mark only) "):
			n++
		default:
			t.Errorf("plan --adopt lists an operation that is not an adoption: %q\n%s", l, text)
		}
	}
	for _, o := range takeoverOps(t, e.mustRun(0, "plan", "--adopt", "--json", file).stdout) {
		switch {
		case o.Adopt == "mark only":
			adoptions++
		case !takeoverSameSysctl(e, o):
			t.Errorf("plan --adopt --json: %s %s adopt %q, want only adoptions, mark only", o.Op, o.Item, o.Adopt)
		}
		items = append(items, o.Item)
	}
	slices.Sort(items)
	if n == 0 || n != adoptions || strings.Contains(text, "!") {
		t.Errorf("plan --adopt: %d adoptions, %d in the JSON (want some, the same, and no problem):\n%s", n, adoptions, text)
	}
	return items, adoptions
}

// takeoverSameSysctl reports whether o writes a sysctl the value the
// kernel holds already ("sysctl KEY = VALUE").
func takeoverSameSysctl(e *cliEnv, o takeoverOp) bool {
	key, val, ok := strings.Cut(strings.TrimPrefix(o.Description, "sysctl "), " = ")
	return ok && o.Op == "create" && strings.HasPrefix(o.Item, "sysctl/") &&
		strings.TrimSpace(e.exec("sysctl", "-n", key)) == val
}

// takeoverPlanOp is the operation of one line of plan's text ("  3. create
// address/..."); ok is false for other lines.
func takeoverPlanOp(line string) (string, bool) {
	num, rest, ok := strings.Cut(strings.TrimSpace(line), ". ")
	if !ok || num == "" || strings.Trim(num, "0123456789") != "" {
		return "", false
	}
	return rest, true
}

// takeoverSecondApply checks that apply without --adopt, right after, has
// nothing to do: no operation, no kernel event. It returns how many of
// either it saw.
func takeoverSecondApply(t *testing.T, e *cliEnv, mon *takeoverMonitor, file string) int {
	t.Helper()
	ops := takeoverOps(t, e.mustRun(0, "apply", "--json", file).stdout)
	events := mon.until()
	if len(ops)+len(events) > 0 {
		t.Errorf("the second apply wrote: operations %v, kernel events:\n%s", ops, strings.Join(events, "\n"))
	}
	return len(ops) + len(events)
}

// takeoverRemoval applies an intent without objects and checks that it
// deletes exactly the adopted objects: its delete operations are the
// adoptions but for the NICs (never deleted), none of the configuration's
// links, addresses, routes and rules is left, and the kernel deleted
// nothing of the test's own (the foreign sentinel on uplink0, the
// stand-ins). It returns how many objects were deleted.
func takeoverRemoval(t *testing.T, e *cliEnv, mon *takeoverMonitor, c oracleCase, adopted []string) int {
	t.Helper()
	ops := takeoverOps(t, e.mustRun(0, "apply", "--json", e.writeFile("empty.json", `{"version": 1}`)).stdout)
	deleted := takeoverItems(ops, "delete")
	want := slices.DeleteFunc(slices.Clone(adopted), func(item string) bool { return takeoverIsNIC(c, item) })
	if !slices.Equal(deleted, want) || len(deleted) != len(ops) {
		t.Errorf("the empty intent ran %v\nwant the deletion of exactly the adopted %v", ops, want)
	}
	for _, l := range takeoverDeletions(mon.until()) {
		if takeoverTestOwn.MatchString(l) {
			t.Errorf("the empty intent deleted an object it never adopted: %s", l)
		}
	}
	left := oracleView(e, false)
	for _, l := range strings.Split(left, "\n") {
		if takeoverOfConfiguration(c, l) {
			t.Errorf("after the removal the kernel still has %q", l)
		}
	}
	takeoverSentinelStays(t, e)
	return len(deleted)
}

// takeoverTestOwn matches a monitor line of the test's own objects: the
// foreign sentinel, uplink0, the stand-ins' peers.
var takeoverTestOwn = regexp.MustCompile(`198\.18\.|^Deleted \d+: (uplink0|standin)|dev uplink0`)

// takeoverIsNIC reports whether an item is one of c's NICs (interface/NAME
// of a physical interface), which no intent deletes.
func takeoverIsNIC(c oracleCase, item string) bool {
	for _, ifc := range c.in.Interfaces {
		if item == "interface/"+ifc.Name && ifc.Type == "physical" {
			return true
		}
	}
	return false
}

// takeoverOfConfiguration reports whether a line of oracleView is an
// address, a route or a rule of c's, or a link c creates.
func takeoverOfConfiguration(c oracleCase, line string) bool {
	for _, ifc := range c.in.Interfaces {
		if ifc.Type != "physical" && strings.HasPrefix(line, "link "+ifc.Name+" ") {
			return true
		}
		for _, a := range ifc.Addresses {
			if line == "addr "+ifc.Name+" "+a {
				return true
			}
		}
	}
	for _, r := range c.in.Routes {
		if strings.HasPrefix(line, "route ") && strings.Contains(line, " via="+r.Via+" ") && r.Via != "" {
			return true
		}
	}
	for _, r := range c.in.Rules {
		if strings.HasPrefix(line, "rule ") && strings.Contains(line, fmt.Sprintf(" table=%d", r.Table)) {
			return true
		}
	}
	return false
}

// takeoverSentinelStays checks that the foreign address and route on uplink0
// are still there.
func takeoverSentinelStays(t *testing.T, e *cliEnv) {
	t.Helper()
	if !strings.Contains(e.ip("addr", "show", "dev", "uplink0"), takeoverSentinelAddr) ||
		!strings.Contains(e.ip("route", "show", takeoverSentinelRoute), "via "+takeoverSentinelPeer) {
		t.Errorf("the foreign address %s or route %s on uplink0 is gone:\n%s\n%s", takeoverSentinelAddr, takeoverSentinelRoute,
			e.ip("addr"), e.ip("route"))
	}
}
