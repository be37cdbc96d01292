package link

import (
	"github.com/netagent/netagent/items"
)

// mask returns obs (the kernel's full values) with every field that want
// leaves "unset / leave as is" set the same way, so that Equal between the
// result and want reports only real differences. The unset values are:
// MTU 0, MAC nil, a physical interface's Alias "", a bond's Miimon 0,
// LacpRate "", XmitHashPolicy "", MinLinks 0 and Primary "", a bridge's
// ForwardDelay 0 and a port's Cost 0. Defaults that name a value are
// spelled the way want spells them: bond Mode "" for balance-rr, VLAN
// Protocol "" for 802.1q, macvlan Mode "" for vepa, VXLAN Port 0 for 8472,
// and nil bond or bridge attributes for all-default ones.
func mask(obs, want *items.Interface) *items.Interface {
	if want == nil {
		return obs
	}
	out := *obs
	if want.MTU == 0 {
		out.MTU = 0
	}
	if want.MAC == nil {
		out.MAC = nil
	}
	if out.Kind == items.KindPhysical && want.Alias == "" {
		out.Alias = ""
	}
	if out.Kind != want.Kind {
		return &out
	}
	switch out.Kind {
	case items.KindBond:
		out.Bond = maskBond(obs.Bond, want.Bond)
	case items.KindBridge:
		out.Bridge = maskBridge(obs.Bridge, want.Bridge)
	case items.KindVLAN:
		out.VLAN = maskVLAN(obs.VLAN, want.VLAN)
	case items.KindMacvlan:
		out.Macvlan = maskMacvlan(obs.Macvlan, want.Macvlan)
	case items.KindVxlan:
		out.Vxlan = maskVxlan(obs.Vxlan, want.Vxlan)
	}
	return &out
}

func maskBond(obs, want *items.BondAttrs) *items.BondAttrs {
	if obs == nil {
		return nil
	}
	w := valueOr(want)
	b := *obs
	if w.Mode == "" && b.Mode == "balance-rr" {
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

func maskBridge(obs, want *items.BridgeAttrs) *items.BridgeAttrs {
	if obs == nil {
		return nil
	}
	b := *obs
	if valueOr(want).ForwardDelay == 0 {
		b.ForwardDelay = 0
	}
	if want == nil && b == (items.BridgeAttrs{}) {
		return nil
	}
	return &b
}

func maskVLAN(obs, want *items.VLANAttrs) *items.VLANAttrs {
	if obs == nil {
		return nil
	}
	v := *obs
	if valueOr(want).Protocol == "" && v.Protocol == "802.1q" {
		v.Protocol = ""
	}
	return &v
}

func maskMacvlan(obs, want *items.MacvlanAttrs) *items.MacvlanAttrs {
	if obs == nil {
		return nil
	}
	m := *obs
	if valueOr(want).Mode == "" && m.Mode == "vepa" {
		m.Mode = ""
	}
	return &m
}

func maskVxlan(obs, want *items.VxlanAttrs) *items.VxlanAttrs {
	if obs == nil {
		return nil
	}
	v := *obs
	if valueOr(want).Port == 0 && v.Port == vxlanDefaultPort {
		v.Port = 0
	}
	return &v
}

// maskPort zeroes the observed cost when want leaves it to the kernel.
func maskPort(obs, want *items.Port) *items.Port {
	p := *obs
	if want != nil && want.Cost == 0 {
		p.Cost = 0
	}
	return &p
}

// vxlanDefaultPort is the kernel's VXLAN port when none is given.
const vxlanDefaultPort = 8472

func valueOr[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
