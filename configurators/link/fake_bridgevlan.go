package link

import (
	"fmt"
	"maps"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// fakeBridgeMember is the VLAN and STP state of a bridge, or of a bridge
// port, in the fake kernel, as the kernel keeps it: a new bridge has
// default_pvid 1 and is itself a member of VLAN 1 (pvid, untagged); a new
// port gets the bridge's default_pvid the same way (none when it is 0)
// and priority 32; a released port loses both.
type fakeBridgeMember struct {
	vlans       map[uint16]items.VLANFlags
	defaultPVID uint16 // a bridge's
	priority    uint16 // a port's
}

// fakeDefaultPriority is a new bridge port's STP priority.
const fakeDefaultPriority = 32

// newBridgeMember is a new bridge's own state.
func newBridgeMember() fakeBridgeMember {
	return fakeBridgeMember{vlans: defaultMembership(1), defaultPVID: 1}
}

func defaultMembership(dpvid uint16) map[uint16]items.VLANFlags {
	m := map[uint16]items.VLANFlags{}
	if dpvid != 0 {
		m[dpvid] = items.VLANFlags{PVID: true, Untagged: true}
	}
	return m
}

// joinBridge gives a new port of bridge m its default state.
func (f *FakeKernel) joinBridge(port, m *fakeLink) {
	port.bm = fakeBridgeMember{vlans: defaultMembership(m.bm.defaultPVID), priority: fakeDefaultPriority}
}

// bridgeInfo adds a bridge's default_pvid and a bridge port's priority
// to linkInfo's answer.
func (f *FakeKernel) bridgeInfo(fl, master *fakeLink, out *infoAttrs) {
	if fl.kind() == "bridge" {
		out.data = out.data.with(nl.IFLA_BR_VLAN_DEFAULT_PVID, nl.Uint16Attr(fl.bm.defaultPVID))
	}
	if master != nil && master.kind() == "bridge" {
		out.slaveData = out.slaveData.with(nl.IFLA_BRPORT_PRIORITY, nl.Uint16Attr(fl.bm.priority))
	}
}

// bridgePortData checks a bridge port attribute as br_setport does (cost
// 1-65535 and priority 0-63, ERANGE otherwise) and returns its change.
func bridgePortData(fl *fakeLink, a attr) (func(), error) {
	switch a.typ {
	case nl.IFLA_BRPORT_COST:
		v, _ := u32Of(a.val)
		if v < 1 || v > 65535 {
			return nil, unix.ERANGE
		}
		return func() { fl.cost = v }, nil
	case nl.IFLA_BRPORT_PRIORITY:
		v, _ := u16Of(a.val)
		if v > 63 {
			return nil, unix.ERANGE
		}
		return func() { fl.bm.priority = v }, nil
	}
	return nil, fmt.Errorf("fake kernel: bridge port attribute %d: %w", a.typ, unix.EOPNOTSUPP)
}

// bridgeVLANs dumps every bridge's and bridge port's VLANs.
func (f *FakeKernel) bridgeVLANs() (map[int]items.VLANSet, error) {
	out := map[int]items.VLANSet{}
	for idx, fl := range f.links {
		m := f.links[fl.attrs().MasterIndex]
		if (fl.kind() == "bridge" || m != nil && m.kind() == "bridge") && len(fl.bm.vlans) > 0 {
			out[idx] = items.CanonicalVLANs(fl.bm.vlans)
		}
	}
	return out, nil
}

// setBridgeVLANs takes the request as br_afspec does: the ranges are
// encoded as rawNL sends them (bridgeVLANSpec) and read back as the
// kernel reads them (vlanInfoRanges: VIDs 1-4094, a range's begin and
// end of the same flags, without pvid), and each request's ranges are
// kept in VLANRequests. Self is only for a bridge and master only for a
// bridge port; a delete of a VLAN that is not there is ENOENT. A pvid
// moves (a member has one), and adding a VLAN present changes its
// flags.
func (f *FakeKernel) setBridgeVLANs(index int, self, del bool, vlans items.VLANSet) error {
	fl := f.links[index]
	if fl == nil {
		return unix.ENODEV
	}
	m := f.links[fl.attrs().MasterIndex]
	switch {
	case self && fl.kind() != "bridge":
		return unix.EOPNOTSUPP // no ndo_bridge_setlink
	case !self && (m == nil || m.kind() != "bridge"):
		return unix.EOPNOTSUPP
	}
	ranges, err := vlanInfoRanges(bridgeVLANSpec(self, vlans).Serialize()[unix.SizeofRtAttr:])
	if err != nil {
		return err
	}
	next := maps.Clone(fl.bm.vlans)
	if next == nil {
		next = map[uint16]items.VLANFlags{}
	}
	for _, r := range ranges {
		for v := uint32(r.From); v <= uint32(r.To); v++ {
			vid := uint16(v)
			if del {
				if _, ok := next[vid]; !ok {
					return unix.ENOENT
				}
				delete(next, vid)
				continue
			}
			if r.PVID {
				for o, ofl := range next {
					ofl.PVID = false
					next[o] = ofl
				}
			}
			next[vid] = items.VLANFlags{PVID: r.PVID, Untagged: r.Untagged}
		}
	}
	op := "vlan-add"
	if del {
		op = "vlan-del"
	}
	if err := f.write(op, fl.attrs().Name); err != nil {
		return err
	}
	f.VLANRequests = append(f.VLANRequests, fmt.Sprintf("%s %s: %s", op, fl.attrs().Name, items.VLANSet(ranges)))
	fl.bm.vlans = next
	return nil
}
