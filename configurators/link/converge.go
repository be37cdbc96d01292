package link

import (
	"bytes"
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/netagent/netagent/items"
)

// converge changes an existing link netagent owns into want, writing only
// what differs from what the kernel holds: when the kernel already matches,
// it makes no write at all. Attributes that cannot change in place are not
// its business (see InterfaceNeedsRecreate). The link is set down first
// when want has it down, and up last when want has it up, so that it never
// runs with half its settings.
func (k *kernel) converge(l netlink.Link, want *items.Interface) error {
	obs, err := k.observe(l, k.nameOf, true)
	if err != nil {
		return err
	}
	if mask(obs, want).Equal(want) {
		return nil
	}
	return k.runSteps(l, obs, want, k.convergeAlias)
}

// runSteps runs the converge steps in their order, with alias as the step
// that sets the alias.
func (k *kernel) runSteps(l netlink.Link, obs, want *items.Interface, alias convergeStep) error {
	steps := []convergeStep{k.convergeDown, k.convergeMTU, k.convergeMAC, alias, k.convergeKind, k.convergeUp}
	for _, step := range steps {
		if err := step(l, obs, want); err != nil {
			return fmt.Errorf("configuring %s %s: %w", want.Kind, want.IfName, err)
		}
	}
	return nil
}

// convergeStep changes one thing of l from obs (what the kernel holds) to
// want, if it differs.
type convergeStep func(l netlink.Link, obs, want *items.Interface) error

func (k *kernel) convergeDown(l netlink.Link, obs, want *items.Interface) error {
	if want.AdminUp || !obs.AdminUp {
		return nil
	}
	if err := k.nl.LinkSetDown(l); err != nil {
		return fmt.Errorf("setting down: %w", err)
	}
	l.Attrs().Flags &^= netUp
	return nil
}

func (k *kernel) convergeUp(l netlink.Link, obs, want *items.Interface) error {
	if !want.AdminUp || obs.AdminUp {
		return nil
	}
	if err := k.nl.LinkSetUp(l); err != nil {
		return fmt.Errorf("setting up: %w", err)
	}
	return nil
}

func (k *kernel) convergeMTU(l netlink.Link, obs, want *items.Interface) error {
	if want.MTU == 0 || want.MTU == obs.MTU {
		return nil
	}
	if err := k.nl.LinkSetMTU(l, want.MTU); err != nil {
		return fmt.Errorf("setting mtu %d: %w", want.MTU, err)
	}
	return nil
}

func (k *kernel) convergeMAC(l netlink.Link, obs, want *items.Interface) error {
	if want.MAC == nil || bytes.Equal(want.MAC, obs.MAC) {
		return nil
	}
	err := k.whileDown(l, func() error { return k.nl.LinkSetHardwareAddr(l, want.MAC) })
	if err != nil {
		return fmt.Errorf("setting mac %s: %w", want.MAC, err)
	}
	return nil
}

// convergeAlias keeps the mark on an owned link, with the intent's alias
// after it.
func (k *kernel) convergeAlias(l netlink.Link, obs, want *items.Interface) error {
	return k.setAlias(l, markedAlias(want.Alias))
}

// setAlias sets the kernel alias of l, if it differs.
func (k *kernel) setAlias(l netlink.Link, kernelAlias string) error {
	if l.Attrs().Alias == kernelAlias {
		return nil
	}
	if err := k.nl.LinkSetAlias(l, kernelAlias); err != nil {
		return fmt.Errorf("setting alias %q: %w", kernelAlias, err)
	}
	return nil
}

// convergeKind changes the kind's own settings that the kernel changes in
// place.
func (k *kernel) convergeKind(l netlink.Link, obs, want *items.Interface) error {
	if obs.Kind != want.Kind {
		return nil
	}
	switch want.Kind {
	case items.KindBond:
		return k.convergeBond(l, valueOr(obs.Bond), valueOr(want.Bond))
	case items.KindBridge:
		return k.convergeBridge(l, valueOr(obs.Bridge), valueOr(want.Bridge))
	case items.KindMacvlan:
		return k.convergeMacvlan(l, valueOr(obs.Macvlan), valueOr(want.Macvlan))
	case items.KindVxlan:
		return k.convergeVxlan(l, valueOr(obs.Vxlan), valueOr(want.Vxlan))
	}
	return nil
}

func (k *kernel) convergeBond(l netlink.Link, obs, want items.BondAttrs) error {
	var attrs []attr
	if want.Miimon != 0 && want.Miimon != obs.Miimon {
		attrs = append(attrs, u32Attr(nl.IFLA_BOND_MIIMON, uint32(want.Miimon)))
	}
	if want.LacpRate != "" && want.LacpRate != obs.LacpRate {
		rate := netlink.StringToBondLacpRate(want.LacpRate)
		attrs = append(attrs, u8Attr(nl.IFLA_BOND_AD_LACP_RATE, uint8(rate)))
	}
	if want.XmitHashPolicy != "" && want.XmitHashPolicy != obs.XmitHashPolicy {
		policy := netlink.StringToBondXmitHashPolicy(want.XmitHashPolicy)
		attrs = append(attrs, u8Attr(nl.IFLA_BOND_XMIT_HASH_POLICY, uint8(policy)))
	}
	if want.MinLinks != 0 && want.MinLinks != obs.MinLinks {
		attrs = append(attrs, u32Attr(nl.IFLA_BOND_MIN_LINKS, uint32(want.MinLinks)))
	}
	if want.Primary != "" && want.Primary != obs.Primary {
		primary, err := k.index(want.Primary, "bond primary")
		if err != nil {
			return err
		}
		attrs = append(attrs, u32Attr(nl.IFLA_BOND_PRIMARY, uint32(primary)))
	}
	if len(attrs) == 0 {
		return nil
	}
	err := k.whileDown(l, func() error { return k.raw.setInfoData(l.Attrs().Index, "bond", attrs) })
	if err != nil {
		return fmt.Errorf("setting bond options: %w", err)
	}
	return nil
}

func (k *kernel) convergeBridge(l netlink.Link, obs, want items.BridgeAttrs) error {
	var attrs []attr
	if want.ForwardDelay != 0 && want.ForwardDelay != obs.ForwardDelay {
		attrs = append(attrs, u32Attr(nl.IFLA_BR_FORWARD_DELAY, uint32(want.ForwardDelay/centisecond)))
	}
	if want.STP != obs.STP {
		attrs = append(attrs, u32Attr(nl.IFLA_BR_STP_STATE, boolU32(want.STP)))
	}
	if want.VLANFiltering != obs.VLANFiltering {
		attrs = append(attrs, u8Attr(nl.IFLA_BR_VLAN_FILTERING, uint8(boolU32(want.VLANFiltering))))
	}
	if len(attrs) == 0 {
		return nil
	}
	if err := k.raw.setInfoData(l.Attrs().Index, "bridge", attrs); err != nil {
		return fmt.Errorf("setting bridge options: %w", err)
	}
	return nil
}

func (k *kernel) convergeMacvlan(l netlink.Link, obs, want items.MacvlanAttrs) error {
	if macvlanMode(want.Mode) == macvlanMode(obs.Mode) {
		return nil
	}
	if err := k.nl.LinkSetMacvlanMode(l, macvlanMode(want.Mode)); err != nil {
		return fmt.Errorf("setting macvlan mode %s: %w", want.Mode, err)
	}
	return nil
}

// convergeVxlan changes what vxlan_changelink accepts: the local address,
// the unicast remote (within the tunnel's family) and learning.
func (k *kernel) convergeVxlan(l netlink.Link, obs, want items.VxlanAttrs) error {
	v6 := tunnelIs6(want) || tunnelIs6(obs)
	var attrs []attr
	if want.Local != obs.Local {
		attrs = append(attrs, addrAttr(nl.IFLA_VXLAN_LOCAL, nl.IFLA_VXLAN_LOCAL6, want.Local, v6))
	}
	if !want.Group.IsValid() && want.Remote != obs.Remote {
		attrs = append(attrs, addrAttr(nl.IFLA_VXLAN_GROUP, nl.IFLA_VXLAN_GROUP6, want.Remote, v6))
	}
	if want.Learning != obs.Learning {
		attrs = append(attrs, u8Attr(nl.IFLA_VXLAN_LEARNING, uint8(boolU32(want.Learning))))
	}
	if len(attrs) == 0 {
		return nil
	}
	if err := k.raw.setInfoData(l.Attrs().Index, "vxlan", attrs); err != nil {
		return fmt.Errorf("setting vxlan options: %w", err)
	}
	return nil
}

func tunnelIs6(v items.VxlanAttrs) bool {
	for _, a := range []netip.Addr{v.Local, v.Remote, v.Group} {
		if a.IsValid() {
			return a.Is6()
		}
	}
	return false
}

// addrAttr is an address attribute of the tunnel's family; the zero Addr
// is sent as the unspecified address, which clears it.
func addrAttr(typ4, typ6 int, a netip.Addr, v6 bool) attr {
	switch {
	case v6 && !a.IsValid():
		a = netip.IPv6Unspecified()
	case !a.IsValid():
		a = netip.IPv4Unspecified()
	}
	if a.Is6() {
		return attr{typ6, a.AsSlice()}
	}
	return attr{typ4, a.AsSlice()}
}

func boolU32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
