package render

import (
	"encoding/json"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// itemsOf lists a graph's items.
func itemsOf(g *dg.Graph) []dg.Item {
	var out []dg.Item
	for it := range g.Items() {
		out = append(out, it)
	}
	return out
}

// reparse writes an intent as JSON and parses it back, as `netagent show
// --json | netagent apply` would.
func reparse(t *testing.T, in *intent.Intent) (*intent.Intent, []byte) {
	t.Helper()
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out, err := intent.Parse(data)
	if err != nil {
		t.Fatalf("ToIntent's output does not parse: %v\n%s", err, data)
	}
	return out, data
}

// sameItems checks that two graphs hold the same refs with equal items.
func sameItems(t *testing.T, got, want *dg.Graph) {
	t.Helper()
	if g, w := got.Refs(), want.Refs(); !slices.Equal(g, w) {
		t.Fatalf("refs differ:\n got %v\nwant %v", g, w)
	}
	for _, ref := range want.Refs() {
		w, _ := want.Get(ref)
		g, _ := got.Get(ref)
		if !g.Equal(w) {
			t.Errorf("%s: got %s, want %s", ref, g, w)
		}
	}
}

// ToIntent(Render(x)), written as JSON and parsed again, renders to the
// same items as x, for both examples; for the gateway the document is the
// golden one (the example, sorted, with defaults left out).
func TestToIntentRoundTrip(t *testing.T) {
	for _, name := range []string{"gateway", "bonded"} {
		t.Run(name, func(t *testing.T) {
			g := mustRender(t, parseFile(t, "../../examples/"+name+".json"))
			back, data := reparse(t, ToIntent(itemsOf(g)))
			sameItems(t, mustRender(t, back), g)
			golden(t, name+".tointent.json", string(data)+"\n")
		})
	}
}

// Items read back without an intent (what `netagent show` sees) become a
// valid intent: both ends of an owned veth pair give one interface, links
// netagent does not own become physical interfaces (lo only when named),
// bond options the mode does not use are dropped, the kernel's VXLAN port
// is written out, twin chains merge into "both", and slashes in sysctl
// keys go back to dots.
func TestToIntentReadBack(t *testing.T) {
	rules := [][]string{{"-i", "lan0", "-m", "comment", "--comment", "it's \"lan\"", "-j", "ACCEPT"}}
	list := []dg.Item{
		&items.Link{IfName: "lo", Index: 1, AdminUp: true},
		&items.Link{IfName: "uplink0", Index: 2, AdminUp: true, Carrier: true},
		&items.Link{IfName: "eth9", Index: 3},
		&items.Interface{IfName: "v0", Kind: items.KindVeth, MTU: 1500, AdminUp: true,
			MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, Attrs: &items.VethAttrs{Peer: "v0p"}},
		&items.Interface{IfName: "v0p", Kind: items.KindVeth, MTU: 1500, AdminUp: true,
			MAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, Attrs: &items.VethAttrs{Peer: "v0"}},
		&items.Interface{IfName: "bond0", Kind: items.KindBond, MTU: 1500, AdminUp: true,
			Attrs: &items.BondAttrs{Mode: "balance-rr", LacpRate: "slow", XmitHashPolicy: "layer2", MinLinks: 0}},
		&items.Port{IfName: "eth9", Master: "bond0", MasterKind: items.KindBond},
		&items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true,
			Attrs: &items.BridgeAttrs{ForwardDelay: 15 * time.Second}},
		&items.Port{IfName: "v0p", Master: "br0", MasterKind: items.KindBridge},
		&items.Interface{IfName: "vx0", Kind: items.KindVxlan, AdminUp: true,
			Attrs: &items.VxlanAttrs{VNI: 5, Parent: "uplink0", Learning: true}},
		&items.Address{Dev: "br0", Prefix: mustPrefix("10.1.0.1/24")},
		&items.Route{Dst: mustPrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("10.1.0.254"), Table: 254},
		&items.Route{Dst: mustPrefix("10.9.0.0/16"), Dev: "lo", Table: 254, Scope: items.ScopeLink},
		&items.Route{Dst: mustPrefix("::/0"), Table: 254, Metric: 1024, Kind: items.RouteBlackhole},
		&items.Rule{Priority: 5, Family: items.FamilyIPv6, Mark: 3, Mask: 0xffffffff, Table: 9},
		&items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "C", Rules: rules},
		&items.IptablesChain{Family: items.FamilyIPv6, Table: "filter", Chain: "C", Rules: rules},
		&items.IptablesChain{Family: items.FamilyIPv6, Table: "raw", Chain: "R", JumpFrom: "OUTPUT", Position: 3},
		&items.Sysctl{Key: "net.ipv4.conf.br0/7.rp_filter", Value: "4096\t 1"},
	}
	in, data := reparse(t, ToIntent(list))
	if err := in.Validate(); err != nil {
		t.Fatalf("invalid:\n%s\n%s", errorLines(err), data)
	}
	golden(t, "readback.tointent.json", string(data)+"\n")
}

// JoinRule quotes only what needs it, and SplitRule gives the arguments
// back.
func TestJoinRule(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-o", "uplink0", "-j", "MASQUERADE"}, "-o uplink0 -j MASQUERADE"},
		{[]string{"--comment", "two words"}, "--comment 'two words'"},
		{[]string{"--comment", "it's"}, `--comment 'it'\''s'`},
		{[]string{"--comment", ""}, "--comment ''"},
		{[]string{"--ctstate", "RELATED,ESTABLISHED", "!", "-s", "10.0.0.0/8"}, "--ctstate RELATED,ESTABLISHED ! -s 10.0.0.0/8"},
		{[]string{`a\b"c$d`}, `'a\b"c$d'`},
	}
	for _, c := range cases {
		if got := JoinRule(c.args); got != c.want {
			t.Errorf("JoinRule(%q) = %s, want %s", c.args, got, c.want)
		}
		back, err := intent.SplitRule(JoinRule(c.args))
		if err != nil || !slices.Equal(back, c.args) {
			t.Errorf("SplitRule(JoinRule(%q)) = %q, %v", c.args, back, err)
		}
	}
}

// Whatever SplitRule accepts, JoinRule writes back to the same arguments.
func FuzzJoinRule(f *testing.F) {
	for _, s := range []string{`-j ACCEPT`, `--comment "a b" -j 'x y'`, `a\ b "c\"d" ''`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rule string) {
		args, err := intent.SplitRule(rule)
		if err != nil {
			return
		}
		back, err := intent.SplitRule(JoinRule(args))
		if err != nil || !slices.Equal(back, args) {
			t.Fatalf("%q: split %q, joined %q, split again %q (%v)", rule, args, JoinRule(args), back, err)
		}
	})
}

// TestToIntentIPv6Section: the sysctls an ipv6 acceptRA section renders
// come back as that section (Render(ToIntent(Render(x))) renders the same
// items, and the intent validates); WithDHCP6 adds dhcp6 and takes the
// lone disable_ipv6 out of the sysctls.
func TestToIntentIPv6Section(t *testing.T) {
	in := parse(t, `{"version": 1, "interfaces": [
	  {"name": "up0", "type": "physical", "ipv6": {"acceptRA": true, "acceptRAPrefixes": false}},
	  {"name": "up1", "type": "physical", "ipv6": {"dhcp6": true}}]}`)
	g := mustRender(t, in)
	var list []dg.Item
	for it := range g.Items() {
		list = append(list, it)
	}
	back := ToIntent(list)
	WithDHCP6(back, "up1")
	if len(back.Sysctls) != 0 {
		t.Errorf("sysctls %v left beside the ipv6 sections", back.Sysctls)
	}
	again, err := Render(back)
	if err != nil {
		t.Fatalf("ToIntent's intent does not render: %v", err)
	}
	if got, want := describe(again), describe(g); got != want {
		t.Errorf("rendered again:\n%s\nwant:\n%s", got, want)
	}
}
