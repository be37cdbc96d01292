package link

import (
	"github.com/netagent/netagent/items"
)

// mask returns obs (the kernel's full values) with every field that want
// leaves "unset / leave as is" set the same way, so that Equal between the
// result and want reports only real differences. The unset values are:
// MTU 0, MAC nil, a physical interface's Alias "", a bond's Miimon 0,
// LacpRate "", XmitHashPolicy "", MinLinks 0 and Primary "", a bridge's
// ForwardDelay 0 and a port's Cost 0 and Priority nil. Defaults that
// name a value are spelled the way want spells them: bond Mode "" for
// balance-rr, VLAN Protocol "" for 802.1q, macvlan Mode "" for vepa, VXLAN
// Port 0 for 8472, and nil bond or bridge attributes for all-default ones.
// The kind's part is its linkKind's mask.
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
	if kind, ok := linkKinds[out.Kind]; ok && out.Attrs != nil {
		out.Attrs = kind.mask(out.Attrs, want.Attrs)
	}
	return &out
}

// maskPort zeroes the observed cost and priority when want leaves them to
// the kernel.
func maskPort(obs, want *items.Port) *items.Port {
	p := *obs
	if want != nil && want.Cost == 0 {
		p.Cost = 0
	}
	if want != nil && want.Priority == nil {
		p.Priority = nil
	}
	return &p
}
