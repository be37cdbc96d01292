package link

import (
	"bytes"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// convergePhysical gives a physical link (a NIC: netagent never owns,
// creates or deletes it) the settings of want. Before it first changes a
// setting it records the value it found (before the write), so
// that the setting can be given back when the NIC leaves the intent
// (restorePhysical); a setting it changed earlier that want now leaves
// unset is given back at once, and its original forgotten. The first
// recorded value stays the original: a later change, or a restart, never
// records netagent's own value as the original. The alias is the intent's
// own and may never carry netagent's mark (ErrReservedAlias).
func (k *kernel) convergePhysical(l netlink.Link, want *items.Interface) error {
	if ownedAlias(want.Alias) {
		return fmt.Errorf("physical interface %s: alias %q: %w", want.IfName, want.Alias, ErrReservedAlias)
	}
	if _, err := k.recordOf(l); err != nil {
		return err
	}
	st, err := k.st.snapshot()
	if err != nil {
		return err
	}
	obs, err := k.observe(l, k.nameOf, false)
	if err != nil {
		return err
	}
	target := physicalTarget{want: *want}
	if want.Alias != "" {
		target.alias = new(want.Alias)
	}
	if err := st.originalOf(l).check(want.IfName); err != nil {
		return err
	}
	restoring := target.restoreUnset(st.originalOf(l))
	if owned(l) && st.originalOf(l) == nil {
		// A NIC that carries netagent's mark (written by someone else, or
		// an older netagent): recorded, so that it is never taken for a
		// link netagent owns, also once it leaves the intent.
		if err := k.st.rememberOriginals(l, nil); err != nil {
			return err
		}
	}
	if err := k.applyPhysical(l, obs, target); err != nil {
		return err
	}
	if len(restoring) == 0 {
		return nil
	}
	return k.st.forgetOriginals(want.IfName, restoring)
}

// restorePhysical gives the physical link back every setting netagent
// changed, as it was before, and forgets the originals. The link is the
// one of that name, or the NIC the record of that name is of, under
// another name (a rename killed half-way); a link that is gone, or is
// another link of that name by now, has nothing to restore.
func (k *kernel) restorePhysical(name string) error {
	l, o, err := k.restoring(name)
	if err != nil {
		return err
	}
	if o == nil {
		return k.st.forgetOriginals(name, nil) // gone, or another link of that name by now
	}
	name = l.Attrs().Name
	if err := o.check(name); err != nil {
		return err
	}
	obs, err := k.observe(l, k.nameOf, false)
	if err != nil {
		return err
	}
	if err := k.applyPhysical(l, obs, restoreTarget(name, obs.AdminUp, o)); err != nil {
		return fmt.Errorf("restoring physical interface %s: %w", name, err)
	}
	key, err := k.restoreName(l, o)
	if err != nil {
		return err
	}
	if o.Marked {
		// The NIC was found with netagent's mark (written by someone
		// else, or an older netagent): its record stays, without
		// settings, so that it is never taken for netagent's own.
		return k.st.forgetOriginals(key, allSettings)
	}
	return k.st.forgetOriginals(key, nil)
}

// restoring finds the NIC restorePhysical(name) restores and its record
// (recordOf): the link of that name, or the NIC of the record of that
// name; nil when neither has one.
func (k *kernel) restoring(name string) (netlink.Link, *original, error) {
	l, err := k.lookup(name)
	if err != nil {
		return nil, nil, err
	}
	if o, err := k.recordOf(l); err != nil || o != nil {
		return l, o, err
	}
	st, err := k.st.snapshot()
	if err != nil || st.Originals[name] == nil {
		return nil, nil, err
	}
	l, err = k.nl.LinkByIndex(st.Originals[name].Index)
	if err != nil {
		if isNotFound(err) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("reading the NIC recorded as %s: %w", name, err)
	}
	o, err := k.recordOf(l)
	return l, o, err
}

// recordOf returns the record of l (nil: l is nil, or none is), keyed by
// its name now: one found under another name (a rename killed between its
// record and the kernel's) is moved to it first.
func (k *kernel) recordOf(l netlink.Link) (*original, error) {
	if l == nil {
		return nil, nil
	}
	st, err := k.st.snapshot()
	if err != nil {
		return nil, err
	}
	key, o := st.find(l.Attrs(), l.Attrs().Name)
	if o != nil && key != l.Attrs().Name {
		if err := k.st.moveRecord(l, l.Attrs().Name); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// check reports an original (nil: none) that no intent could have given
// the NIC name (ErrBadOriginal, naming the record): the state directory is
// not trusted, and what it says goes to the kernel.
func (o *original) check(name string) error {
	if o == nil {
		return nil
	}
	bad := func(what string) error {
		return fmt.Errorf("physical interface %s: %s records %s as its original: %w", name, stateFileName, what, ErrBadOriginal)
	}
	if o.MTU != nil && (*o.MTU < 68 || *o.MTU > 65535) {
		return bad(fmt.Sprintf("mtu %d", *o.MTU))
	}
	if o.MAC != nil {
		mac, err := net.ParseMAC(*o.MAC)
		if err != nil || len(mac) != 6 || mac[0]&1 != 0 || bytes.Equal(mac, make(net.HardwareAddr, 6)) {
			return bad(fmt.Sprintf("mac %q", *o.MAC))
		}
	}
	if o.Match != nil && o.Match.item() == nil {
		return bad(fmt.Sprintf("a match with a MAC that does not parse (%+v)", *o.Match))
	}
	if p := o.Match.item().Problem(); p != "" {
		return bad(fmt.Sprintf("a match (%s)", p))
	}
	if o.Name != nil && validName(*o.Name) != nil {
		return bad(fmt.Sprintf("name %q", *o.Name))
	}
	if o.Alias != nil && (len(*o.Alias) > 255 || ownedAlias(*o.Alias) && !o.Marked) {
		return bad(fmt.Sprintf("alias %q", *o.Alias))
	}
	return nil
}

// allSettings are the settings of a physical link netagent records and
// gives back.
var allSettings = settingSet{"mtu", "up", "alias", "mac"}

// restoreTarget is what restorePhysical gives the link name back: every
// recorded original of o; the rest as it is (up: its state now).
func restoreTarget(name string, up bool, o *original) physicalTarget {
	t := physicalTarget{want: items.Interface{IfName: name, Kind: items.KindPhysical, AdminUp: up}}
	t.restore(o, allSettings)
	return t
}

// Found is what the physical links netagent changed held before it, by
// name, as the state directory records it (ReadFound): what each gets back
// when it leaves the intent.
type Found map[string]*original

// ReadFound reads the recorded originals of t's physical links from
// stateDir (an empty Found for "" or none recorded).
func ReadFound(t *netnsx.Target, stateDir string) (Found, error) {
	st, err := newStateStore(t, stateDir)
	if err != nil {
		return nil, err
	}
	return st.found()
}

// found reads the recorded originals of the store's physical links.
func (st *stateStore) found() (Found, error) {
	snap, err := st.snapshot()
	if err != nil {
		return nil, err
	}
	found := Found{}
	for name, o := range snap.Originals {
		if o != nil && !o.empty() {
			found[name] = o
		}
	}
	return found, nil
}

// Restored is obs, a physical link as the kernel holds it, as its delete
// leaves it (restorePhysical): with every setting netagent changed given
// back. False when nothing of it is recorded: the delete changes nothing.
func (f Found) Restored(obs *items.Interface) (*items.Interface, bool) {
	o := f[obs.IfName]
	if o == nil || o.empty() || o.check(obs.IfName) != nil {
		return nil, false
	}
	t := restoreTarget(obs.IfName, obs.AdminUp, o)
	want := t.want
	if t.alias != nil {
		want.Alias = *t.alias
	}
	return &want, true
}

// converged is want as convergePhysical converges it: a setting netagent
// changed that want leaves unset (MTU 0, MAC nil) is given back
// (restoreUnset). Without a record (f nil, or none for the link), want.
func (f Found) converged(want *items.Interface) *items.Interface {
	o := f[want.IfName]
	if o == nil || o.check(want.IfName) != nil {
		return want
	}
	t := physicalTarget{want: *want}
	if want.Alias != "" {
		t.alias = new(want.Alias)
	}
	t.restoreUnset(o)
	return &t.want
}

// physicalTarget is what a physical link should hold: want's settings, and
// the alias to set (nil: leave it; "" clears it).
type physicalTarget struct {
	want  items.Interface
	alias *string
}

// restoreUnset puts the recorded originals of the settings want leaves
// unset (MTU 0, MAC nil, alias "") into the target, and returns them.
func (t *physicalTarget) restoreUnset(o *original) settingSet {
	if o == nil {
		return nil
	}
	var unset settingSet
	if t.want.MTU == 0 && o.MTU != nil {
		unset = append(unset, "mtu")
	}
	if t.want.MAC == nil && o.MAC != nil {
		unset = append(unset, "mac")
	}
	if t.alias == nil && o.Alias != nil {
		unset = append(unset, "alias")
	}
	if t.want.Match == nil && o.Match != nil {
		unset = append(unset, "match") // found by its name now
	}
	t.restore(o, unset)
	return unset
}

// restore puts the recorded originals of fields into the target.
func (t *physicalTarget) restore(o *original, fields settingSet) {
	if fields.has("mtu") && o.MTU != nil {
		t.want.MTU = *o.MTU
	}
	if fields.has("up") && o.Up != nil {
		t.want.AdminUp = *o.Up
	}
	if fields.has("alias") && o.Alias != nil {
		t.alias = new(*o.Alias)
	}
	if fields.has("mac") && o.MAC != nil {
		if mac, err := net.ParseMAC(*o.MAC); err == nil {
			t.want.MAC = mac
		}
	}
}

// changes lists the settings of obs that the target changes.
func (t *physicalTarget) changes(obs *items.Interface) settingSet {
	var out settingSet
	if t.want.MTU != 0 && t.want.MTU != obs.MTU {
		out = append(out, "mtu")
	}
	if t.want.AdminUp != obs.AdminUp {
		out = append(out, "up")
	}
	if t.alias != nil && *t.alias != obs.Alias {
		out = append(out, "alias")
	}
	if t.want.MAC != nil && !bytes.Equal(t.want.MAC, obs.MAC) {
		out = append(out, "mac")
	}
	return out
}

// applyPhysical records the originals of what the target changes, then
// changes it.
func (k *kernel) applyPhysical(l netlink.Link, obs *items.Interface, t physicalTarget) error {
	changes := t.changes(obs)
	if len(changes) == 0 {
		return nil
	}
	if err := k.st.rememberOriginals(l, changes); err != nil {
		return err
	}
	alias := func(l netlink.Link, _, _ *items.Interface) error {
		if t.alias == nil {
			return nil
		}
		return k.setAlias(l, *t.alias)
	}
	return k.runSteps(l, obs, &t.want, alias)
}

// restoreName gives a NIC that netagent renamed (o records its name
// before) that name back, its record first, and returns the name it has
// then (its record's key). A link that holds the name meanwhile keeps it,
// and the NIC the intent's name (renaming that link is someone else's
// call), unless it is a NIC netagent renamed that leaves the intent too
// (givenBackToo: names swapped): it is moved aside, and given back its own
// name and settings once the name is free.
func (k *kernel) restoreName(l netlink.Link, o *original) (string, error) {
	name := l.Attrs().Name
	if o.Name == nil || *o.Name == name {
		return name, nil
	}
	holder, err := k.lookup(*o.Name)
	if err != nil || holder != nil && !k.givenBackToo(holder) {
		return name, err
	}
	if err := k.clearName(holder); err != nil {
		return name, fmt.Errorf("giving %s back its name %s: %w", name, *o.Name, err)
	}
	fresh, err := k.nl.LinkByIndex(l.Attrs().Index) // its admin state now
	if err != nil {
		return name, fmt.Errorf("reading %s to give it back its name %s: %w", name, *o.Name, err)
	}
	if err := k.st.moveRecord(fresh, *o.Name); err != nil {
		return name, err
	}
	if _, err := k.rename(fresh, *o.Name); err != nil {
		return name, err
	}
	if holder != nil {
		return *o.Name, k.restorePhysical(tempName(holder.Attrs().Index))
	}
	return *o.Name, nil
}

// givenBackToo reports whether the link holder is a NIC that netagent
// renamed (its record has another name) and that the intent no longer
// declares: it is being given back what it had, its name too.
func (k *kernel) givenBackToo(holder netlink.Link) bool {
	st, err := k.st.snapshot()
	if err != nil {
		return false
	}
	o := st.originalOf(holder)
	return o != nil && o.Name != nil && *o.Name != holder.Attrs().Name && !k.kept(holder)
}
