package ethtool

import (
	"fmt"
	"maps"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// FakeKernel is the ethtool side of NICs in memory, as the kernel answers
// it: features with the changeable and fixed ones, groups of settings
// with their maxima, EOPNOTSUPP (ErrNotSupported) for a group a NIC's
// driver lacks, EINVAL for a value above a maximum or a fixed feature
// toggled. Writes counts the set requests that reached it.
type FakeKernel struct {
	NICs   map[string]*FakeNIC
	Writes int
}

// FakeNIC is one link of the fake.
type FakeNIC struct {
	Index    int
	Features Features
	// Groups are the supported groups by name; a missing group is
	// unsupported.
	Groups map[string]Values
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

func (f *FakeKernel) nic(ifindex int) (*FakeNIC, error) {
	for _, n := range f.NICs {
		if n.Index == ifindex {
			return n, nil
		}
	}
	return nil, fmt.Errorf("ifindex %d: no such device", ifindex)
}

// Index returns the link's index.
func (f *FakeKernel) Index(name string) (int, error) {
	if n := f.NICs[name]; n != nil {
		return n.Index, nil
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
	return Values{Cur: maps.Clone(v.Cur), Max: maps.Clone(v.Max)}, nil
}

// Set writes a group's fields; above a maximum is EINVAL.
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
	for field, val := range set {
		if max, ok := v.Max[field]; ok && val > max {
			return fmt.Errorf("%s %s %d: invalid argument", group, field, val)
		}
	}
	maps.Copy(v.Cur, set)
	return nil
}

// fakeNS is the namespace identity of the fake's records.
var fakeNS = statefile.NsIdentity{BootID: "fake", Netns: "fake"}

// Configurator returns the configurator over the fake.
func (f *FakeKernel) Configurator(stateDir string) *Configurator {
	return &Configurator{k: f, state: newStore(stateDir, fakeNS)}
}

// Register registers the configurator over the fake.
func (f *FakeKernel) Register(reg *reconciler.TypeRegistry, stateDir string) error {
	return reg.Register(items.TypeEthtool, f.Configurator(stateDir))
}

// ReadBack reads the fake back as ReadBack does a namespace.
func (f *FakeKernel) ReadBack(stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	return readItems(f, newStore(stateDir, fakeNS), hint)
}
