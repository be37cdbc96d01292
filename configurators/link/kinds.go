package link

import (
	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/items"
)

// linkKind is what the configurator does for one kind of link it creates
// (every kind but physical: a NIC is never created, see physical.go). Each
// kind's code is in its file, kind_<kind>.go.
type linkKind interface {
	// newLink builds the create request for want: the kind's link type
	// with the common attrs (name, MAC) and the kind's attributes that the
	// kernel fixes at creation; the rest is left to converge. The returned
	// func releases what the request borrowed.
	newLink(k *kernel, attrs netlink.LinkAttrs, want *items.Interface) (netlink.Link, func(), error)
	// afterCreate finishes a new link once it carries the mark (a veth
	// marks its peer).
	afterCreate(k *kernel, want *items.Interface) error
	// converge changes the kind's settings that the kernel changes in
	// place from obs (read back, of the same kind) to want, writing only
	// what differs.
	converge(k *kernel, l netlink.Link, obs, want *items.Interface) error
	// observe reads the kind's attributes back from l with every value the
	// kernel reports; nil when l is not of the kind's netlink type. nameOf
	// turns an ifindex of the same namespace into a name.
	observe(k *kernel, l netlink.Link, nameOf func(int) string) (items.KindAttrs, error)
	// mask returns obs (not nil) with every value that want (nil: none)
	// leaves to the kernel set the way want spells it (see mask).
	mask(obs, want items.KindAttrs) items.KindAttrs
}

// linkKinds is the table of the kinds the configurator creates, by the
// items' kind, which is also the netlink link type (IFLA_INFO_KIND).
var linkKinds = map[items.InterfaceKind]linkKind{
	items.KindBond:      bondKind{},
	items.KindVLAN:      vlanKind{},
	items.KindBridge:    bridgeKind{},
	items.KindVeth:      vethKind{},
	items.KindMacvlan:   macvlanKind{},
	items.KindVxlan:     vxlanKind{},
	items.KindDummy:     dummyKind{},
	items.KindGRE:       greTunnel,
	items.KindIPIP:      ipipTunnel,
	items.KindSIT:       sitTunnel,
	items.KindIP6Tnl:    ip6tnlTunnel,
	items.KindWireguard: wireguardKind{},
	items.KindIpvlan:    ipvlanKind{},
	items.KindVRF:       vrfKind{},
}

// kindOf maps a netlink link type to the managed kind, "" for the types
// netagent never creates.
func kindOf(l netlink.Link) items.InterfaceKind {
	k := items.InterfaceKind(l.Type())
	if _, ok := linkKinds[k]; ok {
		return k
	}
	return ""
}

// parentMAC is implemented by the kinds whose links have their parent's
// MAC and cannot have one of their own (ipvlan): the MAC is not the
// link's setting, so it reads back nil, as an intent leaves it.
type parentMAC interface{ parentMAC() }

// plainKind gives a kind the defaults of linkKind: nothing to finish after
// the create, nothing to change in place, nothing to mask.
type plainKind struct{}

func (plainKind) afterCreate(*kernel, *items.Interface) error { return nil }

func (plainKind) converge(*kernel, netlink.Link, *items.Interface, *items.Interface) error {
	return nil
}

func (plainKind) mask(obs, _ items.KindAttrs) items.KindAttrs { return obs }

// attrsAs returns a as a *T, nil if it is not one.
func attrsAs[T any](a items.KindAttrs) *T {
	p, _ := any(a).(*T)
	return p
}

// valueOr returns *p, the zero T for nil.
func valueOr[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// noRelease is the release func of a create request that borrowed nothing.
func noRelease() {}
