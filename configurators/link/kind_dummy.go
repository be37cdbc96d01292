package link

import (
	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/items"
)

// dummyKind creates dummy links: no attributes of their own, only the
// common settings (MTU, MAC, alias, state), which all change in place.
type dummyKind struct{ plainKind }

// liveMAC: a dummy takes a new MAC while up (IFF_LIVE_ADDR_CHANGE).
func (dummyKind) liveMAC() {}

func (dummyKind) newLink(_ *kernel, attrs netlink.LinkAttrs, _ *items.Interface) (netlink.Link, func(), error) {
	return &netlink.Dummy{LinkAttrs: attrs}, noRelease, nil
}

func (dummyKind) observe(*kernel, netlink.Link, func(int) string) (items.KindAttrs, error) {
	return nil, nil
}
