package link

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// FakeKernel is an in-memory namespace's links behind nlOps and rawOps, as
// the kernel keeps them: ifindexes are allocated upwards and never reused,
// names are unique (EEXIST), a veth pair is made and deleted together, a
// VLAN, macvlan or VXLAN needs its parent (ENODEV) and dies with it, a
// port has one master (EBUSY), a bond port must be down to be enslaved
// (EPERM) and is opened by the bond and closed when released, MTUs have
// the kernel's limits (a VLAN not above its parent: ERANGE; a macvlan:
// EINVAL), an alias has at most 255 bytes (ERANGE), carrier follows the
// admin state of what a link sits on (both ends of a veth, the parent,
// the ports), a bridge's MTU and MAC follow its ports until they are set,
// and only the in-place changes the kernel accepts are accepted. Errors
// are the kernel's errnos, and netlink's "Link not found" for lookups.
//
// Every write is logged in writes ("add br0", "mtu eth0", "data br0",
// ...), so that a test can assert that a second run writes nothing. fail,
// if set, is asked before each write and may refuse it (a killed agent, a
// kernel error).
//
// It is one namespace of a fakeWorld: a veth's peer may be created in
// another named one (IFLA_NET_NS_FD), where it shows the nsid this one
// has there (IFLA_LINK_NETNSID); FakeKernel is also the nsOps that finds
// them.
type FakeKernel struct {
	name    string // under /run/netns; "" for the agent's own
	world   *fakeWorld
	nsids   map[*FakeKernel]int // the nsids of other namespaces here
	links   map[int]*fakeLink
	next    int
	writes  []string
	fail    func(op, name string) error
	macSeq  byte
	lookups int             // LinkByName calls
	nics    map[int]fakeNIC // by ifindex: what AddMatchableNIC gave (fake_match.go)
	// VLANRequests are the bridge VLAN requests written, one line each:
	// "vlan-add v0: 2-4094" with the ranges as the kernel read them.
	VLANRequests []string
	// Identity, if set, is the namespace's identity in the state files
	// (a snapshot's namespace); else a fixed fake one.
	Identity *statefile.NsIdentity
}

// fakeWorld holds the fake namespaces by name, and the open namespace
// fds.
type fakeWorld struct {
	byName map[string]*FakeKernel
	fds    map[int]*FakeKernel
	nextFd int
}

var (
	_ nlOps  = (*FakeKernel)(nil)
	_ rawOps = (*FakeKernel)(nil)
	_ nsOps  = (*FakeKernel)(nil)
)

// fakeLink is one link: link is what a dump reports (a netlink type as
// netlink.Handle returns it), the rest is kernel state not in it.
type fakeLink struct {
	link netlink.Link
	// carrier is a NIC's physical carrier.
	carrier bool
	// liveMAC: the device takes a MAC change while up (else EBUSY).
	liveMAC bool
	maxMTU  int
	// bridge state.
	stp, vlanFiltering bool
	fwdDelay           uint32 // centiseconds
	mtuSetByUser       bool
	macSetByUser       bool
	// bridge port state.
	cost uint32
	// bridge and bridge port VLANs, default_pvid, port priority.
	bm fakeBridgeMember
	// bond state: the primary by name (the kernel keeps a name, and
	// reports its ifindex only once it is a port).
	primary string
	// peerNS is the namespace of a veth's peer (nil: this one).
	peerNS *FakeKernel
	// tunnel is an IP tunnel's parameters (fake_tunnel.go).
	tunnel *fakeTunnel
	// wg is a WireGuard device's configuration (fake_wireguard.go).
	wg *fakeWG
}

// fakeNsIdentity is the fake namespace's identity in the state files.
var fakeNsIdentity = statefile.NsIdentity{BootID: "fake-boot", Netns: "fake", NsID: "NS(0:1)"}

// identity is the namespace's identity in the state files.
func (f *FakeKernel) identity() statefile.NsIdentity {
	if f.Identity != nil {
		return *f.Identity
	}
	return fakeNsIdentity
}

// kernel is the configurators' kernel over the fake, with its state
// (create journal, physical originals) in stateDir.
func (f *FakeKernel) kernel(stateDir string) *kernel {
	return &kernel{nl: f, raw: f, ns: f, wg: f, nic: f,
		st: &stateStore{path: filepath.Join(stateDir, stateFileName), ns: f.identity()}}
}

// Register registers the interface, port and bridge VLAN configurators
// over the fake, as Register does over a namespace; stateDir holds their
// state files, as there. Each call makes fresh configurators, as a
// restarted agent has.
func (f *FakeKernel) Register(reg *reconciler.TypeRegistry, stateDir string) error {
	return f.RegisterWith(reg, stateDir, Options{})
}

// Clashes finds, as Clashes does in a namespace, the intended links
// whose place someone else's link holds in the fake.
func (f *FakeKernel) Clashes(stateDir string, hint *dg.Graph) (map[dg.ItemRef]error, error) {
	if hint == nil {
		return nil, nil
	}
	return f.kernel(stateDir).clashes(hint)
}

// ReadFound reads the recorded originals of the fake's physical links
// from stateDir, as ReadFound does a namespace's.
func (f *FakeKernel) ReadFound(stateDir string) (Found, error) { return f.kernel(stateDir).st.found() }

// ReadBack reads the fake's links back into items, as ReadBack does a
// namespace's, with the state files in stateDir.
func (f *FakeKernel) ReadBack(stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	return f.kernel(stateDir).readBack(hint)
}

func NewFakeKernel() *FakeKernel {
	w := &fakeWorld{byName: map[string]*FakeKernel{}, fds: map[int]*FakeKernel{}, nextFd: 100}
	return w.add("")
}

// NewNamespace adds a named namespace to f's world.
func (f *FakeKernel) NewNamespace(name string) *FakeKernel { return f.world.add(name) }

func (w *fakeWorld) add(name string) *FakeKernel {
	f := &FakeKernel{name: name, world: w, nsids: map[*FakeKernel]int{}, links: map[int]*fakeLink{}, next: 1}
	w.byName[name] = f
	lo := &netlink.Device{LinkAttrs: netlink.NewLinkAttrs()}
	lo.Name, lo.MTU = "lo", 65536
	f.insert(&fakeLink{link: lo, maxMTU: 1 << 31 / 2})
	f.refresh()
	return f
}

// nsidOf is the nsid other has here, allocated at first use (as
// peernet2id_alloc does).
func (f *FakeKernel) nsidOf(other *FakeKernel) int {
	id, ok := f.nsids[other]
	if !ok {
		id = len(f.nsids)
		f.nsids[other] = id
	}
	return id
}

// The nsOps of the fake world.

func (f *FakeKernel) open(name string) (netlink.NsFd, func(), error) {
	k := f.world.byName[name]
	if k == nil || name == "" {
		return 0, nil, fmt.Errorf("opening peer namespace %s: %w", name, unix.ENOENT)
	}
	fd := f.world.nextFd
	f.world.nextFd++
	f.world.fds[fd] = k
	return netlink.NsFd(fd), func() { delete(f.world.fds, fd) }, nil
}

func (f *FakeKernel) namespaceByID(nsid int) (string, error) {
	for k, id := range f.nsids {
		if id == nsid && k.name != "" && f.world.byName[k.name] == k {
			return k.name, nil
		}
	}
	return "", nil
}

func (f *FakeKernel) linkNameIn(nsName string, index int) (string, error) {
	k := f.world.byName[nsName]
	if k == nil || nsName == "" {
		return "", fmt.Errorf("opening namespace %s: %w", nsName, unix.ENOENT)
	}
	l, err := k.LinkByIndex(index)
	if err != nil {
		return "", fmt.Errorf("link index %d in namespace %s: %w", index, nsName, err)
	}
	return l.Attrs().Name, nil
}

// AddNIC plugs in a physical NIC (kind "device"), down, with carrier.
func (f *FakeKernel) AddNIC(name string, mtu int) netlink.Link {
	d := &netlink.Device{LinkAttrs: netlink.NewLinkAttrs()}
	d.Name, d.MTU, d.HardwareAddr = name, mtu, f.newMAC()
	fl := &fakeLink{link: d, carrier: true, liveMAC: true, maxMTU: 9000}
	f.insert(fl)
	f.refresh()
	return f.copyOf(fl)
}

// Take returns the writes logged so far and clears the log.
func (f *FakeKernel) Take() []string {
	w := f.writes
	f.writes = nil
	return w
}

func (f *FakeKernel) insert(fl *fakeLink) {
	a := fl.link.Attrs()
	a.Index = f.next
	a.NetNsID = -1
	f.next++
	f.links[a.Index] = fl
}

func (f *FakeKernel) newMAC() net.HardwareAddr {
	f.macSeq++
	return net.HardwareAddr{0x02, 0xfa, 0x6e, 0, 0, f.macSeq} // locally administered
}

func (f *FakeKernel) write(op, name string) error {
	if f.fail != nil {
		if err := f.fail(op, name); err != nil {
			return err
		}
	}
	f.writes = append(f.writes, op+" "+name)
	return nil
}

func (f *FakeKernel) byName(name string) *fakeLink {
	for _, fl := range f.links {
		if fl.link.Attrs().Name == name {
			return fl
		}
	}
	return nil
}

// resolve finds the link a request names: by index, by name when the
// index is 0 (as netlink.Handle does).
func (f *FakeKernel) resolve(l netlink.Link) (*fakeLink, error) {
	if l == nil {
		return nil, unix.EINVAL
	}
	a := l.Attrs()
	var fl *fakeLink
	if a.Index != 0 {
		fl = f.links[a.Index]
	} else {
		fl = f.byName(a.Name)
	}
	if fl == nil {
		return nil, unix.ENODEV
	}
	return fl, nil
}

// notFound is netlink.Handle's answer to a lookup of a link that does not
// exist: LinkNotFoundError("Link not found"), whose only field is
// unexported (hence the unsafe write of it).
func notFound() error {
	var e netlink.LinkNotFoundError
	*(*error)(unsafe.Pointer(&e)) = errors.New("Link not found")
	return e
}

// peer is the namespace of a veth's peer, f being fl's own.
func (fl *fakeLink) peer(f *FakeKernel) *FakeKernel {
	if fl.peerNS != nil {
		return fl.peerNS
	}
	return f
}

func (fl *fakeLink) attrs() *netlink.LinkAttrs { return fl.link.Attrs() }
func (fl *fakeLink) kind() string              { return fl.link.Type() }
func (fl *fakeLink) up() bool                  { return fl.attrs().Flags&net.FlagUp != 0 }

// copyOf is the link as a read returns it: a copy the caller may change.
func (f *FakeKernel) copyOf(fl *fakeLink) netlink.Link {
	var c netlink.Link
	switch x := fl.link.(type) {
	case *netlink.Device:
		v := *x
		c = &v
	case *netlink.Bridge:
		v := *x
		c = &v
	case *netlink.Veth:
		v := *x
		c = &v
	case *netlink.Vlan:
		v := *x
		c = &v
	case *netlink.Macvlan:
		v := *x
		c = &v
	case *netlink.Dummy:
		v := *x
		c = &v
	case *netlink.Gretun, *netlink.Iptun, *netlink.Sittun, *netlink.Ip6tnl:
		c = fl.tunnel.netlinkLink(*x.Attrs())
	case *netlink.Wireguard:
		v := *x
		c = &v
	case *netlink.GenericLink: // a loaded device of a kind the fake does not model (fake_load.go)
		v := *x
		c = &v
	case *netlink.IPVlan:
		v := *x
		c = &v
	case *netlink.Vrf:
		v := *x
		c = &v
	case *netlink.Vxlan:
		v := *x
		v.SrcAddr = slices.Clone(x.SrcAddr)
		v.Group = slices.Clone(x.Group)
		c = &v
	case *netlink.Bond:
		v := *x
		v.Primary = 0
		if p := f.byName(fl.primary); p != nil && p.attrs().MasterIndex == x.Index {
			v.Primary = p.attrs().Index
		}
		c = &v
	default:
		panic(fmt.Sprintf("fake kernel: no copy of %T", x))
	}
	c.Attrs().HardwareAddr = slices.Clone(fl.attrs().HardwareAddr)
	return c
}

// Reads.

func (f *FakeKernel) LinkByName(name string) (netlink.Link, error) {
	f.lookups++
	if fl := f.byName(name); fl != nil {
		return f.copyOf(fl), nil
	}
	return nil, notFound()
}

func (f *FakeKernel) LinkByIndex(index int) (netlink.Link, error) {
	if fl, ok := f.links[index]; ok {
		return f.copyOf(fl), nil
	}
	return nil, notFound()
}

func (f *FakeKernel) LinkList() ([]netlink.Link, error) {
	var out []netlink.Link
	for _, i := range f.indexes() {
		out = append(out, f.copyOf(f.links[i]))
	}
	return out, nil
}

func (f *FakeKernel) indexes() []int {
	var idx []int
	for i := range f.links {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	return idx
}

func (f *FakeKernel) GetNetNsIdByFd(fd int) (int, error) {
	k := f.world.fds[fd]
	if k == nil {
		return 0, unix.EBADF
	}
	if id, ok := f.nsids[k]; ok {
		return id, nil
	}
	return -1, nil // NETNSA_NSID_NOT_ASSIGNED
}

// Create and delete.

func (f *FakeKernel) LinkAdd(link netlink.Link) error {
	a := link.Attrs()
	if err := validName(a.Name); err != nil {
		return err
	}
	if f.byName(a.Name) != nil {
		return unix.EEXIST
	}
	fl, peer, err := f.build(link)
	if err != nil {
		return err
	}
	if err := f.write("add", a.Name); err != nil {
		return err
	}
	f.insert(fl)
	if peer != nil {
		pk := f
		if fl.peerNS != nil {
			pk = fl.peerNS
		}
		pk.insert(peer)
		fl.attrs().ParentIndex, peer.attrs().ParentIndex = peer.attrs().Index, fl.attrs().Index
		if pk != f {
			fl.attrs().NetNsID, peer.attrs().NetNsID = f.nsidOf(pk), pk.nsidOf(f)
			peer.peerNS = f
		}
	}
	if a.Flags&net.FlagUp != 0 {
		fl.attrs().Flags |= net.FlagUp
	}
	a.Index = fl.attrs().Index // as netlink's LinkAdd learns it (ensureIndex)
	f.refresh()
	return nil
}

func validName(name string) error {
	switch {
	case len(name) > unix.IFNAMSIZ-1:
		return unix.ERANGE // IFLA_IFNAME's policy
	case name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/: \t\n"):
		return unix.EINVAL
	}
	return nil
}

// base is the new link's attributes as the kernel keeps them.
func (f *FakeKernel) base(a *netlink.LinkAttrs, mtu int) netlink.LinkAttrs {
	b := netlink.NewLinkAttrs()
	b.Name, b.MTU, b.HardwareAddr = a.Name, mtu, slices.Clone(a.HardwareAddr)
	if a.MTU != 0 {
		b.MTU = a.MTU
	}
	if b.HardwareAddr == nil {
		b.HardwareAddr = f.newMAC()
	}
	return b
}

// build checks a create request and makes its link (and a veth's peer).
func (f *FakeKernel) build(link netlink.Link) (*fakeLink, *fakeLink, error) {
	a := link.Attrs()
	if a.MTU != 0 && (a.MTU < 68 || a.MTU > 65535) {
		return nil, nil, unix.EINVAL
	}
	if len(a.HardwareAddr) != 0 && !validMAC(a.HardwareAddr) {
		return nil, nil, unix.EADDRNOTAVAIL
	}
	switch x := link.(type) {
	case *netlink.Bridge:
		fl := &fakeLink{link: &netlink.Bridge{LinkAttrs: f.base(a, 1500)}, maxMTU: 65535,
			fwdDelay: 1500, macSetByUser: a.HardwareAddr != nil, // an IFLA_MTU at creation is not "set by the user"
			bm: newBridgeMember()}
		if x.VlanFiltering != nil {
			fl.vlanFiltering = *x.VlanFiltering
		}
		return fl, nil, nil
	case *netlink.Veth:
		return f.buildVeth(x)
	case *netlink.Vlan:
		return f.buildVlan(x)
	case *netlink.Macvlan:
		return f.buildMacvlan(x)
	case *netlink.Vxlan:
		return f.buildVxlan(x)
	case *netlink.Bond:
		return f.buildBond(x)
	case *netlink.IPVlan:
		return f.buildIpvlan(x)
	case *netlink.Vrf:
		if x.Table == 0 {
			return nil, nil, unix.EINVAL // "Invalid VRF table id"
		}
		// vrf_setup: mtu 65575 (IP6_MAX_MTU), min 1280
		return &fakeLink{link: &netlink.Vrf{LinkAttrs: f.base(&x.LinkAttrs, 65575), Table: x.Table}, maxMTU: 65575, liveMAC: true}, nil, nil
	case *netlink.Dummy:
		// dummy_setup: no MTU limit, a MAC that changes while up
		return &fakeLink{link: &netlink.Dummy{LinkAttrs: f.base(a, 1500)}, maxMTU: 65535, liveMAC: true}, nil, nil
	case *netlink.Gretun, *netlink.Iptun, *netlink.Sittun, *netlink.Ip6tnl:
		return f.buildTunnel(x)
	case *netlink.Wireguard:
		return f.buildWireguard(a)
	}
	return nil, nil, unix.EOPNOTSUPP // no such rtnl_link_ops in this kernel
}

func (f *FakeKernel) buildVeth(x *netlink.Veth) (*fakeLink, *fakeLink, error) {
	pk := f
	if x.PeerNamespace != nil {
		fd, ok := x.PeerNamespace.(netlink.NsFd)
		if pk = f.world.fds[int(fd)]; !ok || pk == nil {
			return nil, nil, unix.EBADF
		}
	}
	peerName := x.PeerName
	if peerName == "" {
		peerName = fmt.Sprintf("veth%d", f.next)
	}
	if err := validName(peerName); err != nil {
		return nil, nil, err
	}
	if pk.byName(peerName) != nil || peerName == x.Name && pk == f {
		return nil, nil, unix.EEXIST
	}
	end := &fakeLink{link: &netlink.Veth{LinkAttrs: f.base(&x.LinkAttrs, 1500)}, maxMTU: 65535, liveMAC: true}
	pa := netlink.LinkAttrs{Name: peerName, MTU: int(x.PeerMTU), HardwareAddr: x.PeerHardwareAddr}
	if pa.MTU == 0 {
		pa.MTU = end.attrs().MTU
	}
	peer := &fakeLink{link: &netlink.Veth{LinkAttrs: f.base(&pa, 1500)}, maxMTU: 65535, liveMAC: true}
	if pk != f {
		end.peerNS = pk
	}
	return end, peer, nil
}

// parent finds the lower link of a new VLAN, macvlan or VXLAN.
func (f *FakeKernel) parent(index int) (*fakeLink, error) {
	if index == 0 {
		return nil, unix.EINVAL // IFLA_LINK is required
	}
	p := f.links[index]
	if p == nil {
		return nil, unix.ENODEV
	}
	if p.attrs().Name == "lo" {
		return nil, unix.EOPNOTSUPP
	}
	return p, nil
}

func (f *FakeKernel) buildVlan(x *netlink.Vlan) (*fakeLink, *fakeLink, error) {
	p, err := f.parent(x.ParentIndex)
	if err != nil {
		return nil, nil, err
	}
	if x.VlanId < 0 || x.VlanId >= 4095 {
		return nil, nil, unix.ERANGE
	}
	proto := x.VlanProtocol
	if proto == netlink.VLAN_PROTOCOL_UNKNOWN {
		proto = netlink.VLAN_PROTOCOL_8021Q
	}
	for _, o := range f.links {
		if v, ok := o.link.(*netlink.Vlan); ok && v.ParentIndex == x.ParentIndex && v.VlanId == x.VlanId && v.VlanProtocol == proto {
			return nil, nil, unix.EEXIST
		}
	}
	if x.MTU > p.attrs().MTU {
		return nil, nil, unix.ERANGE
	}
	attrs := f.base(&x.LinkAttrs, p.attrs().MTU)
	if x.HardwareAddr == nil {
		attrs.HardwareAddr = slices.Clone(p.attrs().HardwareAddr)
	}
	attrs.ParentIndex = x.ParentIndex
	return &fakeLink{link: &netlink.Vlan{LinkAttrs: attrs, VlanId: x.VlanId, VlanProtocol: proto}, liveMAC: true}, nil, nil
}

func (f *FakeKernel) buildMacvlan(x *netlink.Macvlan) (*fakeLink, *fakeLink, error) {
	p, err := f.parent(x.ParentIndex)
	if err != nil {
		return nil, nil, err
	}
	mode := x.Mode
	if mode == netlink.MACVLAN_MODE_DEFAULT {
		mode = netlink.MACVLAN_MODE_VEPA
	}
	for _, o := range f.links {
		if m, ok := o.link.(*netlink.Macvlan); ok && m.ParentIndex == x.ParentIndex &&
			(m.Mode == netlink.MACVLAN_MODE_PASSTHRU || mode == netlink.MACVLAN_MODE_PASSTHRU) {
			return nil, nil, unix.EINVAL // passthru takes the parent alone
		}
	}
	if x.MTU > p.attrs().MTU {
		return nil, nil, unix.EINVAL
	}
	attrs := f.base(&x.LinkAttrs, p.attrs().MTU)
	attrs.ParentIndex = x.ParentIndex
	return &fakeLink{link: &netlink.Macvlan{LinkAttrs: attrs, Mode: mode}, liveMAC: true}, nil, nil
}

// buildIpvlan: an Ethernet parent that is not lo, a bond or bridge port
// or a macvlan parent (its rx handler is taken); an ipvlan as parent means
// its parent; the MAC is the parent's and cannot change; the mode and the
// flags are the parent's (ipvlan_set_port_mode): a new ipvlan sets them
// for all of the parent's.
func (f *FakeKernel) buildIpvlan(x *netlink.IPVlan) (*fakeLink, *fakeLink, error) {
	p, err := f.parent(x.ParentIndex)
	if err != nil {
		return nil, nil, err
	}
	if v, ok := p.link.(*netlink.IPVlan); ok {
		p = f.links[v.ParentIndex]
	}
	switch {
	case p.attrs().Name == "lo" || p.attrs().MasterIndex != 0:
		return nil, nil, unix.EINVAL
	case x.HardwareAddr != nil:
		return nil, nil, unix.EOPNOTSUPP // no ndo_set_mac_address
	}
	for _, o := range f.links {
		if m, ok := o.link.(*netlink.Macvlan); ok && m.ParentIndex == p.attrs().Index {
			return nil, nil, unix.EBUSY // netdev_is_rx_handler_busy
		}
	}
	attrs := f.base(&x.LinkAttrs, p.attrs().MTU)
	attrs.ParentIndex = p.attrs().Index
	attrs.HardwareAddr = slices.Clone(p.attrs().HardwareAddr)
	v := &netlink.IPVlan{LinkAttrs: attrs, Mode: x.Mode, Flag: x.Flag}
	f.ipvlanPort(attrs.ParentIndex, x.Mode, x.Flag)
	return &fakeLink{link: v, maxMTU: 65535}, nil, nil
}

// ipvlanPort gives every ipvlan of the parent the mode and the flags.
func (f *FakeKernel) ipvlanPort(parent int, mode netlink.IPVlanMode, flag netlink.IPVlanFlag) {
	for _, o := range f.links {
		if v, ok := o.link.(*netlink.IPVlan); ok && v.ParentIndex == parent {
			v.Mode, v.Flag = mode, flag
		}
	}
}

// ipvlanData takes what ipvlan_nl_changelink does: the mode and the flags,
// for the whole parent.
func (f *FakeKernel) ipvlanData(v *netlink.IPVlan, attrs []attr) (func() error, error) {
	mode, flag := v.Mode, v.Flag
	for _, a := range attrs {
		if len(a.val) != 2 {
			return nil, unix.EINVAL
		}
		n := netlink.IPVlanFlag(uint16(a.val[0]) | uint16(a.val[1])<<8)
		switch {
		case a.typ == nl.IFLA_IPVLAN_MODE && n < 3:
			mode = netlink.IPVlanMode(n)
		case a.typ == nl.IFLA_IPVLAN_FLAG && n < 3:
			flag = n
		default:
			return nil, unix.EINVAL
		}
	}
	return func() error {
		f.ipvlanPort(v.ParentIndex, mode, flag)
		return nil
	}, nil
}

// vxlanHeadroom is what VXLAN over IPv4 adds to a frame.
const vxlanHeadroom = 50

func (f *FakeKernel) buildVxlan(x *netlink.Vxlan) (*fakeLink, *fakeLink, error) {
	if x.VxlanId < 0 || x.VxlanId >= 1<<24 {
		return nil, nil, unix.ERANGE
	}
	port := x.Port
	if port == 0 {
		port = 8472 // the kernel's default
	}
	mtu, maxMTU := 1500, 65535-vxlanHeadroom
	if x.VtepDevIndex != 0 {
		p := f.links[x.VtepDevIndex]
		if p == nil {
			return nil, nil, unix.ENODEV
		}
		mtu, maxMTU = p.attrs().MTU-vxlanHeadroom, p.attrs().MTU-vxlanHeadroom
	}
	group, local := addrOf(x.Group), addrOf(x.SrcAddr)
	if group.IsMulticast() && x.VtepDevIndex == 0 {
		return nil, nil, unix.EINVAL // a multicast group needs a lower device
	}
	if group.IsValid() && local.IsValid() && group.Is4() != local.Is4() {
		return nil, nil, unix.EINVAL
	}
	for _, o := range f.links {
		if v, ok := o.link.(*netlink.Vxlan); ok && v.VxlanId == x.VxlanId && v.Port == port {
			return nil, nil, unix.EEXIST // same VNI and port in a namespace
		}
	}
	attrs := f.base(&x.LinkAttrs, mtu)
	v := &netlink.Vxlan{LinkAttrs: attrs, VxlanId: x.VxlanId, VtepDevIndex: x.VtepDevIndex,
		SrcAddr: slices.Clone(x.SrcAddr), Group: slices.Clone(x.Group), Port: port, Learning: x.Learning}
	return &fakeLink{link: v, maxMTU: maxMTU, liveMAC: true}, nil, nil
}

func (f *FakeKernel) buildBond(x *netlink.Bond) (*fakeLink, *fakeLink, error) {
	b := &netlink.Bond{LinkAttrs: f.base(&x.LinkAttrs, 1500), Mode: x.Mode, Miimon: 100,
		LacpRate: netlink.BOND_LACP_RATE_SLOW, XmitHashPolicy: netlink.BOND_XMIT_HASH_POLICY_LAYER2}
	if b.Mode < 0 || b.Mode >= netlink.BOND_MODE_UNKNOWN {
		b.Mode = netlink.BOND_MODE_BALANCE_RR
	}
	if x.Miimon >= 0 {
		b.Miimon = x.Miimon
	}
	if x.MinLinks >= 0 {
		b.MinLinks = x.MinLinks
	}
	return &fakeLink{link: b, maxMTU: 65535, liveMAC: true}, nil, nil
}

func (f *FakeKernel) LinkDel(link netlink.Link) error {
	fl, err := f.resolve(link)
	if err != nil {
		return err
	}
	if _, ok := fl.link.(*netlink.Device); ok || fl.tunnel != nil && fl.tunnel.fallback {
		return unix.EOPNOTSUPP // a NIC (or lo) has no rtnl_link_ops, a tunnel module keeps its fallback device
	}
	if err := f.write("del", fl.attrs().Name); err != nil {
		return err
	}
	f.unregister(fl)
	f.refresh()
	return nil
}

// unregister removes a link and what cannot live without it: a veth's
// peer, the VLANs, macvlans and VXLANs over it; its ports are released
// (a bond closes them).
func (f *FakeKernel) unregister(fl *fakeLink) {
	idx := fl.attrs().Index
	if _, gone := f.links[idx]; !gone {
		return
	}
	delete(f.links, idx)
	if _, ok := fl.link.(*netlink.Veth); ok {
		if pk := fl.peer(f); pk.links[fl.attrs().ParentIndex] != nil {
			pk.unregister(pk.links[fl.attrs().ParentIndex])
		}
	}
	for _, i := range f.indexes() {
		o := f.links[i]
		if o == nil {
			continue
		}
		switch x := o.link.(type) {
		case *netlink.Vlan, *netlink.Macvlan:
			if x.Attrs().ParentIndex == idx {
				f.unregister(o)
			}
		case *netlink.Vxlan:
			if x.VtepDevIndex == idx {
				f.unregister(o)
			}
		}
		if o.attrs().MasterIndex == idx {
			f.releasePort(o, fl)
		}
	}
}

// Settings.

func (f *FakeKernel) LinkSetUp(link netlink.Link) error { return f.setAdmin(link, true) }

func (f *FakeKernel) LinkSetDown(link netlink.Link) error { return f.setAdmin(link, false) }

func (f *FakeKernel) setAdmin(link netlink.Link, up bool) error {
	fl, err := f.resolve(link)
	if err != nil {
		return err
	}
	if _, ok := fl.link.(*netlink.Vlan); ok && up && !f.links[fl.attrs().ParentIndex].up() {
		return unix.ENETDOWN // vlan_open without loose binding
	}
	op := map[bool]string{true: "up", false: "down"}[up]
	if err := f.write(op, fl.attrs().Name); err != nil {
		return err
	}
	f.changeAdmin(fl, up)
	f.refresh()
	return nil
}

// changeAdmin sets the admin state; a VLAN follows its parent's (the 8021q
// module's NETDEV_UP and NETDEV_DOWN handling).
func (f *FakeKernel) changeAdmin(fl *fakeLink, up bool) {
	if up {
		fl.attrs().Flags |= net.FlagUp
	} else {
		fl.attrs().Flags &^= net.FlagUp
	}
	for _, o := range f.links {
		if v, ok := o.link.(*netlink.Vlan); ok && v.ParentIndex == fl.attrs().Index && o.up() != up {
			f.changeAdmin(o, up)
		}
	}
}

func (f *FakeKernel) LinkSetMTU(link netlink.Link, mtu int) error {
	fl, err := f.resolve(link)
	if err != nil {
		return err
	}
	if err := f.checkMTU(fl, mtu); err != nil {
		return err
	}
	if err := f.write("mtu", fl.attrs().Name); err != nil {
		return err
	}
	f.changeMTU(fl, mtu)
	if _, ok := fl.link.(*netlink.Bridge); ok {
		fl.mtuSetByUser = true
	}
	f.refresh()
	return nil
}

func (f *FakeKernel) checkMTU(fl *fakeLink, mtu int) error {
	switch fl.link.(type) {
	case *netlink.Vlan:
		if mtu > f.links[fl.attrs().ParentIndex].attrs().MTU {
			return unix.ERANGE // vlan_dev_change_mtu
		}
	case *netlink.Macvlan:
		if mtu > f.links[fl.attrs().ParentIndex].attrs().MTU {
			return unix.EINVAL
		}
	}
	if mtu < 68 || fl.maxMTU != 0 && mtu > fl.maxMTU {
		return unix.EINVAL // dev_validate_mtu
	}
	return nil
}

// changeMTU sets the MTU; a bond gives it to its ports, and the VLANs and
// macvlans over the link shrink with it.
func (f *FakeKernel) changeMTU(fl *fakeLink, mtu int) {
	fl.attrs().MTU = mtu
	for _, o := range f.links {
		switch o.link.(type) {
		case *netlink.Vlan, *netlink.Macvlan:
			if o.attrs().ParentIndex == fl.attrs().Index && o.attrs().MTU > mtu {
				f.changeMTU(o, mtu)
			}
		}
		if _, isBond := fl.link.(*netlink.Bond); isBond && o.attrs().MasterIndex == fl.attrs().Index {
			f.changeMTU(o, mtu)
		}
	}
}

func (f *FakeKernel) LinkSetAlias(link netlink.Link, alias string) error {
	fl, err := f.resolve(link)
	if err != nil {
		return err
	}
	if len(alias) > 255 {
		return unix.ERANGE // IFLA_IFALIAS's policy: IFALIASZ - 1
	}
	if err := f.write("alias", fl.attrs().Name); err != nil {
		return err
	}
	fl.attrs().Alias = alias
	return nil
}

func validMAC(mac net.HardwareAddr) bool {
	return len(mac) == 6 && mac[0]&1 == 0 && !slices.Equal(mac, make(net.HardwareAddr, 6))
}

func (f *FakeKernel) LinkSetHardwareAddr(link netlink.Link, mac net.HardwareAddr) error {
	fl, err := f.resolve(link)
	if err != nil {
		return err
	}
	switch {
	case len(mac) != 6:
		return unix.EINVAL
	case !validMAC(mac):
		return unix.EADDRNOTAVAIL
	case fl.up() && !fl.liveMAC:
		return unix.EBUSY // no IFF_LIVE_ADDR_CHANGE
	}
	if err := f.write("mac", fl.attrs().Name); err != nil {
		return err
	}
	fl.attrs().HardwareAddr = slices.Clone(mac)
	if _, ok := fl.link.(*netlink.Bridge); ok {
		fl.macSetByUser = true
	}
	f.refresh()
	return nil
}

func (f *FakeKernel) LinkSetMaster(link, master netlink.Link) error {
	fl, err := f.resolve(link)
	if err != nil {
		return err
	}
	m := f.links[master.Attrs().Index]
	switch {
	case m == nil:
		return unix.EINVAL // do_set_master: no such upper device
	case fl.attrs().MasterIndex == m.attrs().Index:
		return nil
	case m.kind() != "bridge" && m.kind() != "bond" && m.kind() != "vrf":
		return unix.EOPNOTSUPP // no ndo_add_slave
	case m.kind() == "vrf" && fl.kind() == "vrf":
		return unix.EINVAL // "Can not enslave an L3 master device to a VRF"
	case m.kind() != "vrf" && (fl.kind() == "vrf" || fl.kind() == "ipvlan"):
		return unix.EINVAL // IFF_NO_RX_HANDLER: netdev_rx_handler_register
	case fl == m:
		return unix.EBUSY
	case fl.kind() == "bridge" && m.kind() == "bridge":
		return unix.ELOOP
	case fl.attrs().MasterIndex != 0:
		return unix.EBUSY // already has a master
	case fl.attrs().Name == "lo":
		return unix.EINVAL
	case m.kind() == "bond" && fl.up():
		return unix.EPERM // "Device can not be enslaved while up"
	}
	if err := f.write("master", fl.attrs().Name); err != nil {
		return err
	}
	fl.attrs().MasterIndex = m.attrs().Index
	if m.kind() == "bridge" {
		f.joinBridge(fl, m)
	}
	if m.kind() == "vrf" && fl.up() { // cycle_netdev
		f.changeAdmin(fl, false)
		f.changeAdmin(fl, true)
	}
	if m.kind() == "bond" {
		f.changeMTU(fl, m.attrs().MTU)
		f.changeAdmin(fl, true) // the bond opens its new port
	}
	f.refresh()
	return nil
}

func (f *FakeKernel) LinkSetNoMaster(link netlink.Link) error {
	fl, err := f.resolve(link)
	if err != nil {
		return err
	}
	m := f.links[fl.attrs().MasterIndex]
	if m == nil {
		return nil
	}
	if err := f.write("nomaster", fl.attrs().Name); err != nil {
		return err
	}
	f.releasePort(fl, m)
	f.refresh()
	return nil
}

// releasePort takes a port from its master; a bond closes it.
func (f *FakeKernel) releasePort(port, master *fakeLink) {
	port.attrs().MasterIndex = 0
	port.cost = 0
	port.bm = fakeBridgeMember{}
	if master.kind() == "bond" {
		f.changeAdmin(port, false)
	}
}

func (f *FakeKernel) LinkSetMacvlanMode(link netlink.Link, mode netlink.MacvlanMode) error {
	fl, err := f.resolve(link)
	if err != nil {
		return err
	}
	m, ok := fl.link.(*netlink.Macvlan)
	if !ok {
		return unix.EOPNOTSUPP
	}
	if (m.Mode == netlink.MACVLAN_MODE_PASSTHRU) != (mode == netlink.MACVLAN_MODE_PASSTHRU) {
		return unix.EINVAL // macvlan_changelink: not to or from passthru
	}
	if err := f.write("macvlan-mode", fl.attrs().Name); err != nil {
		return err
	}
	m.Mode = mode
	return nil
}

// refresh recomputes what the kernel derives: carrier and operstate, and a
// bridge's MTU and MAC from its ports while they are not set.
// (A veth's carrier depends on its peer's namespace: every namespace of
// the world is refreshed.)
func (f *FakeKernel) refresh() {
	for _, k := range f.world.byName {
		k.refreshOne()
	}
}

func (f *FakeKernel) refreshOne() {
	for _, fl := range f.links {
		br, ok := fl.link.(*netlink.Bridge)
		if !ok {
			continue
		}
		var ports []*fakeLink
		for _, i := range f.indexes() {
			if f.links[i].attrs().MasterIndex == br.Index {
				ports = append(ports, f.links[i])
			}
		}
		if len(ports) == 0 {
			continue
		}
		if !fl.mtuSetByUser {
			br.MTU = ports[0].attrs().MTU
			for _, p := range ports {
				br.MTU = min(br.MTU, p.attrs().MTU)
			}
		}
		if !fl.macSetByUser {
			lowest := ports[0].attrs().HardwareAddr
			for _, p := range ports {
				if string(p.attrs().HardwareAddr) < string(lowest) {
					lowest = p.attrs().HardwareAddr
				}
			}
			br.HardwareAddr = slices.Clone(lowest)
		}
	}
	carrier := map[int]bool{}
	for range len(f.links) + 1 { // to a fixed point: carrier flows up the stack
		for i, fl := range f.links {
			carrier[i] = fl.up() && f.lowerUp(fl, carrier)
		}
	}
	for i, fl := range f.links {
		a := fl.attrs()
		a.RawFlags = unix.IFF_BROADCAST | unix.IFF_MULTICAST
		a.OperState = netlink.OperDown
		if fl.up() {
			a.RawFlags |= unix.IFF_UP
		}
		if carrier[i] {
			a.RawFlags |= unix.IFF_LOWER_UP | unix.IFF_RUNNING
			a.OperState = netlink.OperUp
		} else if fl.up() && (fl.kind() == "vlan" || fl.kind() == "macvlan") {
			a.OperState = netlink.OperLowerLayerDown
		}
	}
}

// lowerUp tells whether what fl sits on gives it carrier.
func (f *FakeKernel) lowerUp(fl *fakeLink, carrier map[int]bool) bool {
	a := fl.attrs()
	switch fl.link.(type) {
	case *netlink.Device:
		return fl.carrier || a.Name == "lo"
	case *netlink.Veth:
		peer := fl.peer(f).links[a.ParentIndex]
		return peer != nil && peer.up()
	case *netlink.Vlan, *netlink.Macvlan, *netlink.IPVlan:
		return carrier[a.ParentIndex]
	case *netlink.Bridge, *netlink.Bond:
		for i, o := range f.links {
			if o.attrs().MasterIndex == a.Index && carrier[i] {
				return true
			}
		}
		return false
	}
	return true // vxlan, dummy, tunnels, wireguard
}

// Raw rtnetlink: IFLA_INFO_DATA and IFLA_INFO_SLAVE_DATA.

// markUp is the alias, then the admin state, as do_setlink orders them.
func (f *FakeKernel) markUp(index int, alias string, up bool) error {
	l, err := f.LinkByIndex(index)
	if err != nil {
		return err
	}
	if err := f.LinkSetAlias(l, alias); err != nil || !up {
		return err
	}
	return f.LinkSetUp(l)
}

func (f *FakeKernel) readLink(index int) (netlink.Link, rawOps, error) {
	l, err := f.LinkByIndex(index)
	return l, f, err
}

func (f *FakeKernel) linkInfo(index int) (infoAttrs, error) {
	fl := f.links[index]
	if fl == nil {
		return infoAttrs{}, unix.ENODEV
	}
	var out infoAttrs
	if _, ok := fl.link.(*netlink.Bridge); ok {
		out.data = out.data.with(nl.IFLA_BR_STP_STATE, nl.Uint32Attr(boolU32(fl.stp)))
		out.data = out.data.with(nl.IFLA_BR_FORWARD_DELAY, nl.Uint32Attr(fl.fwdDelay))
		out.data = out.data.with(nl.IFLA_BR_VLAN_FILTERING, nl.Uint8Attr(uint8(boolU32(fl.vlanFiltering))))
	}
	if m := f.links[fl.attrs().MasterIndex]; m != nil && m.kind() == "bridge" {
		out.slaveData = out.slaveData.with(nl.IFLA_BRPORT_COST, nl.Uint32Attr(f.portCost(fl)))
	}
	f.bridgeInfo(fl, f.links[fl.attrs().MasterIndex], &out)
	return out, nil
}

// portCost is a bridge port's cost: set, or derived from the speed (a veth
// reports 10Gb/s: 2; a device of unknown speed: 100).
func (f *FakeKernel) portCost(fl *fakeLink) uint32 {
	switch {
	case fl.cost != 0:
		return fl.cost
	case fl.kind() == "veth":
		return 2
	}
	return 100
}

func (f *FakeKernel) setInfoData(index int, kind string, attrs []attr) error {
	fl := f.links[index]
	if fl == nil {
		return unix.ENODEV
	}
	if fl.kind() != kind {
		return unix.EOPNOTSUPP // IFLA_INFO_KIND of another rtnl_link_ops
	}
	var apply func() error
	var err error
	switch x := fl.link.(type) {
	case *netlink.Bridge:
		apply, err = f.bridgeData(fl, attrs)
	case *netlink.Bond:
		apply, err = f.bondData(fl, x, attrs)
	case *netlink.Vxlan:
		apply, err = vxlanData(x, attrs)
	case *netlink.Gretun, *netlink.Iptun, *netlink.Sittun, *netlink.Ip6tnl:
		apply, err = f.tunnelData(fl, attrs)
	case *netlink.IPVlan:
		apply, err = f.ipvlanData(x, attrs)
	default:
		err = unix.EOPNOTSUPP
	}
	if err != nil {
		return err
	}
	if err := f.write("data", fl.attrs().Name); err != nil {
		return err
	}
	return apply()
}

func (f *FakeKernel) bridgeData(fl *fakeLink, attrs []attr) (func() error, error) {
	stp, delay, filtering := fl.stp, fl.fwdDelay, fl.vlanFiltering
	for _, a := range attrs {
		switch a.typ {
		case nl.IFLA_BR_STP_STATE:
			v, _ := u32Of(a.val)
			stp = v != 0
		case nl.IFLA_BR_FORWARD_DELAY:
			delay, _ = u32Of(a.val)
		case nl.IFLA_BR_VLAN_FILTERING:
			v, _ := u8Of(a.val)
			filtering = v != 0
		default:
			return nil, fmt.Errorf("fake kernel: bridge attribute %d: %w", a.typ, unix.EOPNOTSUPP)
		}
	}
	if stp && (delay < 200 || delay > 3000) {
		return nil, unix.ERANGE // br_set_forward_delay with STP on: 2s..30s
	}
	return func() error {
		fl.stp, fl.fwdDelay, fl.vlanFiltering = stp, delay, filtering
		return nil
	}, nil
}

func (f *FakeKernel) bondData(fl *fakeLink, b *netlink.Bond, attrs []attr) (func() error, error) {
	next := *b
	primary := fl.primary
	for _, a := range attrs {
		v32, _ := u32Of(a.val)
		v8, _ := u8Of(a.val)
		switch a.typ {
		case nl.IFLA_BOND_MIIMON:
			next.Miimon = int(v32)
		case nl.IFLA_BOND_MIN_LINKS:
			next.MinLinks = int(v32)
		case nl.IFLA_BOND_XMIT_HASH_POLICY:
			next.XmitHashPolicy = netlink.BondXmitHashPolicy(v8)
		case nl.IFLA_BOND_AD_LACP_RATE:
			if b.Mode != netlink.BOND_MODE_802_3AD {
				return nil, unix.EACCES // mode dependency: 802.3ad only
			}
			if fl.up() {
				return nil, unix.EBUSY // BOND_OPTFLAG_IFDOWN
			}
			next.LacpRate = netlink.BondLacpRate(v8)
		case nl.IFLA_BOND_PRIMARY:
			switch b.Mode {
			case netlink.BOND_MODE_ACTIVE_BACKUP, netlink.BOND_MODE_BALANCE_TLB, netlink.BOND_MODE_BALANCE_ALB:
			default:
				return nil, unix.EACCES
			}
			p := f.links[int(v32)]
			if p == nil {
				return nil, unix.ENODEV
			}
			primary = p.attrs().Name
		default:
			return nil, fmt.Errorf("fake kernel: bond attribute %d: %w", a.typ, unix.EOPNOTSUPP)
		}
	}
	return func() error {
		*b = next
		fl.primary = primary
		return nil
	}, nil
}

// vxlanData takes what vxlan_changelink accepts: the local address, the
// remote (within the tunnel's family) and learning.
func vxlanData(v *netlink.Vxlan, attrs []attr) (func() error, error) {
	next := *v
	is4 := func(ip net.IP) bool { return ip == nil || ip.To4() != nil }
	fam4 := is4(v.SrcAddr) && is4(v.Group)
	for _, a := range attrs {
		switch a.typ {
		case nl.IFLA_VXLAN_LOCAL, nl.IFLA_VXLAN_GROUP:
			if !fam4 || len(a.val) != 4 {
				return nil, unix.EOPNOTSUPP // no change of the address family
			}
		case nl.IFLA_VXLAN_LOCAL6, nl.IFLA_VXLAN_GROUP6:
			if fam4 && (v.SrcAddr != nil || v.Group != nil) || len(a.val) != 16 {
				return nil, unix.EOPNOTSUPP
			}
		}
		switch a.typ {
		case nl.IFLA_VXLAN_LOCAL, nl.IFLA_VXLAN_LOCAL6:
			next.SrcAddr = slices.Clone(net.IP(a.val))
		case nl.IFLA_VXLAN_GROUP, nl.IFLA_VXLAN_GROUP6:
			if addrOf(v.Group).IsMulticast() != addrOf(net.IP(a.val)).IsMulticast() && addrOf(net.IP(a.val)).IsValid() {
				return nil, unix.EOPNOTSUPP
			}
			next.Group = slices.Clone(net.IP(a.val))
		case nl.IFLA_VXLAN_LEARNING:
			l, _ := u8Of(a.val)
			next.Learning = l != 0
		default:
			return nil, fmt.Errorf("fake kernel: vxlan attribute %d cannot change: %w", a.typ, unix.EOPNOTSUPP)
		}
	}
	return func() error {
		*v = next
		return nil
	}, nil
}

func (f *FakeKernel) setSlaveData(index int, masterKind string, attrs []attr) error {
	fl := f.links[index]
	if fl == nil {
		return unix.ENODEV
	}
	m := f.links[fl.attrs().MasterIndex]
	if m == nil || m.kind() != masterKind {
		return unix.EINVAL // no master of that kind
	}
	var changes []func()
	for _, a := range attrs {
		if masterKind != "bridge" {
			return fmt.Errorf("fake kernel: %s port attribute %d: %w", masterKind, a.typ, unix.EOPNOTSUPP)
		}
		change, err := bridgePortData(fl, a)
		if err != nil {
			return err
		}
		changes = append(changes, change)
	}
	if err := f.write("slave-data", fl.attrs().Name); err != nil {
		return err
	}
	for _, change := range changes {
		change()
	}
	return nil
}
