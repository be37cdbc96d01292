package link

import (
	"encoding/binary"
	"fmt"
	"net"
	"slices"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// fakeTunnel is an IP tunnel's parameters as the kernel keeps them
// (ip_tunnel_parm, __ip6_tnl_parm). The link a read returns is made from
// it (tunnelLink), with what netlink's parsers read.
type fakeTunnel struct {
	kind          string // gre, ipip, sit, ip6tnl
	local, remote net.IP // 4 or 16 bytes; zero: any
	link          uint32
	ttl, pmtudisc uint8
	proto         uint8
	encapLimit    uint8
	ikey, okey    uint32 // 0: no GRE_KEY flag
	// p2p is IFF_POINTOPOINT, set at creation when there is a remote
	// (ip_tunnel_bind_dev, ipip6_tunnel_bind_dev); gre, ipip and sit
	// refuse a change that would turn it on or off.
	p2p bool
	// fallback: the module's own device (gre0, tunl0, sit0, ip6tnl0),
	// which refuses every change.
	fallback bool
}

// tunnelOverhead is what each kind's outer header takes from the MTU.
var tunnelOverhead = map[string]int{"gre": 24, "ipip": 20, "sit": 20, "ip6tnl": 48}

// addFallbackTunnel adds a module's fallback device, as loading the
// module does in every namespace.
func (f *FakeKernel) addFallbackTunnel(kind, name string) {
	f.insert(newFallbackTunnel(kind, name))
	f.refresh()
}

// newFallbackTunnel is a module's fallback device of kind (gre, ipip,
// sit, ip6tnl), as the module makes it.
func newFallbackTunnel(kind, name string) *fakeLink {
	t := &fakeTunnel{kind: kind, pmtudisc: 1}
	switch kind {
	case "sit":
		t.ttl, t.proto = 64, unix.IPPROTO_IPV6
	case "ipip":
		t.proto = unix.IPPROTO_IPIP
	case "ip6tnl":
		t.proto, t.ttl, t.encapLimit = unix.IPPROTO_IPV6, 64, 4
	}
	t.local, t.remote = t.zero(), t.zero()
	t.fallback = true
	a := netlink.NewLinkAttrs()
	a.Name, a.MTU = name, 1500-tunnelOverhead[kind]
	fl := &fakeLink{tunnel: t, maxMTU: 65535 - tunnelOverhead[kind]}
	fl.link = t.netlinkLink(a)
	return fl
}

func (t *fakeTunnel) v6() bool { return t.kind == "ip6tnl" }

func (t *fakeTunnel) zero() net.IP {
	if t.v6() {
		return slices.Clone(net.IPv6zero)
	}
	return slices.Clone(net.IPv4zero.To4())
}

// addr normalises an address of the tunnel's family (nil is any).
func (t *fakeTunnel) addr(ip net.IP) (net.IP, error) {
	switch {
	case ip == nil:
		return t.zero(), nil
	case t.v6() && len(ip) == 16 && ip.To4() == nil:
		return slices.Clone(ip), nil
	case !t.v6() && ip.To4() != nil:
		return slices.Clone(ip.To4()), nil
	}
	return nil, unix.EINVAL
}

// buildTunnel makes a tunnel from a create request, as netlink encodes it
// and the kernel's newlink takes it.
func (f *FakeKernel) buildTunnel(link netlink.Link) (*fakeLink, *fakeLink, error) {
	t := &fakeTunnel{kind: link.Type()}
	var local, remote net.IP
	switch x := link.(type) {
	case *netlink.Gretun:
		local, remote, t.link, t.ttl, t.pmtudisc = x.Local, x.Remote, x.Link, x.Ttl, x.PMtuDisc
		t.ikey, t.okey, t.proto = x.IKey, x.OKey, unix.IPPROTO_GRE
	case *netlink.Iptun:
		local, remote, t.link, t.ttl, t.pmtudisc, t.proto = x.Local, x.Remote, x.Link, x.Ttl, x.PMtuDisc, x.Proto
	case *netlink.Sittun:
		local, remote, t.link, t.ttl, t.pmtudisc, t.proto = x.Local, x.Remote, x.Link, x.Ttl, x.PMtuDisc, x.Proto
		if t.ttl == 0 {
			t.ttl = 64 // netlink leaves out a TTL of 0; ipip6_netlink_parms's default
		}
	case *netlink.Ip6tnl:
		local, remote, t.link, t.ttl, t.proto, t.encapLimit = x.Local, x.Remote, x.Link, x.Ttl, x.Proto, x.EncapLimit
	}
	if t.kind == "ip6gre" {
		return nil, nil, unix.EOPNOTSUPP // no ip6_gre in this kernel
	}
	var err error
	if t.local, err = t.addr(local); err != nil {
		return nil, nil, err
	}
	if t.remote, err = t.addr(remote); err != nil {
		return nil, nil, err
	}
	if f.tunnelClash(t, nil) {
		return nil, nil, unix.EEXIST // ip_tunnel_find, ipip6_tunnel_locate, ip6_tnl_locate
	}
	t.p2p = !t.remote.IsUnspecified()
	mtu, err := f.tunnelMTU(t)
	if err != nil {
		return nil, nil, err
	}
	fl := &fakeLink{tunnel: t, maxMTU: 65535 - tunnelOverhead[t.kind]}
	fl.link = t.netlinkLink(f.base(link.Attrs(), mtu))
	return fl, nil, nil
}

// tunnelMTU is the MTU the kernel gives a tunnel: its parent's (or
// 1500) less the outer header and a GRE key.
func (f *FakeKernel) tunnelMTU(t *fakeTunnel) (int, error) {
	mtu := 1500
	if t.link != 0 {
		p := f.links[int(t.link)]
		if p == nil {
			return 0, unix.ENODEV
		}
		mtu = p.attrs().MTU
	}
	mtu -= tunnelOverhead[t.kind]
	if t.okey != 0 {
		mtu -= 4
	}
	return mtu, nil
}

// tunnelClash reports whether another tunnel than self has t's identity:
// the same kind, local, remote, link and (gre) input key.
func (f *FakeKernel) tunnelClash(t *fakeTunnel, self *fakeLink) bool {
	for _, o := range f.links {
		if o == self || o.tunnel == nil {
			continue
		}
		u := o.tunnel
		if u.kind == t.kind && u.local.Equal(t.local) && u.remote.Equal(t.remote) && u.link == t.link && u.ikey == t.ikey {
			return true
		}
	}
	return false
}

// netlinkLink is the tunnel as netlink's parsers read it, with a: the
// parent in IFLA_LINK (ParentIndex), the local address as the device
// address.
func (t *fakeTunnel) netlinkLink(a netlink.LinkAttrs) netlink.Link {
	a.ParentIndex = int(t.link)
	a.HardwareAddr = net.HardwareAddr(slices.Clone(t.local))
	local, remote := slices.Clone(t.local), slices.Clone(t.remote)
	switch t.kind {
	case "gre":
		g := &netlink.Gretun{LinkAttrs: a, Local: local, Remote: remote, Ttl: t.ttl, PMtuDisc: t.pmtudisc,
			IKey: t.ikey, OKey: t.okey, Link: 0}
		if t.ikey != 0 {
			g.IFlags = nl.GRE_KEY
		}
		if t.okey != 0 {
			g.OFlags = nl.GRE_KEY
		}
		return g
	case "ipip":
		return &netlink.Iptun{LinkAttrs: a, Local: local, Remote: remote, Ttl: t.ttl, PMtuDisc: t.pmtudisc, Proto: t.proto}
	case "sit":
		return &netlink.Sittun{LinkAttrs: a, Local: local, Remote: remote, Ttl: t.ttl, PMtuDisc: t.pmtudisc, Proto: t.proto}
	}
	// ip6tnl reports the capability flags it computes
	return &netlink.Ip6tnl{LinkAttrs: a, Local: local, Remote: remote, Ttl: t.ttl, Proto: t.proto,
		EncapLimit: t.encapLimit, Flags: 0x30000}
}

// tunnelData is a tunnel's changelink: the parameters start from zero
// (with the kernel's defaults for what is absent), and replace the old
// ones, but for the fallback device, a change of IFF_POINTOPOINT (gre,
// ipip, sit), another tunnel's identity (EEXIST), and the protocol, which
// only ip6tnl copies.
func (f *FakeKernel) tunnelData(fl *fakeLink, attrs []attr) (func() error, error) {
	old := fl.tunnel
	if old.fallback {
		return nil, unix.EINVAL
	}
	t, err := parseTunnelData(old.kind, attrs)
	if err != nil {
		return nil, err
	}
	if t.local, err = t.addr(t.local); err != nil {
		return nil, err
	}
	if t.remote, err = t.addr(t.remote); err != nil {
		return nil, err
	}
	t.p2p = old.p2p
	if !t.v6() {
		if old.p2p == t.remote.IsUnspecified() {
			return nil, unix.EINVAL
		}
		t.proto = old.proto
	}
	if f.tunnelClash(t, fl) {
		return nil, unix.EEXIST
	}
	if t.link != 0 && f.links[int(t.link)] == nil {
		return nil, unix.ENODEV
	}
	return func() error {
		fl.tunnel = t
		a := *fl.attrs()
		if t.link != old.link || (t.okey != 0) != (old.okey != 0) {
			a.MTU, _ = f.tunnelMTU(t) // recomputed without IFLA_MTU
		}
		fl.link = t.netlinkLink(a)
		return nil
	}, nil
}

// parseTunnelData reads a changelink's IFLA_INFO_DATA as the kernel's
// *_netlink_parms do.
func parseTunnelData(kind string, attrs []attr) (*fakeTunnel, error) {
	t := &fakeTunnel{kind: kind, pmtudisc: 1}
	if kind == "sit" {
		t.ttl = 64
	}
	for _, a := range attrs {
		if kind == "gre" {
			if err := t.greAttr(a); err != nil {
				return nil, err
			}
			continue
		}
		switch a.typ {
		case nl.IFLA_IPTUN_LINK:
			t.link, _ = u32Of(a.val)
		case nl.IFLA_IPTUN_LOCAL:
			t.local = net.IP(slices.Clone(a.val))
		case nl.IFLA_IPTUN_REMOTE:
			t.remote = net.IP(slices.Clone(a.val))
		case nl.IFLA_IPTUN_TTL:
			t.ttl, _ = u8Of(a.val)
		case nl.IFLA_IPTUN_PMTUDISC:
			t.pmtudisc, _ = u8Of(a.val)
		case nl.IFLA_IPTUN_PROTO:
			t.proto, _ = u8Of(a.val)
		case nl.IFLA_IPTUN_ENCAP_LIMIT:
			t.encapLimit, _ = u8Of(a.val)
		case nl.IFLA_IPTUN_TOS, nl.IFLA_IPTUN_FLOWINFO, nl.IFLA_IPTUN_FLAGS:
		default:
			return nil, fmt.Errorf("fake kernel: %s attribute %d: %w", kind, a.typ, unix.EOPNOTSUPP)
		}
	}
	return t, nil
}

func (t *fakeTunnel) greAttr(a attr) error {
	switch a.typ {
	case nl.IFLA_GRE_LINK:
		t.link, _ = u32Of(a.val)
	case nl.IFLA_GRE_LOCAL:
		t.local = net.IP(slices.Clone(a.val))
	case nl.IFLA_GRE_REMOTE:
		t.remote = net.IP(slices.Clone(a.val))
	case nl.IFLA_GRE_TTL:
		t.ttl, _ = u8Of(a.val)
	case nl.IFLA_GRE_PMTUDISC:
		t.pmtudisc, _ = u8Of(a.val)
	case nl.IFLA_GRE_IKEY:
		t.ikey = binary.BigEndian.Uint32(a.val)
	case nl.IFLA_GRE_OKEY:
		t.okey = binary.BigEndian.Uint32(a.val)
	case nl.IFLA_GRE_IFLAGS, nl.IFLA_GRE_OFLAGS, nl.IFLA_GRE_TOS:
	default:
		return fmt.Errorf("fake kernel: gre attribute %d: %w", a.typ, unix.EOPNOTSUPP)
	}
	return nil
}
