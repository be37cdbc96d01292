package link

import (
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/netagent/netagent/items"
)

// centisecond is the kernel's unit of bridge timers (USER_HZ).
const centisecond = 10 * time.Millisecond

// bridgeKind creates bridges; every setting changes in place.
type bridgeKind struct{ plainKind }

// liveMAC: a bridge takes a new MAC while up (br_set_mac_address).
func (bridgeKind) liveMAC() {}

func (bridgeKind) newLink(_ *kernel, attrs netlink.LinkAttrs, _ *items.Interface) (netlink.Link, func(), error) {
	return &netlink.Bridge{LinkAttrs: attrs}, noRelease, nil
}

func (bridgeKind) converge(k *kernel, l netlink.Link, obsIfc, wantIfc *items.Interface) error {
	obs := valueOr(items.AttrsOf[*items.BridgeAttrs](obsIfc))
	want := valueOr(items.AttrsOf[*items.BridgeAttrs](wantIfc))
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

// observe reads the bridge options through raw rtnetlink (netlink.Bridge
// lacks some).
func (bridgeKind) observe(k *kernel, l netlink.Link, _ func(int) string) (items.KindAttrs, error) {
	if _, ok := l.(*netlink.Bridge); !ok {
		return nil, nil
	}
	info, err := k.raw.linkInfo(l.Attrs().Index)
	if err != nil {
		return nil, err
	}
	stp, _ := info.dataU32(nl.IFLA_BR_STP_STATE)
	filtering, _ := info.dataU8(nl.IFLA_BR_VLAN_FILTERING)
	delay, _ := info.dataU32(nl.IFLA_BR_FORWARD_DELAY)
	return &items.BridgeAttrs{STP: stp != 0, VLANFiltering: filtering != 0,
		ForwardDelay: time.Duration(delay) * centisecond}, nil
}

// mask: ForwardDelay 0 leaves the kernel's; an all-default bridge masks to
// nil when want has no attributes.
func (bridgeKind) mask(obs, wantAttrs items.KindAttrs) items.KindAttrs {
	want := attrsAs[items.BridgeAttrs](wantAttrs)
	b := valueOr(attrsAs[items.BridgeAttrs](obs))
	if valueOr(want).ForwardDelay == 0 {
		b.ForwardDelay = 0
	}
	if want == nil && b == (items.BridgeAttrs{}) {
		return nil
	}
	return &b
}
