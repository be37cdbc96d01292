package l3

import (
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// With adopt, someone else's rule that is exactly the item is taken over
// without a moment where neither is there: netagent's copy is added, then
// theirs deleted (two requests, in that order); one rule of the priority
// is left, of netagent's protocol. Without adopt it stays refused.
func TestFakeRuleAdopt(t *testing.T) {
	e := newFakeEnv(t)
	r := &items.Rule{Family: items.FamilyIPv4, Priority: 500, From: pfx("10.61.0.0/24"), Table: 100}
	theirs := netlink.NewRule()
	theirs.Family, theirs.Priority, theirs.Src, theirs.Table, theirs.Protocol = unix.AF_INET, 500, ipnet("10.61.0.0/24"), 100, unix.RTPROT_STATIC
	e.k.addRule(theirs)
	wantNotOwned(t, "create over theirs without adopt", e.rule.Create(ctx, r))
	e.k.Take()
	cfg := &ruleConfigurator{open: e.k.open, adopt: true}
	must(t, cfg.Create(ctx, r))
	if got := e.k.Take(); !slices.Equal(got, []string{"RTM_NEWRULE", "RTM_DELRULE"}) {
		t.Errorf("requests of the adoption: %v, want ours added, then theirs deleted", got)
	}
	var at500 []netlink.Rule
	for _, k := range e.k.rules {
		if k.Priority == 500 {
			at500 = append(at500, k)
		}
	}
	if len(at500) != 1 || at500[0].Protocol != items.RouteProtocol {
		t.Errorf("rules of priority 500 after the adoption: %+v", at500)
	}
	if n := e.writes(func() { must(t, cfg.Create(ctx, r)) }); n != 0 {
		t.Errorf("a second create wrote %d times", n)
	}
}

// An adoption whose delete of their rule the kernel would apply to an
// earlier rule instead (rule_find takes the first that has every
// selector the request names) is refused before anything is written,
// and Adoptions leaves it out (a plan keeps its clash).
func TestFakeRuleAdoptRefusedWhenShadowed(t *testing.T) {
	e := newFakeEnv(t)
	r := &items.Rule{Family: items.FamilyIPv4, Priority: 500, From: pfx("10.61.0.0/24"), Table: 100}
	first := netlink.NewRule()
	first.Family, first.Priority, first.Src, first.Table, first.IifName, first.Protocol = unix.AF_INET, 500, ipnet("10.61.0.0/24"), 100, "up0", unix.RTPROT_STATIC
	e.k.addRule(first)
	theirs := netlink.NewRule()
	theirs.Family, theirs.Priority, theirs.Src, theirs.Table, theirs.Protocol = unix.AF_INET, 500, ipnet("10.61.0.0/24"), 100, unix.RTPROT_STATIC
	e.k.addRule(theirs)
	e.k.Take()
	if found, err := e.k.Adoptions(dg.New("intended", r)); err != nil || len(found) > 0 {
		t.Errorf("Adoptions: %v %v, want none (plan keeps the clash)", found, err)
	}
	cfg := &ruleConfigurator{open: e.k.open, adopt: true}
	wantNotOwned(t, "adoption behind a rule its delete would take", cfg.Create(ctx, r))
	if got := e.k.Take(); len(got) != 0 {
		t.Errorf("the refused adoption sent %v", got)
	}
}

// With adopt, someone's permanent neighbour entry is replaced in place
// with ours: the mark alone for one of the item's MAC, the item's MAC too
// for one of another; never a delete.
func TestFakeNeighborAdopt(t *testing.T) {
	e := newFakeEnv(t)
	e.k.addNeigh("up0", "10.0.0.9", "02:00:00:00:00:09", netlink.NUD_PERMANENT, 0)
	e.k.addNeigh("up0", "10.0.0.10", "02:00:00:00:00:aa", netlink.NUD_PERMANENT, 0)
	same := &items.Neighbor{Dev: "up0", IP: ip("10.0.0.9"), MAC: net.HardwareAddr{2, 0, 0, 0, 0, 9}}
	other := &items.Neighbor{Dev: "up0", IP: ip("10.0.0.10"), MAC: net.HardwareAddr{2, 0, 0, 0, 0, 0x10}}
	wantNotOwned(t, "create over theirs without adopt", e.neigh.Create(ctx, same))
	e.k.Take()
	cfg := &neighborConfigurator{open: e.k.open, adopt: true}
	must(t, cfg.Create(ctx, same))
	must(t, cfg.Create(ctx, other))
	if got := e.k.Take(); !slices.Equal(got, []string{"RTM_NEWNEIGH replace", "RTM_NEWNEIGH replace"}) {
		t.Errorf("requests of the adoptions: %v, want two in-place replaces", got)
	}
	for _, n := range e.k.neighs {
		want := map[string]string{"10.0.0.9": "02:00:00:00:00:09", "10.0.0.10": "02:00:00:00:00:10"}[n.ip.String()]
		if !n.owned() || n.mac.String() != want {
			t.Errorf("entry %s after the adoption: mac %s proto %d, want %s, ours", n.ip, n.mac, n.proto, want)
		}
	}
}

// With adopt, someone's address of the item's identity but another label
// or scope stays refused (the kernel changes neither in place: taking it
// over would delete it): the create sends nothing and fails naming both
// labels and errAdoptDeletes, Clashes predicts that very error, and
// Adoptions leaves the address out, so that plan and apply agree. An IPv6
// address of another prefix length, and one the kernel made (link-local),
// stay refused.
func TestFakeAddressAdoptDiffers(t *testing.T) {
	e := newFakeEnv(t)
	e.k.addAddr("up0", "10.0.0.2/24", unix.RTPROT_STATIC)
	e.k.addAddr("up0", "2001:db8::2/64", unix.RTPROT_STATIC)
	e.k.Take()
	cfg := &addressConfigurator{nlh: e.k, open: e.k.open, promotes: e.k.promotes, adopt: true}
	labelled := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.2/24"), Label: "up0:web"}
	scoped := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.2/24"), Scope: items.ScopeLink}
	for _, a := range []*items.Address{labelled, scoped} {
		err := cfg.Create(ctx, a)
		if !errors.Is(err, ErrNotOwned) || !errors.Is(err, errAdoptDeletes) {
			t.Errorf("adopting %v: %v, want ErrNotOwned and errAdoptDeletes", a, err)
		}
		clashes, cerr := e.k.Clashes(dg.New("intended", a))
		if cerr != nil || clashes[dg.Ref(a)] == nil || clashes[dg.Ref(a)].Error() != err.Error() {
			t.Errorf("Clashes of %v: %v %v, want the create's error %q", a, clashes, cerr, err)
		}
		if found, err := e.k.Adoptions(dg.New("intended", a)); err != nil || len(found) > 0 {
			t.Errorf("Adoptions of %v: %v %v, want none", a, found, err)
		}
		batch := cfg.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpCreate, New: a}})
		if len(batch) != 1 || batch[0] == nil || !strings.HasSuffix(err.Error(), batch[0].Error()) {
			t.Errorf("a batch's create of %v: %v, want the single create's %q", a, batch, err)
		}
	}
	if err := cfg.Create(ctx, labelled); err == nil || !strings.Contains(err.Error(), "with label up0 and scope global (the intent's: label up0:web, scope global)") {
		t.Errorf("the refusal does not name both labels: %v", err)
	}
	if got := e.k.Take(); len(got) > 0 {
		t.Errorf("the refused adoptions sent %v, want nothing", got)
	}
	if k, ok := e.k.addrOn("up0", "10.0.0.2/24"); !ok || k.owned() || k.label != "up0" {
		t.Errorf("after the refusals: %+v (%v), want it theirs as it was", k, ok)
	}
	wantNotOwned(t, "an IPv6 address of another length", cfg.Create(ctx, &items.Address{Dev: "up0", Prefix: pfx("2001:db8::2/96")}))
	e.k.addAddr("up0", "fe80::2/64", 0)
	wantNotOwned(t, "the kernel's link-local address", cfg.Create(ctx, &items.Address{Dev: "up0", Prefix: pfx("fe80::2/64")}))
}

// The kernel's own routes (an address's subnet route, protocol kernel;
// a router advertisement's, protocol ra) are no tool's: adopt leaves them
// refused, and Adoptions leaves them out.
func TestFakeRouteAdoptNotTheKernels(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	up := e.k.index("up0")
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("172.16.7.0/24"), LinkIndex: up, Protocol: unix.RTPROT_KERNEL, Scope: netlink.SCOPE_LINK})
	e.k.addRoute(netlink.Route{Family: unix.AF_INET6, Dst: ipnet("2001:db8:7::/64"), Gw: net.ParseIP("fe80::1"), LinkIndex: up, Protocol: unix.RTPROT_RA, Priority: 1024})
	kernels := &items.Route{Dst: pfx("172.16.7.0/24"), Dev: "up0", Scope: items.ScopeLink}
	ra := &items.Route{Dst: pfx("2001:db8:7::/64"), Gw: ip("fe80::1"), Dev: "up0", Metric: 1024}
	cfg := &routeConfigurator{nlh: e.k, open: e.k.open, adopt: true}
	for _, r := range []*items.Route{kernels, ra} {
		wantNotOwned(t, "the kernel's route "+r.Name(), cfg.Create(ctx, r))
	}
	if found, err := e.k.Adoptions(dg.New("intended", kernels, ra)); err != nil || len(found) > 0 {
		t.Errorf("Adoptions: %v %v, want none", found, err)
	}
}
