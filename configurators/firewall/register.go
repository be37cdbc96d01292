package firewall

import (
	"context"
	"errors"
	"fmt"

	"github.com/netagent/netagent/internal/statefile"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/ndisc"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Register registers the iptables-chain and sysctl configurators for the
// namespace t. stateDir holds what must survive a restart: the original
// values of the sysctls netagent set (<stateDir>/sysctl.json) and the
// kernel's form of the chains it wrote (<stateDir>/iptables/).
func Register(reg *reconciler.TypeRegistry, t *netnsx.Target, stateDir string) error {
	chains, err := newChainConfigurator(t, stateDir)
	if err != nil {
		return err
	}
	sysctls, err := newSysctlConfigurator(t, stateDir)
	if err != nil {
		return err
	}
	if err := reg.Register(items.TypeIptablesChain, chains); err != nil {
		return err
	}
	return reg.Register(items.TypeSysctl, sysctls)
}

// ReadBack returns the iptables chains and the sysctls netagent owns in
// namespace t, as items. For an item also in hint (the intended graph, may
// be nil), what the kernel cannot tell apart from the intended value is
// read back as the intent spells it, so that applying the same intent
// again plans nothing.
func ReadBack(t *netnsx.Target, stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	chains, err := newChainConfigurator(t, stateDir)
	if err != nil {
		return nil, err
	}
	sysctls, err := newSysctlConfigurator(t, stateDir)
	if err != nil {
		return nil, err
	}
	backends := chains.backends
	if takeReusePermit(t.Name) {
		backends = withSaved(backends)
	}
	return readBackBoth(backends, chains, sysctls, hint)
}

// readBackBoth reads back the chains (through backends) and the sysctls
// of the two configurators.
func readBackBoth(backends map[items.Family]backend, chains *chainConfigurator, sysctls *sysctlConfigurator,
	hint *dg.Graph) ([]dg.Item, error) {
	out, err := readBackChains(context.Background(), backends, chains.records, chains.made, hint)
	if err != nil {
		return nil, err
	}
	s, err := readBackSysctls(sysctls.fs, sysctls.store, hint)
	if err != nil {
		return nil, err
	}
	return append(out, s...), nil
}

// newChainConfigurator returns the iptables-chain configurator of t.
func newChainConfigurator(t *netnsx.Target, stateDir string) (*chainConfigurator, error) {
	c := &chainConfigurator{backends: make(map[items.Family]backend)}
	for _, fam := range families {
		b, err := newExecBackend(t, fam)
		if err != nil {
			return nil, fmt.Errorf("iptables-chain configurator: %w", err)
		}
		c.backends[fam] = b
	}
	recs, err := sharedRecords(chainRecordDir(stateDir, t.Name))
	if err != nil {
		return nil, fmt.Errorf("iptables-chain configurator: loading records: %w", err)
	}
	c.records = recs
	if stateDir != "" {
		ns, err := statefile.Identify(t)
		if err != nil {
			return nil, fmt.Errorf("iptables-chain configurator: %w", err)
		}
		c.made = loadMade(chainRecordDir(stateDir, t.Name), ns)
	}
	return c, nil
}

// newSysctlConfigurator returns the sysctl configurator of t.
func newSysctlConfigurator(t *netnsx.Target, stateDir string) (*sysctlConfigurator, error) {
	if stateDir == "" {
		return nil, errors.New("sysctl configurator: no state directory for the original values")
	}
	ns, err := statefile.Identify(t)
	if err != nil {
		return nil, fmt.Errorf("sysctl configurator: %w", err)
	}
	solicit := func(ifname string) error { return ndisc.Solicit(t, ifname) }
	return &sysctlConfigurator{fs: procSys{do: t.Do}, store: newSysctlStore(stateDir, ns), solicit: solicit}, nil
}
