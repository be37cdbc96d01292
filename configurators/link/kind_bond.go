package link

import (
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
)

// bondKind creates bonds: the mode at creation, the other options in place
// (with the bond set down for a moment, as some kernels need).
type bondKind struct{ plainKind }

// liveMAC: a bond takes a new MAC while up (bond_set_mac_address).
func (bondKind) liveMAC() {}

func (bondKind) newLink(_ *kernel, attrs netlink.LinkAttrs, want *items.Interface) (netlink.Link, func(), error) {
	bond := netlink.NewLinkBond(attrs)
	bond.Mode = netlink.StringToBondMode(items.AttrsOf[*items.BondAttrs](want).EffectiveMode())
	return bond, noRelease, nil
}

func (bondKind) converge(k *kernel, l netlink.Link, obsIfc, wantIfc *items.Interface) error {
	obs := valueOr(items.AttrsOf[*items.BondAttrs](obsIfc))
	want := valueOr(items.AttrsOf[*items.BondAttrs](wantIfc))
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

// disruption: converge sets the bond down for its options only when the
// kernel answers EBUSY (whileDown): lacp_rate and ad_select carried
// BOND_OPTFLAG_IFDOWN until Linux 5.x; miimon, xmit_hash_policy,
// min_links and primary change while up.
func (bondKind) disruption(obsIfc, wantIfc *items.Interface) disrupt.Prediction {
	obs := valueOr(items.AttrsOf[*items.BondAttrs](obsIfc))
	want := valueOr(items.AttrsOf[*items.BondAttrs](wantIfc))
	if want.LacpRate != "" && want.LacpRate != obs.LacpRate && obsIfc.AdminUp {
		return disrupt.Maybe(disrupt.Flap, "lacp_rate "+want.LacpRate+": older kernels refuse it while the bond is up, and the bond is set down for the change", wantIfc.IfName)
	}
	return disrupt.In("bond options changed in place")
}

func (bondKind) observe(_ *kernel, l netlink.Link, nameOf func(int) string) (items.KindAttrs, error) {
	b, ok := l.(*netlink.Bond)
	if !ok {
		return nil, nil
	}
	attrs := &items.BondAttrs{Mode: b.Mode.String(), Miimon: max(b.Miimon, 0),
		MinLinks: max(b.MinLinks, 0)}
	if b.LacpRate >= 0 && b.LacpRate < netlink.BOND_LACP_RATE_UNKNOWN {
		attrs.LacpRate = b.LacpRate.String()
	}
	if b.XmitHashPolicy >= 0 && b.XmitHashPolicy < netlink.BOND_XMIT_HASH_POLICY_UNKNOWN {
		attrs.XmitHashPolicy = b.XmitHashPolicy.String()
	}
	if b.Primary > 0 {
		attrs.Primary = nameOf(b.Primary)
	}
	return attrs, nil
}

// mask: the mode "" is balance-rr; Miimon 0, LacpRate "", XmitHashPolicy
// "", MinLinks 0 and Primary "" leave the kernel's value; an all-default
// bond masks to nil when want has no attributes.
func (bondKind) mask(obs, wantAttrs items.KindAttrs) items.KindAttrs {
	want := attrsAs[items.BondAttrs](wantAttrs)
	w := valueOr(want)
	b := valueOr(attrsAs[items.BondAttrs](obs))
	if w.Mode == "" && b.Mode == items.BondDefaultMode {
		b.Mode = ""
	}
	if w.Miimon == 0 {
		b.Miimon = 0
	}
	if w.LacpRate == "" {
		b.LacpRate = ""
	}
	if w.XmitHashPolicy == "" {
		b.XmitHashPolicy = ""
	}
	if w.MinLinks == 0 {
		b.MinLinks = 0
	}
	if w.Primary == "" {
		b.Primary = ""
	}
	if want == nil && b == (items.BondAttrs{}) {
		return nil
	}
	return &b
}
