package ethtool

import (
	"fmt"
	"maps"
	"slices"

	"github.com/netagent/netagent/internal/netnsx"
)

// dumpedGroups are the groups Dump reads: the codec's, "link" and
// "wake-on-lan".
var dumpedGroups = append(slices.Sorted(maps.Keys(Groups)), "link", "wake-on-lan")

// Dump reads the ethtool side of the links (name → ifindex) of t's
// namespace as the fake's NICs: their features, changeable and fixed,
// and the groups each driver answers (one it does not is left out, as
// the fake then answers EOPNOTSUPP). Which Wake-on-LAN modes a NIC
// supports is not read (none). It writes nothing.
func Dump(t *netnsx.Target, links map[string]int) (map[string]*FakeNIC, error) {
	k, err := openKernel(t)
	if err != nil {
		return nil, fmt.Errorf("ethtool: %w", err)
	}
	defer k.Close()
	out := map[string]*FakeNIC{}
	for name, index := range links {
		feats, err := k.Features(index)
		if err != nil {
			continue // no ethtool answer at all: the fake has no such NIC either
		}
		n := &FakeNIC{Index: index, Features: feats, Groups: map[string]Values{}}
		for _, g := range dumpedGroups {
			if v, err := k.Get(g, index); err == nil {
				n.Groups[g] = v
			}
		}
		out[name] = n
	}
	return out, nil
}

// Load plants nics (Dump's) in the fake, in place of what it holds.
func (f *FakeKernel) Load(nics map[string]*FakeNIC) {
	f.NICs = maps.Clone(nics)
}
