package firewall

import (
	"slices"
	"testing"

	"github.com/netagent/netagent/items"
)

// A chain of its own becomes an IptablesChain jumped to from the built-in
// chain whose bare jump names it (that jump is then not a refusal); every
// other rule of a built-in chain, and a chain jumped to from two places,
// is a Foreign with its Why.
func TestOtherChains(t *testing.T) {
	v4 := items.FamilyIPv4
	got := OtherChains([]ForeignChain{
		{Family: v4, Table: "filter", Chain: "INPUT", BuiltIn: true, Rules: [][]string{{"-s", "10.0.0.0/8", "-j", "ACCEPT"}, {"-j", "MINE"}, {"-j", "DROP"}}},
		{Family: v4, Table: "filter", Chain: "FORWARD", BuiltIn: true, Rules: [][]string{{"-j", "TWICE"}}},
		{Family: v4, Table: "filter", Chain: "OUTPUT", BuiltIn: true, Rules: [][]string{{"-j", "TWICE"}}},
		{Family: v4, Table: "filter", Chain: "MINE", Rules: [][]string{{"-i", "lan0", "-j", "RETURN"}}},
		{Family: v4, Table: "filter", Chain: "TWICE"},
		{Family: v4, Table: "filter", Chain: "ALONE", Rules: [][]string{{"-j", "ACCEPT"}}},
	})
	var desc []string
	for _, it := range got {
		switch it := it.(type) {
		case *items.IptablesChain:
			desc = append(desc, "chain "+it.Name()+" from "+it.JumpFrom)
		case *items.Foreign:
			if it.Why == "" {
				t.Errorf("%s has no why", it.Desc)
			}
			desc = append(desc, "refused "+it.Desc)
		}
	}
	want := []string{
		"refused ipv4/filter/INPUT rule -s 10.0.0.0/8 -j ACCEPT",
		"refused ipv4/filter/INPUT rule -j DROP",
		"refused ipv4/filter/FORWARD rule -j TWICE",
		"refused ipv4/filter/OUTPUT rule -j TWICE",
		"chain ipv4/filter/MINE from INPUT",
		"refused ipv4/filter/TWICE",
		"chain ipv4/filter/ALONE from ",
	}
	if !slices.Equal(desc, want) {
		t.Errorf("got\n%q\nwant\n%q", desc, want)
	}
	if c := got[4].(*items.IptablesChain); c.Position != 2 || !slices.Equal(c.Rules[0], []string{"-i", "lan0", "-j", "RETURN"}) {
		t.Errorf("MINE: position %d rules %q", c.Position, c.Rules)
	}
}

// A global key differs from the fresh namespace's; a per-interface key
// from the namespace's own default template; the forwarding keys a global
// forwarding key writes, accept_redirects that ip_forward sets, and the
// IPv6 mtu are left out.
func TestChangedSysctls(t *testing.T) {
	fresh := map[string]string{
		"net.ipv4.ip_forward": "0", "net.ipv4.conf.all.forwarding": "0", "net.ipv4.conf.default.forwarding": "0",
		"net.ipv4.conf.all.accept_redirects": "1", "net.ipv4.conf.default.rp_filter": "0", "net.ipv4.tcp_syncookies": "1",
		"net.ipv4.conf.lo.rp_filter": "0",
	}
	here := map[string]string{
		"net.ipv4.ip_forward": "1", "net.ipv4.conf.all.forwarding": "1", "net.ipv4.conf.default.forwarding": "1",
		"net.ipv4.conf.eth0.forwarding": "1", "net.ipv4.conf.all.accept_redirects": "0",
		"net.ipv4.conf.default.rp_filter": "0", "net.ipv4.conf.eth0.rp_filter": "2", "net.ipv4.conf.eth1.rp_filter": "0",
		"net.ipv4.tcp_syncookies": "0", "net.ipv6.conf.eth0.mtu": "1400", "net.ipv4.conf.lo.rp_filter": "1",
		"net.ipv4.conf.br/5.rp_filter": "1",
	}
	var got []string
	for _, it := range changedSysctls(here, fresh) {
		s := it.(*items.Sysctl)
		got = append(got, s.Key+"="+s.Value)
	}
	want := []string{"net.ipv4.conf.br/5.rp_filter=1", "net.ipv4.conf.eth0.rp_filter=2", "net.ipv4.conf.lo.rp_filter=1",
		"net.ipv4.ip_forward=1", "net.ipv4.tcp_syncookies=0"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
