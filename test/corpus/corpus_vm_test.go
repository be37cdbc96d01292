//go:build vmtest

package corpus_test

import (
	"context"
	"embed"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/netagent/netagent/test/vm"
)

// The VM has none of the package's files: the VM cases are embedded.
//
//go:embed netplan-bonding-router.json netplan-vlan.json nmstate-bond-bridge-vlan.json
//go:embed nmstate-linux-bridge-vlan-filtering.json systemd-vlan-on-bond.json ifupdown2-bond-lacp.json
var vmFiles embed.FS

// The corpus cases that need bonding, 802.1Q or bridge VLAN filtering, in
// the VM. The VM has neither iproute2 nor iptables, so the cases drive the
// link and l3 configurators the way `netagent apply` does (read back,
// reconcile, again until a pass runs nothing) and check the kernel over
// netlink. Every "physical" interface is a dummy link, up.
func TestInVMCorpus(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVMCorpus$' ./test/corpus/")
	}
	for _, f := range vmCaseFiles() {
		t.Run(strings.TrimSuffix(f, ".json"), func(t *testing.T) { runVMCase(t, f) })
	}
}

func runVMCase(t *testing.T, file string) {
	data, err := vmFiles.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	in := vmIntent(t, file, data)
	if len(in.Sysctls) > 0 || len(in.Firewall.Chains) > 0 {
		t.Fatalf("%s: VM cases hold no sysctls or chains (their configurator needs iptables)", file)
	}
	tgt := testns.New(t)
	for _, ifc := range in.Interfaces {
		if ifc.Type == "physical" {
			vmAddDummy(t, tgt, ifc.Name)
		}
	}
	vmPlaceForeign(t, tgt)
	before := vmStableSnapshot(t, tgt)

	stateDir := t.TempDir()
	reg := &reconciler.TypeRegistry{}
	if err := link.Register(reg, tgt, stateDir); err != nil {
		t.Fatal(err)
	}
	if err := l3.Register(reg, tgt); err != nil {
		t.Fatal(err)
	}
	intended, err := render.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if n := vmApply(t, tgt, stateDir, reg, intended); n == 0 {
		t.Fatal("the first apply ran nothing")
	}
	vmCheckKernel(t, tgt, in)
	vmCheckBridgeVLANs(t, tgt, intended)
	applied := vmStableSnapshot(t, tgt)
	if n := vmApply(t, tgt, stateDir, reg, intended); n != 0 {
		t.Errorf("the second apply ran %d operations", n)
	}
	if again := vmStableSnapshot(t, tgt); again != applied {
		t.Errorf("the second apply changed the kernel:\n%s", lineDiff(applied, again))
	}
	if rep := host.Compare(vmReadBack(t, tgt, stateDir, intended), intended); !rep.Converged() {
		t.Errorf("check: %v", rep.Diffs)
	}
	vmCheckImport(t, tgt, stateDir, reg, intended)
	vmApply(t, tgt, stateDir, reg, dg.New("intended"))
	if after := vmStableSnapshot(t, tgt); after != before {
		t.Errorf("removing the intent did not leave the namespace as it was:\n%s", lineDiff(before, after))
	}
}

// vmCheckImport checks the round trip of import kernel's converter: the
// items read back, turned into an intent (render.ToIntent) and rendered
// again, need no operation.
func vmCheckImport(t *testing.T, tgt *netnsx.Target, stateDir string, reg reconciler.Registry, intended *dg.Graph) {
	t.Helper()
	var list []dg.Item
	for it := range vmReadBack(t, tgt, stateDir, intended).Items() {
		list = append(list, it)
	}
	imported, err := render.Render(render.ToIntent(list))
	if err != nil {
		t.Fatalf("rendering the imported intent: %v", err)
	}
	if n := vmApply(t, tgt, stateDir, reg, imported); n != 0 {
		t.Errorf("applying the imported intent ran %d operations", n)
	}
}

func vmIntent(t *testing.T, file string, data []byte) *intent.Intent {
	t.Helper()
	in, err := intent.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := intent.Merge(map[string]*intent.Intent{file: in})
	if err != nil {
		t.Fatal(err)
	}
	if err := merged.Validate(); err != nil {
		t.Fatal(err)
	}
	return merged
}

func vmAddDummy(t *testing.T, tgt *netnsx.Target, name string) {
	t.Helper()
	d := &netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: name}}
	if err := tgt.NL.LinkAdd(d); err != nil {
		t.Fatalf("adding dummy %s: %v", name, err)
	}
	l, err := tgt.NL.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := tgt.NL.LinkSetUp(l); err != nil {
		t.Fatal(err)
	}
}

// vmPlaceForeign adds objects netagent does not own: a dummy link with an
// address and a route, a rule and a permanent neighbour.
func vmPlaceForeign(t *testing.T, tgt *netnsx.Target) {
	t.Helper()
	vmAddDummy(t, tgt, "foreign0")
	l, err := tgt.NL.LinkByName("foreign0")
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := netlink.ParseAddr("10.97.0.1/24")
	_, dst, _ := net.ParseCIDR("10.99.0.0/16")
	_, src, _ := net.ParseCIDR("10.98.0.0/16")
	rule := netlink.NewRule()
	rule.Priority, rule.Src, rule.Table = 500, src, 50
	for _, err := range []error{
		tgt.NL.AddrAdd(l, addr),
		tgt.NL.RouteAdd(&netlink.Route{Dst: dst, Gw: net.ParseIP("10.97.0.254"), LinkIndex: l.Attrs().Index}),
		tgt.NL.RuleAdd(rule),
		tgt.NL.NeighAdd(&netlink.Neigh{LinkIndex: l.Attrs().Index, IP: net.ParseIP("10.97.0.9"),
			HardwareAddr: net.HardwareAddr{2, 0, 0, 0, 0x97, 9}, State: netlink.NUD_PERMANENT}),
	} {
		if err != nil {
			t.Fatalf("placing foreign objects: %v", err)
		}
	}
}

// vmReadBack reads the namespace back as `netagent apply` does.
func vmReadBack(t *testing.T, tgt *netnsx.Target, stateDir string, hint *dg.Graph) *dg.Graph {
	t.Helper()
	var cur []dg.Item
	linkReadBack := func(tgt *netnsx.Target, hint *dg.Graph) ([]dg.Item, error) { return link.ReadBack(tgt, stateDir, hint) }
	l3ReadBack := func(tgt *netnsx.Target, hint *dg.Graph) ([]dg.Item, error) { return l3.ReadBack(tgt, stateDir, hint) }
	for _, read := range []func(*netnsx.Target, *dg.Graph) ([]dg.Item, error){linkReadBack, l3ReadBack} {
		got, err := read(tgt, hint)
		if err != nil {
			t.Fatal(err)
		}
		cur = append(cur, got...)
	}
	return dg.New("current", cur...)
}

// vmApply reconciles towards intended on fresh read-backs until a pass
// runs nothing (at most host.MaxPasses passes that run something, as
// apply does), failing on an error or a blocked item, and returns the
// number of operations run.
func vmApply(t *testing.T, tgt *netnsx.Target, stateDir string, reg reconciler.Registry, intended *dg.Graph) int {
	t.Helper()
	total := 0
	for pass := 0; pass <= host.MaxPasses; pass++ {
		st := reconciler.New(reg).Reconcile(context.Background(), vmReadBack(t, tgt, stateDir, intended), intended)
		if st.WaitForAsyncOps != nil {
			st.WaitForAsyncOps()
		}
		if st.Err != nil || len(st.Blocked) > 0 {
			t.Fatalf("apply: %v, blocked %v\n%s", st.Err, st.Blocked, st.OperationLog)
		}
		if len(st.OperationLog) == 0 {
			return total
		}
		total += len(st.OperationLog)
	}
	t.Fatalf("apply: still operations after %d passes", host.MaxPasses)
	return total
}

// vmCheckKernel compares the kernel, read over netlink, with the intent.
func vmCheckKernel(t *testing.T, tgt *netnsx.Target, in *intent.Intent) {
	t.Helper()
	for i := range in.Interfaces {
		vmCheckLink(t, tgt, &in.Interfaces[i])
	}
	for i := range in.Routes {
		vmCheckRoute(t, tgt, &in.Routes[i])
	}
	for _, n := range in.Neighbors {
		l := vmLink(t, tgt, n.Dev)
		neighs, err := tgt.NL.NeighList(l.Attrs().Index, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(neighs, func(k netlink.Neigh) bool {
			return k.IP.String() == netip.MustParseAddr(n.IP).String() && strings.EqualFold(k.HardwareAddr.String(), n.MAC) &&
				k.State&netlink.NUD_PERMANENT != 0
		}) {
			t.Errorf("neighbour %s %s: not in the kernel", n.Dev, n.IP)
		}
	}
}

func vmLink(t *testing.T, tgt *netnsx.Target, name string) netlink.Link {
	t.Helper()
	l, err := tgt.NL.LinkByName(name)
	if err != nil {
		t.Fatalf("interface %s: %v", name, err)
	}
	return l
}

func vmCheckLink(t *testing.T, tgt *netnsx.Target, ifc *intent.Interface) {
	t.Helper()
	l := vmLink(t, tgt, ifc.Name)
	a := l.Attrs()
	errf := func(format string, args ...any) {
		t.Errorf("interface %s: %s", ifc.Name, fmt.Sprintf(format, args...))
	}
	if kind, ok := linkKindsVM[ifc.Type]; ok && l.Type() != kind {
		errf("kind %s, want %s", l.Type(), kind)
	}
	if ifc.MTU != 0 && a.MTU != ifc.MTU {
		errf("mtu %d, want %d", a.MTU, ifc.MTU)
	}
	if up := a.Flags&net.FlagUp != 0; up != (ifc.State != "down") {
		errf("admin up %v, want state %q", up, ifc.State)
	}
	master := ""
	if a.MasterIndex != 0 {
		if m, err := tgt.NL.LinkByIndex(a.MasterIndex); err == nil {
			master = m.Attrs().Name
		}
	}
	if master != ifc.Master {
		errf("master %q, want %q", master, ifc.Master)
	}
	switch k := l.(type) {
	case *netlink.Bond:
		if ifc.Bond != nil {
			if k.Mode.String() != string(ifc.Bond.EffectiveMode()) {
				errf("bond mode %s, want %s", k.Mode, ifc.Bond.EffectiveMode())
			}
			if k.Miimon != ifc.Bond.MIIMon.Units() {
				errf("miimon %d, want %d", k.Miimon, ifc.Bond.MIIMon.Units())
			}
		}
	case *netlink.Vlan:
		parent, _ := tgt.NL.LinkByIndex(a.ParentIndex)
		if k.VlanId != ifc.VLAN.ID || parent == nil || parent.Attrs().Name != ifc.VLAN.Parent {
			errf("vlan id %d on %v, want %d on %s", k.VlanId, parent, ifc.VLAN.ID, ifc.VLAN.Parent)
		}
		if got := k.VlanProtocol.String(); got != string(ifc.VLAN.EffectiveProtocol()) {
			errf("vlan protocol %s, want %s", got, ifc.VLAN.EffectiveProtocol())
		}
	case *netlink.Bridge:
		if ifc.Bridge != nil && ifc.Bridge.VLANFiltering != (k.VlanFiltering != nil && *k.VlanFiltering) {
			errf("vlan filtering %v, want %v", k.VlanFiltering, ifc.Bridge.VLANFiltering)
		}
	}
	addrs, err := tgt.NL.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range ifc.Addresses {
		p := netip.MustParsePrefix(want)
		if !slices.ContainsFunc(addrs, func(a netlink.Addr) bool {
			ones, _ := a.Mask.Size()
			return a.IP.String() == p.Addr().String() && ones == p.Bits()
		}) {
			errf("address %s missing", want)
		}
	}
}

var linkKindsVM = map[intent.LinkType]string{"bond": "bond", "vlan": "vlan", "bridge": "bridge"}

func vmCheckRoute(t *testing.T, tgt *netnsx.Target, r *intent.Route) {
	t.Helper()
	dst, err := r.Dst()
	if err != nil {
		t.Fatal(err)
	}
	fam := netlink.FAMILY_V4
	if r.EffectiveFamily() == intent.FamilyIPv6 {
		fam = netlink.FAMILY_V6
	}
	routes, err := tgt.NL.RouteListFiltered(fam, &netlink.Route{Table: int(r.EffectiveTable())}, netlink.RT_FILTER_TABLE)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range routes {
		kdst := "0.0.0.0/0"
		if fam == netlink.FAMILY_V6 {
			kdst = "::/0"
		}
		if k.Dst != nil {
			kdst = k.Dst.String()
		}
		if kdst != dst.String() || uint32(k.Priority) != r.EffectiveMetric() {
			continue
		}
		if k.Protocol != items.RouteProtocol {
			t.Errorf("route %s: protocol %d", dst, k.Protocol)
		}
		if r.Via != "" && k.Gw.String() != netip.MustParseAddr(r.Via).String() {
			t.Errorf("route %s: via %s, want %s", dst, k.Gw, r.Via)
		}
		return
	}
	t.Errorf("route %s table %d metric %d: not in the kernel", dst, r.EffectiveTable(), r.EffectiveMetric())
}

// vmCarrierRoute reports whether an IPv6 route of the kernel is one it
// adds when a link gets its carrier (fe80::/64, ff00::/8, the local route
// of a link-local address): an 802.3ad bond without a partner, or a bridge
// with STP, gets it seconds after netagent is done.
func vmCarrierRoute(r netlink.Route) bool {
	if r.Dst == nil {
		return false
	}
	ones, _ := r.Dst.Mask.Size()
	return r.Dst.IP.IsLinkLocalUnicast() || (r.Dst.IP.IsMulticast() && ones == 8)
}

// vmStableSnapshot waits until two snapshots in a row are the same: the
// kernel adds IPv6 link-local addresses and their routes a moment after a
// link gets its carrier.
func vmStableSnapshot(t *testing.T, tgt *netnsx.Target) string {
	t.Helper()
	prev := ""
	wait := 20 * time.Millisecond
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		cur := vmSnapshot(t, tgt)
		if cur == prev {
			return cur
		}
		prev = cur
		time.Sleep(wait)
		wait = min(2*wait, 500*time.Millisecond)
	}
	t.Fatal("the namespace never settled")
	return ""
}

// vmSnapshot is the namespace over netlink, one object a line: links (name,
// kind, flags, mtu, master, alias), addresses, routes of every table,
// rules and permanent neighbours.
func vmSnapshot(t *testing.T, tgt *netnsx.Target) string {
	t.Helper()
	var lines []string
	links, err := tgt.NL.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	for _, l := range links {
		a := l.Attrs()
		// Not FlagRunning: the carrier of a bridge follows its ports' STP
		// states, seconds later.
		lines = append(lines, fmt.Sprintf("link %s %s flags %v mtu %d master %q alias %q mac %s",
			a.Name, l.Type(), a.Flags&^net.FlagRunning, a.MTU, names[a.MasterIndex], a.Alias, a.HardwareAddr))
		addrs, err := tgt.NL.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			t.Fatal(err)
		}
		for _, ad := range addrs {
			if ad.IP.IsLinkLocalUnicast() {
				continue // the kernel's, when the link gets its carrier
			}
			lines = append(lines, fmt.Sprintf("addr %s %s", a.Name, ad.IPNet))
		}
		neighs, err := tgt.NL.NeighList(a.Index, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range neighs {
			if n.State&netlink.NUD_PERMANENT != 0 {
				lines = append(lines, fmt.Sprintf("neigh %s %s %s", a.Name, n.IP, n.HardwareAddr))
			}
		}
	}
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		routes, err := tgt.NL.RouteListFiltered(fam, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range routes {
			if r.Protocol == unix.RTPROT_KERNEL && fam == netlink.FAMILY_V6 && vmCarrierRoute(r) {
				continue
			}
			lines = append(lines, fmt.Sprintf("route %v dev %s gw %s table %d metric %d proto %d type %d",
				r.Dst, names[r.LinkIndex], r.Gw, r.Table, r.Priority, r.Protocol, r.Type))
		}
		rules, err := tgt.NL.RuleList(fam)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rules {
			lines = append(lines, fmt.Sprintf("rule %d from %v to %v table %d", r.Priority, r.Src, r.Dst, r.Table))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
