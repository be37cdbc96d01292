package link

import (
	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/items"
)

// vrfKind creates vrfs: the table is fixed at creation (see
// items.VRFAttrs.NeedsRecreate); ports are enslaved by the port
// configurator, as a bridge's. The first vrf of a namespace makes the
// kernel add its l3mdev rules (pref 1000, protocol kernel), which are
// the kernel's and never netagent's.
type vrfKind struct{ plainKind }

func (vrfKind) newLink(_ *kernel, attrs netlink.LinkAttrs, want *items.Interface) (netlink.Link, func(), error) {
	return &netlink.Vrf{LinkAttrs: attrs, Table: items.AttrsOf[*items.VRFAttrs](want).Table}, noRelease, nil
}

func (vrfKind) observe(_ *kernel, l netlink.Link, _ func(int) string) (items.KindAttrs, error) {
	v, ok := l.(*netlink.Vrf)
	if !ok {
		return nil, nil
	}
	return &items.VRFAttrs{Table: v.Table}, nil
}
