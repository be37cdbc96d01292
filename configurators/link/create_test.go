package link

import (
	"errors"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/items"
)

// Every kind netagent creates names the module that gives it, for the
// EOPNOTSUPP of a kernel without it; a physical NIC is never created.
func TestModuleHintNamesTheModule(t *testing.T) {
	for kind, module := range map[items.InterfaceKind]string{
		items.KindBond: "bonding", items.KindVLAN: "8021q", items.KindVRF: "vrf", items.KindDummy: "dummy",
		items.KindWireguard: "wireguard", items.KindGRE: "ip_gre", items.KindIP6Tnl: "ip6_tunnel",
		items.KindBridge: "bridge", items.KindVeth: "veth", items.KindMacvlan: "macvlan", items.KindIpvlan: "ipvlan",
		items.KindVxlan: "vxlan", items.KindIPIP: "ipip", items.KindSIT: "sit",
	} {
		if h := moduleHint(kind); !strings.Contains(h, "`modprobe "+module+"`") || !strings.Contains(h, "no "+string(kind)+" links") {
			t.Errorf("%s: %q", kind, h)
		}
	}
	if h := moduleHint(items.KindPhysical); h != "" {
		t.Errorf("physical: %q", h)
	}
}

// An EEXIST for a free name is the kernel's unique identity of the kind
// (here a VLAN's parent, protocol and id), and the error says so; a taken
// name still reads as the name.
func TestCreateExistsNamesTheIdentity(t *testing.T) {
	e := newFakeEnv(t)
	eth0 := e.f.AddNIC("eth0", 1500)
	if err := e.f.LinkAdd(&netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "other10", ParentIndex: eth0.Attrs().Index}, VlanId: 10}); err != nil {
		t.Fatal(err)
	}
	vl := &items.Interface{IfName: "mgmt", Kind: items.KindVLAN, AdminUp: true, Attrs: &items.VLANAttrs{Parent: "eth0", ID: 10}}
	err := e.kernel().create(vl)
	const want = "adding vlan mgmt: file exists: another link already is vlan eth0 802.1q 10, which the kernel allows once per namespace"
	if err == nil || err.Error() != want || errors.Is(err, errTaken) {
		t.Errorf("vlan id taken: %v\nwant %s", err, want)
	}
	if !e.gone("mgmt") {
		t.Error("mgmt was made")
	}
	br := &items.Interface{IfName: "other10", Kind: items.KindBridge, AdminUp: true}
	if err := e.kernel().create(br); !errors.Is(err, errTaken) {
		t.Errorf("name taken: %v", err)
	}
}
