package link

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/killpoint"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Names swapped between NICs. NICs that enumerate differently between boots
// come up with each other's names: the intent's eth0 is the NIC the kernel
// now calls eth1, and its eth1 the one called eth0 (or a rotation of
// three). A NIC holding the name a matched interface is to get is then
// moved out of the way to its temporary name (tempName) when another
// interface of the intent matches it: that interface's own operation
// gives it its name. A holder no interface of the intent matches is
// ErrNameTaken (nicFor). Giving names back works the same way: a NIC
// holding the name another is given back, which netagent renamed and which
// leaves the intent too, is moved aside and given back its own name and
// settings at once (restoreName).
//
// The original name recorded is the NIC's name before netagent first
// renamed it, never a temporary one (renameRecord), also when the apply is
// killed between the renames: the record moves with the NIC, written
// before each rename, and a NIC at its temporary name that an interface of
// the intent matches is not read back as an interface of its own (so
// that it is not given back; readInterface), but found by that
// interface's match.

// tempPrefix starts the temporary names.
const tempPrefix = "natmp"

// tempName is the name a NIC of ifindex index goes by while it is out of
// another's way: at most 15 characters (IFNAMSIZ), and no other link's
// while its ifindex is the NIC's.
func tempName(index int) string { return tempPrefix + strconv.Itoa(index) }

// isTempName reports whether name is one tempName gives.
func isTempName(name string) bool {
	digits, ok := strings.CutPrefix(name, tempPrefix)
	if !ok || digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// withIntent is a copy of k that knows what the reconcile of ctx intends
// (k itself when ctx knows nothing).
func (k *kernel) withIntent(ctx context.Context) *kernel {
	g, ok := reconciler.Intended(ctx)
	if !ok {
		return k
	}
	kk := *k
	kk.intent, kk.intentKnown = g, true
	return &kk
}

// claimant is the physical interface of the intent, other than want,
// whose match finds l and only l: the interface l is to become, so that
// it may be moved out of want's way. nil when the intent is not known or
// no such interface is in it.
func (k *kernel) claimant(l netlink.Link, want *items.Interface) *items.Interface {
	if k.intent == nil {
		return nil
	}
	for it := range k.intent.Unordered() {
		x, ok := it.(*items.Interface)
		if !ok || x.Kind != items.KindPhysical || x.Match == nil || x.IfName == want.IfName {
			continue
		}
		if found, err := k.findNIC(x); err == nil && found.Attrs().Index == l.Attrs().Index {
			return x
		}
	}
	return nil
}

// kept reports whether the intent declares an interface of l's name: l
// (a NIC netagent renamed) stays, and keeps its name. Not knowing the
// intent, it does.
func (k *kernel) kept(l netlink.Link) bool {
	if !k.intentKnown {
		return true
	}
	if k.intent == nil {
		return false
	}
	_, ok := k.intent.Get(items.InterfaceRef(l.Attrs().Name))
	return ok
}

// moveAside renames l to its temporary name, its record first, leaving
// it down (its admin state: up reports whether it was up).
func (k *kernel) moveAside(l netlink.Link) (up bool, err error) {
	tmp := tempName(l.Attrs().Index)
	if err := k.st.moveRecord(l, tmp); err != nil {
		return false, err
	}
	up, err = k.downForRename(l, "move it out of the way ("+tmp+")")
	if err != nil {
		return false, err
	}
	if err := k.nl.LinkSetName(l, tmp); err != nil {
		return up, fmt.Errorf("moving %s out of the way (renaming it %s): %w", l.Attrs().Name, tmp, err)
	}
	killpoint.Pass() // out of the way, before the NIC that takes its name is renamed
	return up, nil
}

// clearName moves holder (the link of the name nicFor found in the way,
// nil: none) out of the way, and sets it up again if it was (its own
// interface renames it).
func (k *kernel) clearName(holder netlink.Link) error {
	if holder == nil {
		return nil
	}
	up, err := k.moveAside(holder)
	if up {
		if uerr := k.nl.LinkSetUp(holder); err == nil && uerr != nil {
			err = fmt.Errorf("setting %s up again: %w", tempName(holder.Attrs().Index), uerr)
		}
	}
	return err
}

// claimedInTransit reports whether l, at its temporary name, is a NIC
// that an interface of hint matches: that interface's operation renames
// it, so it is not an interface of its own (not given back).
func (k *kernel) claimedInTransit(l netlink.Link, st nsState, hint *dg.Graph) bool {
	if hint == nil || !isTempName(l.Attrs().Name) {
		return false
	}
	for it := range hint.Unordered() {
		x, ok := it.(*items.Interface)
		if ok && x.Kind == items.KindPhysical && x.Match != nil && x.Match.Matches(k.nicFacts(l, st, x.Match)) {
			return true
		}
	}
	return false
}

// GiveBackRenamed gives the NICs of t now called one of names back the
// name and settings netagent recorded for them, as when their interfaces
// leave the intent (restorePhysical): a NIC holding a name given back is
// given back its own in turn, through its temporary name (names swapped),
// unless keep (what stays intended) declares an interface of its name.
// NICs left at a temporary name (an apply or a revert killed half-way)
// that no interface of keep matches are given back too. It is for a
// revert whose before-image names an interface by name that the trial
// found by a match and renamed: the image is of the NIC that had the name
// before, not of the one that has it now.
// It returns the names of the NICs it gave back, as they were called.
func GiveBackRenamed(t *netnsx.Target, stateDir string, keep *dg.Graph, names []string) ([]string, error) {
	k, err := newKernel(t, stateDir)
	if err != nil {
		return nil, err
	}
	return k.giveBackRenamed(keep, names)
}

func (k *kernel) giveBackRenamed(keep *dg.Graph, names []string) ([]string, error) {
	kk := *k
	kk.intent, kk.intentKnown = keep, true
	k = &kk
	inTransit, err := k.inTransit(keep)
	if err != nil {
		return nil, err
	}
	all := append(slices.Clone(names), inTransit...)
	for _, name := range all {
		if err := k.restorePhysical(name); err != nil {
			return nil, fmt.Errorf("giving back the name of %s: %w", name, err)
		}
	}
	return all, nil
}

// inTransit lists the links at a temporary name with a record that no
// matched interface of keep finds.
func (k *kernel) inTransit(keep *dg.Graph) ([]string, error) {
	links, err := k.listLinks()
	if err != nil {
		return nil, err
	}
	st, err := k.st.snapshot()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range links {
		if isTempName(l.Attrs().Name) && st.originalOf(l) != nil && !k.claimedInTransit(l, st, keep) {
			out = append(out, l.Attrs().Name)
		}
	}
	return out, nil
}
