package link

import (
	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/items"
)

// dummyKind creates dummy links: no attributes of their own, only the
// common settings (MTU, MAC, alias, state), which all change in place.
type dummyKind struct{ plainKind }

func (dummyKind) newLink(_ *kernel, attrs netlink.LinkAttrs, _ *items.Interface) (netlink.Link, func(), error) {
	return &netlink.Dummy{LinkAttrs: attrs}, noRelease, nil
}

func (dummyKind) observe(*kernel, netlink.Link, func(int) string) (items.KindAttrs, error) {
	return nil, nil
}
