package configurators

import (
	"fmt"
	"maps"

	"github.com/netagent/netagent/configurators/ethtool"
	"github.com/netagent/netagent/configurators/firewall"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/configurators/nftables"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Clashes returns, for every item of intended whose place in the kernel
// an object netagent does not own already holds (a foreign link of the
// item's name, an address, route, rule or neighbour of another protocol
// with the item's identity, an unmarked chain of the item's name), the
// error its create would fail with. Each package decides this next to its
// read-back, as its configurator does (see link.Clashes, l3.Clashes,
// firewall.Clashes, nftables.Clashes); a dry run uses it to predict those failures.
func Clashes(t *netnsx.Target, stateDir string, intended *dg.Graph) (map[dg.ItemRef]error, error) {
	return findClashes([]clashFinder{
		{"links", func() (map[dg.ItemRef]error, error) { return link.Clashes(t, stateDir, intended) }},
		{"l3", func() (map[dg.ItemRef]error, error) { return l3.Clashes(t, stateDir, intended) }},
		{"firewall", func() (map[dg.ItemRef]error, error) { return firewall.Clashes(t, stateDir, intended) }},
		{"nftables", func() (map[dg.ItemRef]error, error) { return nftables.Clashes(t, stateDir, intended) }},
	})
}

// Adoptions returns, for every item of intended whose place in the
// kernel an object netagent does not own holds and that a create with
// Options.Adopt takes over (see link.Adoptions, l3.Adoptions; and the
// sysctls whose value someone else chose: firewall.SysctlAdoptions), that
// object as an item of the same name: Equal to the intended item when
// the adoption writes only netagent's mark, else what the adoption
// changes. A dry run with adopt takes these out of Clashes and shows
// them as adoptions.
func Adoptions(t *netnsx.Target, stateDir string, intended *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	return findAdoptions(
		func() (map[dg.ItemRef]dg.Item, error) { return link.Adoptions(t, stateDir, intended) },
		func() (map[dg.ItemRef]dg.Item, error) { return l3.Adoptions(t, stateDir, intended) },
		func() (map[dg.ItemRef]dg.Item, error) { return firewall.SysctlAdoptions(t, stateDir, intended) })
}

// findAdoptions runs the finders (links first: a port's adoption follows
// its master's) and merges what they find.
func findAdoptions(finders ...func() (map[dg.ItemRef]dg.Item, error)) (map[dg.ItemRef]dg.Item, error) {
	all := make(map[dg.ItemRef]dg.Item)
	for _, f := range finders {
		got, err := f()
		if err != nil {
			return nil, fmt.Errorf("looking for objects to adopt: %w", err)
		}
		maps.Copy(all, got)
	}
	return all, nil
}

// clashFinder is one package's Clashes.
type clashFinder struct {
	what string
	find func() (map[dg.ItemRef]error, error)
}

// findClashes runs the finders and merges what they find.
func findClashes(finders []clashFinder) (map[dg.ItemRef]error, error) {
	all := make(map[dg.ItemRef]error)
	for _, f := range finders {
		got, err := f.find()
		if err != nil {
			return nil, fmt.Errorf("looking for clashes with %s: %w", f.what, err)
		}
		maps.Copy(all, got)
	}
	return all, nil
}

// DryRun follows a dry run operation by operation, in the order the
// reconciler runs them, as the kernel would see them: it predicts the
// deletes the configurators refuse because the kernel would take someone
// else's objects with them (an address whose removal deletes someone's
// secondary address or flushes someone's routes: see l3.Refusals), and
// knows what the operations leave behind for SideEffects. It predicts
// the ethtool settings the kernel refuses (a fixed feature, a value above
// the NIC's maximum: ethtool.Check) too.
type DryRun struct {
	addrs   *l3.Refusals
	ethtool func(dg.Item) error
}

// NewDryRun reads what DryRun needs of the namespace.
func NewDryRun(t *netnsx.Target, stateDir string) (*DryRun, error) {
	r, err := l3.NewRefusals(t, stateDir)
	if err != nil {
		return nil, fmt.Errorf("reading the addresses and routes: %w", err)
	}
	return &DryRun{addrs: r, ethtool: func(it dg.Item) error { return ethtool.Check(t, "", it) }}, nil
}

// Predict returns the error the operation fails with, or nil. It must see
// every operation that would run, and none that would fail.
func (d *DryRun) Predict(op reconciler.Operation, it dg.Item) error {
	if it.Type() == items.TypeEthtool && (op == reconciler.OpCreate || op == reconciler.OpModify) {
		return d.ethtool(it)
	}
	return d.addrs.Predict(op, it)
}

// lastIPv4Gone reports whether the delete of the address ref left its
// interface without an IPv4 address (false for a nil d).
func (d *DryRun) lastIPv4Gone(ref dg.ItemRef) bool { return d != nil && d.addrs.Emptied(ref) }
