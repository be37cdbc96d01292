package ethtool

import (
	"errors"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// importedGroups are the groups ReadCurrent takes, besides the features:
// those whose every field the intent's ethtool section has. The link
// mode (speed, duplex, autoneg, advertised modes) is left out: the speed
// and duplex are what autonegotiation agreed with the far end, and an
// intent that pins them forces them on the next boot. Wake-on-LAN is
// left out too: it is a setting of the machine's power management that
// drivers and firmware set by themselves (many NICs come up with magic
// packets armed).
var importedGroups = []string{"channels", "rings", "coalesce", "pause"}

// ReadCurrent returns, for import kernel --ethtool, an Ethtool item per
// link of names whose driver reports settings: the current value of
// every setting the intent's ethtool section can express (see
// importedGroups) that the driver lets be changed: each feature it lists
// as changeable and the kernel does not report fixed, the channel counts
// and ring sizes it reports a maximum above 0 for, every coalescing
// setting it reports, and pause autonegotiation, with pause rx and tx when
// that is off (when it is on they are what the link negotiated). These are current values, not the
// settings someone changed: the kernel records neither what a user set
// nor the driver's defaults. An intent holding them writes nothing on
// this host (the values are there), and on a fresh boot sets each NIC as
// it is now. A link gone meanwhile is left out.
func ReadCurrent(t *netnsx.Target, names []string) ([]dg.Item, error) {
	k := &lazyKernel{t: t}
	defer k.Close()
	return readCurrent(k, names)
}

// ReadCurrent is ReadCurrent over the fake.
func (f *FakeKernel) ReadCurrent(names []string) ([]dg.Item, error) { return readCurrent(f, names) }

func readCurrent(k Kernel, names []string) ([]dg.Item, error) {
	var out []dg.Item
	for _, name := range names {
		idx, err := k.Index(name)
		if errors.Is(err, ErrNoLink) {
			continue
		} else if err != nil {
			return nil, err
		}
		s, err := currentSettings(k, idx)
		if err != nil {
			return nil, fmt.Errorf("reading the ethtool settings of %s: %w", name, err)
		}
		if len(s) > 0 {
			out = append(out, &items.Ethtool{Interface: name, Settings: s})
		}
	}
	return out, nil
}

// currentSettings are ReadCurrent's settings of the link ifindex.
func currentSettings(k Kernel, ifindex int) (map[string]uint32, error) {
	s := map[string]uint32{}
	f, err := k.Features(ifindex)
	if err != nil && !errors.Is(err, ErrNotSupported) {
		return nil, err
	}
	for name := range f.HW {
		if f.Changeable(name) {
			s[items.EthtoolKey(featuresGroup, name)] = b2u(f.Active[name])
		}
	}
	for _, g := range importedGroups {
		v, err := k.Get(g, ifindex)
		if errors.Is(err, ErrNotSupported) {
			continue
		} else if err != nil {
			return nil, err
		}
		for field, cur := range v.Cur {
			if fd, ok := Groups[g].Field(field); ok && (fd.Max == 0 || v.Max[field] > 0) && !negotiated(g, field, v) {
				s[items.EthtoolKey(g, field)] = cur
			}
		}
	}
	return s, nil
}

// negotiated reports whether the group's field, as v reports it, is what
// the NIC agreed with the far end rather than a setting: pause rx and tx
// while pause autonegotiation is on (drivers report the resolved flow
// control; written back, they would change what the NIC offers).
func negotiated(group, field string, v Values) bool {
	return group == "pause" && field != "autoneg" && v.Cur["autoneg"] != 0
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
