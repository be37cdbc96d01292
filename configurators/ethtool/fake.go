package ethtool

import (
	"fmt"
	"maps"
	"slices"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// FakeKernel is the ethtool side of NICs in memory, as the kernel answers
// it: features with the changeable and fixed ones, groups of settings
// with their maxima, EOPNOTSUPP (ErrNotSupported) for a group a NIC's
// driver lacks, EINVAL for a value above a maximum or a fixed feature
// toggled, a link mode advertised that the NIC does not support, a
// Wake-on-LAN mode it does not support. A Wake-on-LAN write replaces the
// whole set of modes, as the kernel does with this package's request
// (EncodeWakeOnLANSet): 0 turns it off. Writes
// counts the set requests that reached it.
//
// LinkMTU, when set, is the MTU of a link by name (configurators.Fake
// reads the link fake's); otherwise a NIC's MTU field is. A NIC whose
// driver resets groups on an MTU change (ResetOnMTU, as some drivers
// reallocate their rings) shows those groups at their defaults from the
// first ethtool request after the MTU changed.
type FakeKernel struct {
	NICs    map[string]*FakeNIC
	Writes  int
	LinkMTU func(name string) (int, bool)
	// Identity, if set, is the namespace's identity in the state files
	// (a snapshot's namespace); else a fixed fake one.
	Identity *statefile.NsIdentity
}

// FakeNIC is one link of the fake.
type FakeNIC struct {
	Index    int
	Features Features
	// Groups are the supported groups by name; a missing group is
	// unsupported. The link group's set "advertise" is the advertised
	// speed and duplex modes, its Allowed the supported ones; with autoneg
	// off the NIC reports none advertised and ignores a write's set, as
	// the e1000 does.
	Groups map[string]Values
	MTU    int
	// WakeOnLANSupported is the mask of the Wake-on-LAN modes the NIC
	// supports (the group "wake-on-lan" holds the current ones).
	WakeOnLANSupported uint32
	// ResetOnMTU are the values the driver gives its groups on an MTU
	// change, by group (nil: it keeps them).
	ResetOnMTU map[string]map[string]uint32
	seenMTU    int
}

// NewFakeKernel returns a kernel without links.
func NewFakeKernel() *FakeKernel { return &FakeKernel{NICs: map[string]*FakeNIC{}} }

// AddVeth adds a link as a veth of this host's kernel answers: rx-gro off
// and changeable, rx-checksum on, rx-lro off and fixed, rx and tx
// channels 1 of at most 2, no other group.
func (f *FakeKernel) AddVeth(name string, index int) *FakeNIC {
	n := &FakeNIC{
		Index: index,
		Features: Features{
			Active:   map[string]bool{"rx-checksum": true, "tx-checksum-ip-generic": true},
			HW:       map[string]bool{"rx-checksum": true, "tx-checksum-ip-generic": true, "rx-gro": true},
			NoChange: map[string]bool{"rx-lro": true, "tx-checksum-ipv4": true},
		},
		Groups: map[string]Values{"channels": {Cur: map[string]uint32{"rx": 1, "tx": 1}, Max: map[string]uint32{"rx": 2, "tx": 2}}},
	}
	f.NICs[name] = n
	return n
}

// AddE1000 adds a link as qemu's e1000 answers (Linux 6.18): rx-gro
// changeable, rx and tx rings 256 of at most 4096, pause on, speed 1000
// full duplex with autoneg on, advertising the five modes it supports;
// MTU 1500.
func (f *FakeKernel) AddE1000(name string, index int) *FakeNIC {
	modes := []string{"1000baseT/Full", "100baseT/Full", "100baseT/Half", "10baseT/Full", "10baseT/Half"}
	n := &FakeNIC{
		Index: index,
		MTU:   1500,
		Features: Features{
			Active: map[string]bool{"rx-checksum": true, "rx-gro": true},
			HW:     map[string]bool{"rx-checksum": true, "rx-gro": true},
		},
		Groups: map[string]Values{
			"rings": {Cur: map[string]uint32{"rx": 256, "tx": 256, "rx-mini": 0, "rx-jumbo": 0}, Max: map[string]uint32{"rx": 4096, "tx": 4096, "rx-mini": 0, "rx-jumbo": 0}},
			"pause": {Cur: map[string]uint32{"autoneg": 1, "rx": 1, "tx": 1}},
			"link": {Cur: map[string]uint32{"speed": 1000, "duplex": items.EthtoolDuplexFull, "autoneg": 1},
				Sets: map[string][]string{"advertise": modes}, Allowed: map[string][]string{"advertise": modes}},
		},
	}
	f.NICs[name] = n
	return n
}

// AddE100 adds a link as qemu's i82559c answers the e100 driver for
// Wake-on-LAN (the fake's only group on it): off, magic the one mode
// supported (e100_get_wol); MTU 1500.
func (f *FakeKernel) AddE100(name string, index int) *FakeNIC {
	n := &FakeNIC{
		Index:              index,
		MTU:                1500,
		Features:           Features{Active: map[string]bool{}, HW: map[string]bool{}},
		Groups:             map[string]Values{"wake-on-lan": {Cur: map[string]uint32{"modes": 0}}},
		WakeOnLANSupported: items.EthtoolWakeOnLan["magic"],
	}
	f.NICs[name] = n
	return n
}

func (f *FakeKernel) nic(ifindex int) (*FakeNIC, error) {
	for name, n := range f.NICs {
		if n.Index == ifindex {
			f.observe(name, n)
			return n, nil
		}
	}
	return nil, fmt.Errorf("ifindex %d: no such device", ifindex)
}

// observe resets the groups of a NIC whose driver resets them on an MTU
// change, if the MTU changed since the fake last looked.
func (f *FakeKernel) observe(name string, n *FakeNIC) {
	mtu, _ := f.MTU(name)
	if n.seenMTU != 0 && mtu != n.seenMTU {
		for group, vals := range n.ResetOnMTU {
			maps.Copy(n.Groups[group].Cur, vals)
		}
	}
	n.seenMTU = mtu
}

// Index returns the link's index.
func (f *FakeKernel) Index(name string) (int, error) {
	if n := f.NICs[name]; n != nil {
		return n.Index, nil
	}
	return 0, fmt.Errorf("link %s: %w", name, ErrNoLink)
}

// MTU returns the link's MTU: LinkMTU's, or the NIC's.
func (f *FakeKernel) MTU(name string) (int, error) {
	if f.LinkMTU != nil {
		if mtu, ok := f.LinkMTU(name); ok {
			return mtu, nil
		}
	}
	if n := f.NICs[name]; n != nil {
		return n.MTU, nil
	}
	return 0, fmt.Errorf("link %s: %w", name, ErrNoLink)
}

// Features returns a copy of the link's features.
func (f *FakeKernel) Features(ifindex int) (Features, error) {
	n, err := f.nic(ifindex)
	if err != nil {
		return Features{}, err
	}
	return Features{Active: maps.Clone(n.Features.Active), HW: maps.Clone(n.Features.HW), NoChange: maps.Clone(n.Features.NoChange)}, nil
}

// SetFeatures toggles changeable features; a fixed one is EINVAL.
func (f *FakeKernel) SetFeatures(ifindex int, want map[string]bool) error {
	n, err := f.nic(ifindex)
	if err != nil {
		return err
	}
	f.Writes++
	for name, on := range want {
		if !n.Features.Changeable(name) && n.Features.Active[name] != on {
			return fmt.Errorf("feature %s: invalid argument", name)
		}
	}
	for name, on := range want {
		n.Features.Active[name] = on
	}
	return nil
}

// Get returns a copy of a group.
func (f *FakeKernel) Get(group string, ifindex int) (Values, error) {
	n, err := f.nic(ifindex)
	if err != nil {
		return Values{}, err
	}
	v, ok := n.Groups[group]
	if !ok {
		return Values{}, fmt.Errorf("reading %s: %w", group, ErrNotSupported)
	}
	out := Values{Cur: maps.Clone(v.Cur), Max: maps.Clone(v.Max), Sets: maps.Clone(v.Sets), Allowed: v.Allowed}
	if group == "link" && v.Cur["autoneg"] == 0 && v.Sets != nil {
		out.Sets["advertise"] = []string{}
	}
	return out, nil
}

// Set writes a group's fields; above a maximum or an unsupported
// Wake-on-LAN mode is EINVAL.
func (f *FakeKernel) Set(group string, ifindex int, set map[string]uint32) error {
	n, err := f.nic(ifindex)
	if err != nil {
		return err
	}
	v, ok := n.Groups[group]
	if !ok {
		return fmt.Errorf("setting %s: %w", group, ErrNotSupported)
	}
	f.Writes++
	if group == "wake-on-lan" {
		return n.setWakeOnLAN(ifindex, set)
	}
	for field, val := range set {
		if max, ok := v.Max[field]; ok && val > max {
			return fmt.Errorf("%s %s %d: invalid argument", group, field, val)
		}
	}
	maps.Copy(v.Cur, set)
	return nil
}

// setWakeOnLAN makes the modes the NIC's whole set, as the kernel does
// with EncodeWakeOnLANSet's request: what that encoder refuses, and a mode
// the NIC does not support ("cannot enable unsupported WoL mode"), is
// refused and changes nothing.
func (n *FakeNIC) setWakeOnLAN(ifindex int, set map[string]uint32) error {
	modes, ok := set["modes"]
	if !ok || len(set) != 1 {
		return fmt.Errorf("wake-on-lan %v: invalid argument", set)
	}
	if _, err := EncodeWakeOnLANSet(ifindex, modes); err != nil {
		return err
	}
	if modes&^n.WakeOnLANSupported != 0 {
		return fmt.Errorf("wake-on-lan modes %#x: cannot enable unsupported WoL mode: invalid argument", modes)
	}
	n.Groups["wake-on-lan"].Cur["modes"] = modes
	return nil
}

// SetSets writes the link group's advertised modes: one the NIC does not
// support is EINVAL; with autoneg off the set is taken and not used.
func (f *FakeKernel) SetSets(group string, ifindex int, sets map[string][]string) error {
	n, err := f.nic(ifindex)
	if err != nil {
		return err
	}
	v, ok := n.Groups[group]
	if !ok || v.Sets == nil {
		return fmt.Errorf("setting %s: %w", group, ErrNotSupported)
	}
	f.Writes++
	for field, names := range sets {
		allowed, ok := v.Allowed[field]
		if !ok {
			return fmt.Errorf("%s %s: invalid argument", group, field)
		}
		for _, name := range names {
			if !slices.Contains(allowed, name) {
				return fmt.Errorf("%s %s %s: invalid argument", group, field, name)
			}
		}
	}
	if v.Cur["autoneg"] == 0 {
		return nil
	}
	for field, names := range sets {
		v.Sets[field] = slices.Sorted(slices.Values(names))
	}
	return nil
}

// fakeNS is the namespace identity of the fake's records.
var fakeNS = statefile.NsIdentity{BootID: "fake", Netns: "fake"}

// Configurator returns the configurator over the fake.
func (f *FakeKernel) Configurator(stateDir string) *Configurator {
	return &Configurator{k: f, state: newStore(stateDir, f.identity())}
}

// identity is the namespace's identity in the state files.
func (f *FakeKernel) identity() statefile.NsIdentity {
	if f.Identity != nil {
		return *f.Identity
	}
	return fakeNS
}

// Register registers the configurator over the fake.
func (f *FakeKernel) Register(reg *reconciler.TypeRegistry, stateDir string) error {
	return reg.Register(items.TypeEthtool, f.Configurator(stateDir))
}

// ReadBack reads the fake back as ReadBack does a namespace.
func (f *FakeKernel) ReadBack(stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	return readItems(f, newStore(stateDir, f.identity()), hint)
}
