package firewall

import (
	"errors"
	"fmt"
	"slices"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// SysctlAdoptions returns, for every sysctl of hint (the intended graph)
// that netagent does not own yet (no original saved) and whose parameter
// the namespace has, the parameter as it is now, as an item of the same
// key (the hint's Deps; the hint's spelling of an equal value): a create
// with Options.Adopt takes it over. Equal to the item, the adoption
// writes no value, only the original in <stateDir>/sysctl.json (a
// sysctl's mark); otherwise it writes the intended value, and the
// removal of the item writes the found one back, as for any sysctl
// netagent set. A parameter that is missing (its interface is not made
// yet) is a plain create. A sysctl carries no mark in the kernel, so its
// create is the same with and without adopt: this only says which
// creates take over a value someone else chose.
func SysctlAdoptions(t *netnsx.Target, stateDir string, hint *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	if hint == nil {
		return nil, nil
	}
	c, err := newSysctlConfigurator(t, stateDir)
	if err != nil {
		return nil, err
	}
	return c.adoptions(hint)
}

// SysctlAdoptions is SysctlAdoptions over the fake.
func (f *Fake) SysctlAdoptions(stateDir string, hint *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	if hint == nil {
		return nil, nil
	}
	_, c, err := f.configurators(stateDir)
	if err != nil {
		return nil, err
	}
	return c.adoptions(hint)
}

// adoptions is SysctlAdoptions over the configurator's file system and
// store.
func (c *sysctlConfigurator) adoptions(hint *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	orig, err := c.store.originals()
	if err != nil {
		return nil, fmt.Errorf("sysctl adoptions: %w", err)
	}
	out := make(map[dg.ItemRef]dg.Item)
	for it := range hint.Items() {
		s, ok := it.(*items.Sysctl)
		if !ok || ownedUnderAnyName(orig, s.Key) {
			continue
		}
		found, err := readBackSysctl(c.fs, s.Key, hint)
		switch {
		case errors.Is(err, ErrBadKey):
			continue // the create fails on it, as without adopt
		case err != nil:
			return nil, fmt.Errorf("sysctl adoptions: reading %s: %w", s.Key, err)
		case found != nil:
			out[dg.Ref(it)] = found
		}
	}
	return out, nil
}

// ownedUnderAnyName reports whether netagent owns key, or the other name
// of its kernel value (items.Sysctl.ConflictKeys: net.ipv4.ip_forward and
// net.ipv4.conf.all.forwarding): moving from one name to the other
// restores the original first, and is no adoption.
func ownedUnderAnyName(orig map[string]string, key string) bool {
	if _, ok := orig[key]; ok {
		return true
	}
	names := (&items.Sysctl{Key: key}).ConflictKeys()
	for other := range orig {
		if len(names) > 0 && slices.Equal(names, (&items.Sysctl{Key: other}).ConflictKeys()) {
			return true
		}
	}
	return false
}
