package link

import (
	"strings"
	"testing"

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
