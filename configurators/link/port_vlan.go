package link

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/nlattr"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// BridgeVLANConfigurator manages items of type "bridge-vlans": the VLAN
// membership of a port of a bridge netagent owns, or of such a bridge
// itself (`bridge vlan ... self`).
//
// It converges the whole set as a diff: the VLANs to add, or whose flags
// (pvid, untagged) change, in one request, then the extra ones deleted in
// another; nothing is written when the kernel matches. Deleting the item
// gives the member the kernel's default back (the bridge's default_pvid
// as pvid and untagged; none when it is 0), which is what a new port
// gets: a member the intent declares no VLANs for has exactly that. A
// bridge netagent does not own, and its ports, are never touched
// (ErrNotOwned).
type BridgeVLANConfigurator struct {
	k *kernel
}

var _ reconciler.Configurator = (*BridgeVLANConfigurator)(nil)

// NewBridgeVLANConfigurator returns the bridge VLAN configurator for the
// target namespace.
func NewBridgeVLANConfigurator(t *netnsx.Target) *BridgeVLANConfigurator {
	return &BridgeVLANConfigurator{k: &kernel{nl: t.NL, raw: persistentRaw(t.NsHandle()), ns: namedNamespaces{nl: t.NL}}}
}

// Create makes the member's VLANs exactly the item's. The member must be
// a port of the bridge (or the bridge itself), which netagent must own.
func (c *BridgeVLANConfigurator) Create(ctx context.Context, item dg.Item) error {
	want, err := items.As[*items.BridgeVLANs](item)
	if err != nil {
		return err
	}
	member, _, err := c.k.vlanMember(want)
	if err != nil {
		return err
	}
	if member == nil {
		return fmt.Errorf("vlans of %s: %s is not a port of bridge %s: %w", want.IfName, want.IfName, want.Bridge, ErrMissing)
	}
	return c.k.convergeVLANs(member, want.Self(), want.VLANs, want.IfName)
}

// Modify converges to the new set, as Create does.
func (c *BridgeVLANConfigurator) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	return c.Create(ctx, newItem)
}

// Delete gives the member the kernel's default membership back. A member
// or bridge that is gone, or a link that is no longer a port of that
// bridge (it lost its VLANs with it), is fine.
func (c *BridgeVLANConfigurator) Delete(ctx context.Context, item dg.Item) error {
	want, err := items.As[*items.BridgeVLANs](item)
	if err != nil {
		return err
	}
	member, bridge, err := c.k.vlanMember(want)
	if err != nil || member == nil {
		return ignoreMissing(err)
	}
	dpvid, err := c.k.defaultPVID(bridge)
	if err != nil {
		return fmt.Errorf("vlans of %s: %w", want.IfName, err)
	}
	return c.k.convergeVLANs(member, want.Self(), items.DefaultVLANs(dpvid), want.IfName)
}

// NeedsRecreate is always false: a set changes in place.
func (c *BridgeVLANConfigurator) NeedsRecreate(oldItem, newItem dg.Item) bool { return false }

func ignoreMissing(err error) error {
	if errors.Is(err, ErrMissing) {
		return nil
	}
	return err
}

// vlanMember finds the bridge, which netagent must own, and the member:
// the bridge itself, or the link of that name if it is a port of the
// bridge (nil otherwise).
func (k *kernel) vlanMember(want *items.BridgeVLANs) (member, bridge netlink.Link, err error) {
	if bridge, err = k.lookup(want.Bridge); err == nil && bridge == nil {
		err = fmt.Errorf("bridge %s of vlans of %s: %w", want.Bridge, want.IfName, ErrMissing)
	}
	if err != nil {
		return nil, nil, err
	}
	if bridge.Type() != string(items.KindBridge) || !owned(bridge) {
		return nil, nil, fmt.Errorf("vlans of %s: bridge %s: %w", want.IfName, want.Bridge, ErrNotOwned)
	}
	if want.Self() {
		return bridge, bridge, nil
	}
	member, err = k.lookup(want.IfName)
	if err != nil || member == nil || member.Attrs().MasterIndex != bridge.Attrs().Index {
		return nil, bridge, err
	}
	return member, bridge, nil
}

// convergeVLANs writes the difference between the member's VLANs and
// want: first what is missing or has other flags (so that a pvid moves
// before the old one goes), then what is extra.
func (k *kernel) convergeVLANs(member netlink.Link, self bool, want items.VLANSet, name string) error {
	all, err := k.raw.bridgeVLANs()
	if err != nil {
		return fmt.Errorf("reading vlans of %s: %w", name, err)
	}
	idx := member.Attrs().Index
	add, del := vlanDiff(all[idx], want)
	if len(add) > 0 {
		if err := k.raw.setBridgeVLANs(idx, self, false, add); err != nil {
			return fmt.Errorf("adding vlans %s to %s: %w", add, name, err)
		}
	}
	if len(del) > 0 {
		if err := k.raw.setBridgeVLANs(idx, self, true, del); err != nil {
			return fmt.Errorf("deleting vlans %s from %s: %w", del, name, err)
		}
	}
	return nil
}

// vlanDiff returns the VLANs to add (missing, or with other flags) and
// to delete (extra), each in canonical ranges: a trunk of 4094 VLANs
// with one VLAN changed gives that one VLAN.
func vlanDiff(have, want items.VLANSet) (add, del items.VLANSet) {
	h, w := tableOf(have), tableOf(want)
	var toAdd, toDel vlanTable
	for vid := items.MinVID; vid <= items.MaxVID; vid++ {
		switch {
		case w[vid] != 0 && w[vid] != h[vid]:
			toAdd[vid] = w[vid]
		case w[vid] == 0 && h[vid] != 0:
			toDel[vid] = vlanIn
		}
	}
	return toAdd.set(), toDel.set()
}

// vlanTable is one member's VLANs by VID, dense (4 KiB whatever the
// set): 0 for a VID not in it, else vlanIn with vlanPVID and
// vlanUntagged.
type vlanTable [items.MaxVID + 1]uint8

const (
	vlanIn = 1 << iota
	vlanPVID
	vlanUntagged
)

func tableOf(s items.VLANSet) *vlanTable {
	t := new(vlanTable)
	for _, r := range s {
		t.add(r)
	}
	return t
}

// add puts r's VIDs (1-4094; others are left out) in t with r's flags.
func (t *vlanTable) add(r items.VLANRange) {
	fl := uint8(vlanIn)
	if r.PVID {
		fl |= vlanPVID
	}
	if r.Untagged {
		fl |= vlanUntagged
	}
	for v := max(int(r.From), items.MinVID); v <= min(int(r.To), items.MaxVID); v++ {
		t[v] = fl
	}
}

// set returns t in canonical form (as items.CanonicalVLANs).
func (t *vlanTable) set() items.VLANSet {
	var out items.VLANSet
	for vid := items.MinVID; vid <= items.MaxVID; vid++ {
		fl := t[vid]
		if fl == 0 {
			continue
		}
		pvid, untagged := fl&vlanPVID != 0, fl&vlanUntagged != 0
		if n := len(out); n > 0 && !pvid && !out[n-1].PVID && int(out[n-1].To)+1 == vid && out[n-1].Untagged == untagged {
			out[n-1].To = uint16(vid)
			continue
		}
		out = append(out, items.VLANRange{From: uint16(vid), To: uint16(vid), PVID: pvid, Untagged: untagged})
	}
	return out
}

// defaultPVID reads a bridge's default_pvid.
func (k *kernel) defaultPVID(bridge netlink.Link) (uint16, error) {
	info, err := k.raw.linkInfo(bridge.Attrs().Index)
	if err != nil {
		return 0, fmt.Errorf("reading default_pvid of %s: %w", bridge.Attrs().Name, err)
	}
	// A kernel without VLAN filtering (CONFIG_BRIDGE_VLAN_FILTERING off)
	// reports no default_pvid, and no VLANs: its default is none.
	v, _ := u16Of(info.data.get(nl.IFLA_BR_VLAN_DEFAULT_PVID))
	return v, nil
}

func u16Of(b []byte) (uint16, bool) {
	if len(b) < 2 {
		return 0, false
	}
	return binary.NativeEndian.Uint16(b), true
}

// bridgeVLANReads are what one read-back learns of bridge VLANs: one
// dump of every member's VLANs, and each bridge's default_pvid, by
// ifindex.
type bridgeVLANReads struct {
	vlans map[int]items.VLANSet
	dpvid map[int]uint16
}

// readBridgeVLANs is the read-back of bridge-vlans items: for l, an
// owned bridge itself or a port of one, an item when the intent (hint)
// declares one or when the membership differs from the kernel's default
// (someone changed it: the reconciler gives the default back).
func (r *reader) readBridgeVLANs(l netlink.Link) error {
	bridge := l
	if kindOf(l) != items.KindBridge || !r.takes(l) {
		m, ok := r.byIndex[l.Attrs().MasterIndex]
		if !ok || kindOf(m) != items.KindBridge || !r.takes(m) {
			return nil
		}
		bridge = m
	}
	if r.bv.vlans == nil {
		all, err := r.k.raw.bridgeVLANs()
		if err != nil {
			return fmt.Errorf("reading bridge vlans: %w", err)
		}
		r.bv = bridgeVLANReads{vlans: all, dpvid: map[int]uint16{}}
	}
	got := &items.BridgeVLANs{IfName: l.Attrs().Name, Bridge: bridge.Attrs().Name,
		VLANs: r.bv.vlans[l.Attrs().Index]}
	if got.VLANs == nil {
		got.VLANs = items.VLANSet{}
	}
	if r.hintBridgeVLANs(got.IfName) == nil {
		dpvid, ok := r.bv.dpvid[bridge.Attrs().Index]
		if !ok {
			var err error
			if dpvid, err = r.k.defaultPVID(bridge); err != nil {
				return err
			}
			r.bv.dpvid[bridge.Attrs().Index] = dpvid
		}
		if slices.Equal(got.VLANs, items.DefaultVLANs(dpvid)) {
			return nil
		}
	}
	r.out = append(r.out, got)
	return nil
}

func (r *reader) hintBridgeVLANs(name string) *items.BridgeVLANs {
	if r.hint == nil {
		return nil
	}
	item, ok := r.hint.Get(dg.ItemRef{Type: items.TypeBridgeVLANs, Name: name})
	if !ok {
		return nil
	}
	b, _ := item.(*items.BridgeVLANs)
	return b
}

// The raw requests of bridge VLANs (rawNL's part of rawOps).

// bridgeVLANs dumps the VLANs of every bridge member, the bridges
// themselves included (`bridge -c vlan show`), in canonical form. The
// dump is the compressed one (RTEXT_FILTER_BRVLAN_COMPRESSED): a range
// of VLANs of the same flags comes as its two ends, not one entry per
// VID.
func (r rawNL) bridgeVLANs() (map[int]items.VLANSet, error) {
	var msgs [][]byte
	var err error
	for range dumpAttempts {
		req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_DUMP)
		req.AddData(nl.NewIfInfomsg(unix.AF_BRIDGE))
		req.AddData(nl.NewRtAttr(unix.IFLA_EXT_MASK, nl.Uint32Attr(nl.RTEXT_FILTER_BRVLAN_COMPRESSED)))
		if msgs, err = r.execute(req, unix.RTM_NEWLINK); !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	tables := map[int]*vlanTable{}
	for _, m := range msgs {
		if err := parseBridgeVLANs(m, tables); err != nil {
			return nil, err
		}
	}
	out := make(map[int]items.VLANSet, len(tables))
	for idx, t := range tables {
		out[idx] = t.set()
	}
	return out, nil
}

// parseBridgeVLANs adds the IFLA_BRIDGE_VLAN_INFO entries of one
// AF_BRIDGE RTM_NEWLINK message to its member's table in out, by the
// message's ifindex. The entries are read as the kernel reads a request
// (vlanInfoRanges): single VIDs, or ranges as begin and end.
func parseBridgeVLANs(m []byte, out map[int]*vlanTable) error {
	if len(m) < unix.SizeofIfInfomsg {
		return fmt.Errorf("short RTM_NEWLINK message")
	}
	msg := nl.DeserializeIfInfomsg(m)
	it := nlattr.Iter{B: m[unix.SizeofIfInfomsg:]}
	for it.Next() {
		if it.Type() != unix.IFLA_AF_SPEC {
			continue
		}
		ranges, err := vlanInfoRanges(it.Val)
		if err != nil {
			return fmt.Errorf("bridge vlans of ifindex %d: %w", msg.Index, err)
		}
		if len(ranges) == 0 {
			continue
		}
		t := out[int(msg.Index)]
		if t == nil {
			t = new(vlanTable)
			out[int(msg.Index)] = t
		}
		for _, r := range ranges {
			t.add(r)
		}
	}
	return it.Err
}

// vlanInfoRanges reads the IFLA_BRIDGE_VLAN_INFO entries of an
// IFLA_AF_SPEC as br_afspec does: a single VID, or a RANGE_BEGIN entry
// followed by a RANGE_END one of the same flags and a higher VID (no
// PVID on a range); VIDs 1-4094. Anything else is EINVAL, as the kernel
// answers.
func vlanInfoRanges(spec []byte) ([]items.VLANRange, error) {
	var out []items.VLANRange
	var begin *nl.BridgeVlanInfo
	it := nlattr.Iter{B: spec}
	for it.Next() {
		if it.Type() != nl.IFLA_BRIDGE_VLAN_INFO {
			continue
		}
		if len(it.Val) < 4 {
			return nil, fmt.Errorf("short vlan info: %w", unix.EINVAL)
		}
		info := nl.DeserializeBridgeVlanInfo(it.Val)
		if info.Vid < items.MinVID || info.Vid > items.MaxVID {
			return nil, fmt.Errorf("vlan %d: %w", info.Vid, unix.EINVAL)
		}
		const rangeBits = nl.BRIDGE_VLAN_INFO_RANGE_BEGIN | nl.BRIDGE_VLAN_INFO_RANGE_END
		switch {
		case info.Flags&nl.BRIDGE_VLAN_INFO_RANGE_BEGIN != 0:
			if begin != nil || info.Flags&nl.BRIDGE_VLAN_INFO_RANGE_END != 0 || info.PortVID() {
				return nil, fmt.Errorf("vlan range begin %d: %w", info.Vid, unix.EINVAL)
			}
			begin = info
			continue
		case begin != nil:
			if info.Flags&nl.BRIDGE_VLAN_INFO_RANGE_END == 0 || info.Vid <= begin.Vid ||
				info.Flags&^rangeBits != begin.Flags&^rangeBits {
				return nil, fmt.Errorf("vlan range %d-%d: %w", begin.Vid, info.Vid, unix.EINVAL)
			}
			out = append(out, items.VLANRange{From: begin.Vid, To: info.Vid, Untagged: info.EngressUntag()})
			begin = nil
		case info.Flags&nl.BRIDGE_VLAN_INFO_RANGE_END != 0:
			return nil, fmt.Errorf("vlan range end %d without a begin: %w", info.Vid, unix.EINVAL)
		default:
			out = append(out, items.VLANRange{From: info.Vid, To: info.Vid, PVID: info.PortVID(), Untagged: info.EngressUntag()})
		}
	}
	if it.Err != nil {
		return nil, it.Err
	}
	if begin != nil {
		return nil, fmt.Errorf("vlan range begin %d without an end: %w", begin.Vid, unix.EINVAL)
	}
	return out, nil
}

// setBridgeVLANs adds (RTM_SETLINK: a VLAN present gets the new flags) or
// deletes (RTM_DELLINK) vlans of a port (the bridge's entry for it) or,
// with self, of the bridge itself, in one request.
func (r rawNL) setBridgeVLANs(index int, self, del bool, vlans items.VLANSet) error {
	cmd := unix.RTM_SETLINK
	if del {
		cmd = unix.RTM_DELLINK
	}
	req := nl.NewNetlinkRequest(cmd, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_BRIDGE)
	msg.Index = int32(index)
	req.AddData(msg)
	req.AddData(bridgeVLANSpec(self, vlans))
	_, err := r.execute(req, 0)
	return err
}

// bridgeVLANSpec encodes vlans as IFLA_AF_SPEC: IFLA_BRIDGE_FLAGS (self or
// master) and one IFLA_BRIDGE_VLAN_INFO per VID, or a RANGE_BEGIN and
// RANGE_END pair per range.
func bridgeVLANSpec(self bool, vlans items.VLANSet) *nl.RtAttr {
	spec := nl.NewRtAttr(unix.IFLA_AF_SPEC, nil)
	flags := uint16(nl.BRIDGE_FLAGS_MASTER)
	if self {
		flags = nl.BRIDGE_FLAGS_SELF
	}
	spec.AddRtAttr(nl.IFLA_BRIDGE_FLAGS, nl.Uint16Attr(flags))
	for _, v := range vlans {
		var fl uint16
		if v.PVID {
			fl |= nl.BRIDGE_VLAN_INFO_PVID
		}
		if v.Untagged {
			fl |= nl.BRIDGE_VLAN_INFO_UNTAGGED
		}
		if v.From == v.To {
			spec.AddRtAttr(nl.IFLA_BRIDGE_VLAN_INFO, (&nl.BridgeVlanInfo{Flags: fl, Vid: v.From}).Serialize())
			continue
		}
		spec.AddRtAttr(nl.IFLA_BRIDGE_VLAN_INFO, (&nl.BridgeVlanInfo{Flags: fl | nl.BRIDGE_VLAN_INFO_RANGE_BEGIN, Vid: v.From}).Serialize())
		spec.AddRtAttr(nl.IFLA_BRIDGE_VLAN_INFO, (&nl.BridgeVlanInfo{Flags: fl | nl.BRIDGE_VLAN_INFO_RANGE_END, Vid: v.To}).Serialize())
	}
	return spec
}
