package host

import (
	"slices"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/dhcp"
	"github.com/netagent/netagent/configurators/dhcp6"
	"github.com/netagent/netagent/configurators/firewall"
	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/configurators/nftables"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// namespace is what a Runtime builds its configurators over and reads,
// plans and predicts from: the target namespace (netnsNamespace, the
// kernel through the configurator packages), or fakes of it
// (fakeNamespace: the same configurators over configurators.Fake).
type namespace interface {
	NewRegistryWith(stateDir string, opts configurators.Options) (*reconciler.TypeRegistry, error)
	ReadItems(stateDir string, hint *dg.Graph) ([]dg.Item, error)
	// KeepRouteTables rebuilds a lost record of the route tables netagent
	// wrote (configurators.KeepRouteTables): a writer's read-back only.
	KeepRouteTables(stateDir string) (string, error)
	// ReadLinkItems is the link configurator's read-back alone.
	ReadLinkItems(stateDir string, hint *dg.Graph) ([]dg.Item, error)
	// ReadNftItems is the nftables configurator's read-back alone.
	ReadNftItems(stateDir string, hint *dg.Graph) ([]dg.Item, error)
	Clashes(stateDir string, hint *dg.Graph) (map[dg.ItemRef]error, error)
	Adoptions(stateDir string, hint *dg.Graph) (map[dg.ItemRef]dg.Item, error)
	NewDryRun(stateDir string) (*configurators.DryRun, error)
	// PlanWarnings are plan's warnings (configurators.PlanWarnings).
	PlanWarnings(hint *dg.Graph) ([]configurators.Warning, error)
	ReadFound(stateDir string) (link.Found, error)
	// ReuseAfterWrite lets the next read-back use what the last write
	// saved (firewall.ReuseAfterWrite); end takes the permit back.
	ReuseAfterWrite() (end func())
}

// netnsNamespace is a namespace of the kernel.
type netnsNamespace struct{ t *netnsx.Target }

func (n netnsNamespace) NewRegistryWith(stateDir string, opts configurators.Options) (*reconciler.TypeRegistry, error) {
	return configurators.NewRegistryWith(n.t, stateDir, opts)
}

func (n netnsNamespace) ReadItems(stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	return configurators.ReadItems(n.t, stateDir, hint)
}

func (n netnsNamespace) KeepRouteTables(stateDir string) (string, error) {
	return configurators.KeepRouteTables(n.t, stateDir)
}

func (n netnsNamespace) ReadLinkItems(stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	return link.ReadBack(n.t, stateDir, hint)
}

func (n netnsNamespace) ReadNftItems(stateDir string, _ *dg.Graph) ([]dg.Item, error) {
	return nftables.ReadBackIn(n.t, stateDir)
}

func (n netnsNamespace) Clashes(stateDir string, hint *dg.Graph) (map[dg.ItemRef]error, error) {
	return configurators.Clashes(n.t, stateDir, hint)
}

func (n netnsNamespace) Adoptions(stateDir string, hint *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	return configurators.Adoptions(n.t, stateDir, hint)
}

func (n netnsNamespace) NewDryRun(stateDir string) (*configurators.DryRun, error) {
	return configurators.NewDryRun(n.t, stateDir)
}

func (n netnsNamespace) PlanWarnings(hint *dg.Graph) ([]configurators.Warning, error) {
	return configurators.PlanWarnings(n.t, hint)
}

func (n netnsNamespace) ReadFound(stateDir string) (link.Found, error) {
	return link.ReadFound(n.t, stateDir)
}

func (n netnsNamespace) ReuseAfterWrite() func() { return firewall.ReuseAfterWrite(n.t) }

// fakeNamespace is a namespace of fakes.
type fakeNamespace struct{ *configurators.Fake }

func (n fakeNamespace) ReadLinkItems(stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	return n.Links.ReadBack(stateDir, hint)
}

// ReadNftItems is the nftables tables of the fakes' read-back.
func (n fakeNamespace) ReadNftItems(stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	list, err := n.ReadItems(stateDir, hint)
	return slices.DeleteFunc(list, func(it dg.Item) bool { return it.Type() != items.TypeNftTable }), err
}

func (fakeNamespace) ReuseAfterWrite() func() { return func() {} }

// OpenFake is Open over fakes of a namespace: the real link, l3 and
// firewall configurators, with no kernel, no root and no namespace, for
// tests of what runs over a Runtime (Apply, Plan, Check, the daemon's
// Kernel). What needs the kernel itself is not there: no dns and no
// DHCP items (no configurator: their items fail), no wait for link
// events (Apply's Wait is ignored), no trials (BeginTrial and what
// follows need the namespace). Close does nothing.
func OpenFake(f *configurators.Fake, stateDir string, log logrus.FieldLogger) (*Runtime, error) {
	return OpenFakeWith(f, stateDir, log, Options{})
}

// OpenFakeWith is OpenFake with opts.
func OpenFakeWith(f *configurators.Fake, stateDir string, log logrus.FieldLogger, opts Options) (*Runtime, error) {
	if err := statefile.PrepareDir(stateDir); err != nil {
		return nil, err
	}
	ns := fakeNamespace{f}
	reg, err := ns.NewRegistryWith(stateDir, configurators.Options{Adopt: opts.Adopt})
	if err != nil {
		return nil, err
	}
	leases, leases6 := &dhcp.Leases{}, &dhcp6.Leases{}
	return &Runtime{ns: ns, stateDir: stateDir, reg: reg, log: log, adopt: opts.Adopt,
		dhcp: &dhcp.Configurator{Leases: leases, StateDir: stateDir, Log: log}, leases: leases,
		dhcp6: &dhcp6.Configurator{Leases: leases6, StateDir: stateDir, Log: log}, leases6: leases6}, nil
}

// IPv6Forwarding reports whether the namespace forwards IPv6
// (configurators.IPv6Forwarding; over fakes, their /proc/sys/net).
func (r *Runtime) IPv6Forwarding() (bool, error) {
	if f, ok := r.ns.(fakeNamespace); ok {
		v, ok := f.Firewall.ProcSys.Files()["/proc/sys/net/ipv6/conf/all/forwarding"]
		return ok && strings.TrimSpace(v) != "0", nil
	}
	return configurators.IPv6Forwarding(r.target)
}

func (n fakeNamespace) NewDryRun(string) (*configurators.DryRun, error) { return n.Fake.NewDryRun() }
