package configurators

import (
	"fmt"
	"slices"

	"github.com/netagent/netagent/configurators/ethtool"
	"github.com/netagent/netagent/configurators/firewall"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/configurators/nftables"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// Fake is one network namespace in memory behind the real configurators,
// for tests that need no root and no namespace (agent/host's): the
// packages' own fakes, each as faithful as its doc says (link.FakeKernel:
// the kernel's links, errnos and ifindexes; l3.FakeKernel: rtnetlink's
// addresses, routes, rules and neighbours, parsed from the requests the
// configurators send; firewall.Fake: iptables-restore's transactions and
// /proc/sys/net; ethtool.FakeKernel: the ethtool answers of NICs added
// with Ethtool.AddVeth or AddE1000; nftables.FakeKernel: nf_tables, with
// netagent's tables and others', and its ownership records). The l3 fake follows the link fake's links, so that an
// address goes on a bridge the same reconcile created, and goes with it;
// the ethtool fake follows their MTUs (a driver may reset rings with one).
//
// Its methods are NewRegistry, ReadItems, Clashes and NewDryRun over the
// fakes, with the state files in the given state directory. The dns item
// type is left out: its configurator writes the host's resolv.conf.
type Fake struct {
	Links    *link.FakeKernel
	L3       *l3.FakeKernel
	Firewall *firewall.Fake
	Ethtool  *ethtool.FakeKernel
	Nft      *nftables.FakeKernel
}

// NewFake returns a namespace with lo only and a /proc/sys/net holding
// sysctls (path → value, "/proc/sys/net/ipv4/ip_forward": "0"; may be
// nil). Links.AddNIC plugs in a physical NIC.
func NewFake(sysctls map[string]string) *Fake {
	f := &Fake{Links: link.NewFakeKernel(), L3: l3.NewFakeKernel(), Firewall: firewall.NewFake(sysctls), Ethtool: ethtool.NewFakeKernel(), Nft: nftables.NewFakeKernel()}
	f.L3.Links = f.linkNames
	f.Ethtool.LinkMTU = f.linkMTU
	return f
}

// linkMTU is the MTU of the link fake's link of that name, which the
// ethtool fake's NICs follow.
func (f *Fake) linkMTU(name string) (int, bool) {
	l, err := f.Links.LinkByName(name)
	if err != nil {
		return 0, false
	}
	return l.Attrs().MTU, true
}

// linkNames are the link fake's links by ifindex.
func (f *Fake) linkNames() map[int]string {
	links, _ := f.Links.LinkList() // the fake's list never fails
	names := make(map[int]string, len(links))
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	return names
}

// NewRegistry registers the link, l3, firewall, nftables and ethtool
// configurators over the fakes, as NewRegistry does over a namespace
// (without dns).
func (f *Fake) NewRegistry(stateDir string) (*reconciler.TypeRegistry, error) {
	return f.NewRegistryWith(stateDir, Options{})
}

// NewRegistryWith is NewRegistry with opts, as NewRegistryWith over a
// namespace.
func (f *Fake) NewRegistryWith(stateDir string, opts Options) (*reconciler.TypeRegistry, error) {
	reg := &reconciler.TypeRegistry{}
	if err := f.Links.RegisterWith(reg, stateDir, link.Options{Adopt: opts.Adopt}); err != nil {
		return nil, fmt.Errorf("registering link configurators: %w", err)
	}
	if err := f.L3.RegisterWith(reg, l3.Options{Adopt: opts.Adopt}); err != nil {
		return nil, fmt.Errorf("registering l3 configurators: %w", err)
	}
	if err := f.Firewall.Register(reg, stateDir); err != nil {
		return nil, fmt.Errorf("registering firewall configurators: %w", err)
	}
	if err := nftables.RegisterFakeIn(reg, f.Nft, stateDir); err != nil {
		return nil, fmt.Errorf("registering the nftables configurator: %w", err)
	}
	if err := f.Ethtool.Register(reg, stateDir); err != nil {
		return nil, fmt.Errorf("registering the ethtool configurator: %w", err)
	}
	return reg, nil
}

// ReadItems reads the fakes back, as ReadItems does a namespace (without
// dns).
func (f *Fake) ReadItems(stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	linkItems, err := f.Links.ReadBack(stateDir, hint)
	if err != nil {
		return nil, fmt.Errorf("reading back links: %w", err)
	}
	l3Items, err := f.L3.ReadBack(hint)
	if err != nil {
		return nil, fmt.Errorf("reading back l3: %w", err)
	}
	fwItems, err := f.Firewall.ReadBack(stateDir, hint)
	if err != nil {
		return nil, fmt.Errorf("reading back firewall: %w", err)
	}
	nftItems, err := f.Nft.ReadBack()
	if err != nil {
		return nil, fmt.Errorf("reading back nftables: %w", err)
	}
	etItems, err := f.Ethtool.ReadBack(stateDir, hint)
	if err != nil {
		return nil, fmt.Errorf("reading back ethtool: %w", err)
	}
	return slices.Concat(linkItems, l3Items, fwItems, nftItems, etItems), nil
}

// KeepRouteTables is KeepRouteTables over the l3 fake (its record is
// where its UseStateDir put it, none without).
func (f *Fake) KeepRouteTables(string) (string, error) { return f.L3.KeepRouteTables() }

// Clashes finds the intended items whose place someone else's object
// holds in the fakes, as Clashes does in a namespace.
func (f *Fake) Clashes(stateDir string, hint *dg.Graph) (map[dg.ItemRef]error, error) {
	return findClashes([]clashFinder{
		{"links", func() (map[dg.ItemRef]error, error) { return f.Links.Clashes(stateDir, hint) }},
		{"l3", func() (map[dg.ItemRef]error, error) { return f.L3.Clashes(hint) }},
		{"firewall", func() (map[dg.ItemRef]error, error) { return f.Firewall.Clashes(stateDir, hint) }},
		{"nftables", func() (map[dg.ItemRef]error, error) { return f.Nft.Clashes(stateDir, hint) }},
	})
}

// Adoptions finds the intended items whose object in the fakes a create
// with Options.Adopt takes over, as Adoptions does in a namespace.
func (f *Fake) Adoptions(stateDir string, hint *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	return findAdoptions(
		func() (map[dg.ItemRef]dg.Item, error) { return f.Links.Adoptions(stateDir, hint) },
		func() (map[dg.ItemRef]dg.Item, error) { return f.L3.Adoptions(hint) },
		func() (map[dg.ItemRef]dg.Item, error) { return f.Firewall.SysctlAdoptions(stateDir, hint) })
}

// NewDryRun starts a dry run over the fakes' addresses and routes, as
// NewDryRun does in a namespace.
func (f *Fake) NewDryRun() (*DryRun, error) {
	r, err := f.L3.Refusals()
	if err != nil {
		return nil, fmt.Errorf("reading the addresses and routes: %w", err)
	}
	return &DryRun{addrs: r, ethtool: func(it dg.Item) error { return f.Ethtool.Configurator("").Check(it) }}, nil
}

// ReadFound reads the recorded originals of the fake's physical links, as
// link.ReadFound does a namespace's.
func (f *Fake) ReadFound(stateDir string) (link.Found, error) { return f.Links.ReadFound(stateDir) }
