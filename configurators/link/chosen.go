package link

import (
	"fmt"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// KernelChosen returns the items ifs of netagent's virtual interfaces
// (read back with a hint that left settings to the kernel) with the MAC
// and the MTU the kernel holds now wherever an item leaves them unset:
// what the kernel chose (a random MAC at the create, an MTU from the
// parent or from a bridge's ports), which a before-image needs so that a
// recreate, or a bridge whose port was recreated, gets back the same
// values rather than new ones. An item whose link is gone, a physical
// one (its settings come back from the recorded originals, see
// physical.go), and the MAC of a kind that has its parent's (parentMAC)
// are left as they are. The returned items are copies; ifs is not
// changed.
func KernelChosen(t *netnsx.Target, ifs []*items.Interface) ([]*items.Interface, error) {
	k := &kernel{nl: t.NL}
	out := make([]*items.Interface, len(ifs))
	for i, it := range ifs {
		out[i] = it
		if it.Kind == items.KindPhysical || (it.MTU != 0 && it.MAC != nil) {
			continue
		}
		l, err := k.lookup(it.IfName)
		if err != nil {
			return nil, fmt.Errorf("reading what the kernel chose for %s: %w", it.IfName, err)
		}
		if l == nil || kindOf(l) != it.Kind {
			continue
		}
		c := *it
		if c.MTU == 0 {
			c.MTU = l.Attrs().MTU
		}
		if _, borrowed := linkKinds[it.Kind].(parentMAC); c.MAC == nil && !borrowed {
			c.MAC = cloneMAC(l.Attrs().HardwareAddr)
		}
		out[i] = &c
	}
	return out, nil
}
