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
	have := all[member.Attrs().Index]
	add, del := vlanDiff(have, want.Map())
	idx := member.Attrs().Index
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
// to delete (extra), each in canonical ranges.
func vlanDiff(have, want map[uint16]items.VLANFlags) (add, del items.VLANSet) {
	toAdd := map[uint16]items.VLANFlags{}
	for vid, fl := range want {
		if cur, ok := have[vid]; !ok || cur != fl {
			toAdd[vid] = fl
		}
	}
	toDel := map[uint16]items.VLANFlags{}
	for vid := range have {
		if _, ok := want[vid]; !ok {
			toDel[vid] = items.VLANFlags{}
		}
	}
	return items.CanonicalVLANs(toAdd), items.CanonicalVLANs(toDel)
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
	vlans map[int]map[uint16]items.VLANFlags
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
		VLANs: items.CanonicalVLANs(r.bv.vlans[l.Attrs().Index])}
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
// themselves included (`bridge vlan show`), one entry per VID.
func (r rawNL) bridgeVLANs() (map[int]map[uint16]items.VLANFlags, error) {
	var msgs [][]byte
	var err error
	for range dumpAttempts {
		req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_DUMP)
		req.AddData(nl.NewIfInfomsg(unix.AF_BRIDGE))
		req.AddData(nl.NewRtAttr(unix.IFLA_EXT_MASK, nl.Uint32Attr(nl.RTEXT_FILTER_BRVLAN)))
		if msgs, err = r.execute(req, unix.RTM_NEWLINK); !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	out := map[int]map[uint16]items.VLANFlags{}
	for _, m := range msgs {
		if err := parseBridgeVLANs(m, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseBridgeVLANs adds the IFLA_BRIDGE_VLAN_INFO entries of one
// AF_BRIDGE RTM_NEWLINK message to out, by the message's ifindex.
func parseBridgeVLANs(m []byte, out map[int]map[uint16]items.VLANFlags) error {
	if len(m) < unix.SizeofIfInfomsg {
		return fmt.Errorf("short RTM_NEWLINK message")
	}
	msg := nl.DeserializeIfInfomsg(m)
	it := nlattr.Iter{B: m[unix.SizeofIfInfomsg:]}
	for it.Next() {
		if it.Type() != unix.IFLA_AF_SPEC {
			continue
		}
		spec := nlattr.Iter{B: it.Val}
		for spec.Next() {
			if spec.Type() != nl.IFLA_BRIDGE_VLAN_INFO || len(spec.Val) < 4 {
				continue
			}
			info := nl.DeserializeBridgeVlanInfo(spec.Val)
			set := out[int(msg.Index)]
			if set == nil {
				set = map[uint16]items.VLANFlags{}
				out[int(msg.Index)] = set
			}
			set[info.Vid] = items.VLANFlags{PVID: info.PortVID(), Untagged: info.EngressUntag()}
		}
		if spec.Err != nil {
			return spec.Err
		}
	}
	return it.Err
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
