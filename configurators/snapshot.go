package configurators

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/netagent/netagent/configurators/ethtool"
	"github.com/netagent/netagent/configurators/firewall"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/configurators/nftables"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
)

// KernelState is what the configurators read of a namespace, whole, as
// the fakes take it back (NewFakeFrom): the links, the l3 objects, the
// iptables tables of each family (iptables-save's text), the files of
// /proc/sys/net, the links' ethtool features and settings, nf_tables
// (netagent's tables decoded, others' as plan reads them: nftables.State),
// and the namespace's identity in the state files.
type KernelState struct {
	Identity statefile.NsIdentity
	Links    []link.LoadedLink
	L3       l3.LoadedState
	IPTables map[items.Family]string
	Sysctls  map[string]string
	// Ethtool are the links' ethtool answers by link name.
	Ethtool map[string]*ethtool.FakeNIC
	Nft     *nftables.State
}

// MaxSysctls bounds the files of /proc/sys/net DumpKernel reads.
const MaxSysctls = 100_000

// DumpKernel reads t's namespace whole (KernelState), with the link
// records of stateDir ("": none) that name WireGuard key files. It
// writes nothing.
func DumpKernel(ctx context.Context, t *netnsx.Target, stateDir string) (*KernelState, error) {
	id, err := statefile.Identify(t)
	if err != nil {
		return nil, err
	}
	s := &KernelState{Identity: id}
	if s.Links, err = link.Dump(t, stateDir); err != nil {
		return nil, err
	}
	names, indexes := map[int]string{}, map[string]int{}
	for _, l := range s.Links {
		a := l.Link.Attrs()
		names[a.Index] = a.Name
		if a.Name != "lo" {
			indexes[a.Name] = a.Index
		}
	}
	if s.Ethtool, err = ethtool.Dump(t, indexes); err != nil {
		return nil, err
	}
	if s.L3, err = l3.Dump(t, names); err != nil {
		return nil, err
	}
	if s.IPTables, err = firewall.SaveTables(ctx, t); err != nil {
		return nil, err
	}
	if s.Sysctls, err = firewall.ReadSysctls(t, MaxSysctls); err != nil {
		return nil, err
	}
	if s.Nft, err = nftables.DumpState(t); err != nil {
		return nil, err
	}
	return s, nil
}

// promoting are the devices ("all" too) whose promote_secondaries is on.
func promoting(sysctls map[string]string) []string {
	var out []string
	for path, v := range sysctls {
		dev, ok := strings.CutPrefix(path, "/proc/sys/net/ipv4/conf/")
		if dev, ok = strings.CutSuffix(dev, "/promote_secondaries"); ok && v != "0" {
			out = append(out, dev)
		}
	}
	return out
}

// NewFakeFrom returns fakes of the namespace s was read from: its links
// (with their ifindexes), l3 objects, iptables tables, /proc/sys/net,
// nf_tables and its identity, so that the configurators over them read
// what they read there, the state directory's records included.
func NewFakeFrom(s *KernelState) (*Fake, error) {
	f := NewFake(maps.Clone(s.Sysctls))
	id := s.Identity
	f.Links.Identity, f.Firewall.Identity, f.Ethtool.Identity, f.Nft.Identity = &id, &id, &id, &id
	if err := f.Links.Load(s.Links); err != nil {
		return nil, err
	}
	st := s.L3
	st.Promote = promoting(s.Sysctls)
	if err := f.L3.Load(st); err != nil {
		return nil, err
	}
	f.Ethtool.Load(s.Ethtool)
	if s.Nft != nil {
		if err := f.Nft.Load(s.Nft); err != nil {
			return nil, fmt.Errorf("loading nftables: %w", err)
		}
	}
	for fam, save := range s.IPTables {
		ipt := f.Firewall.IPTables[fam]
		if ipt == nil {
			return nil, fmt.Errorf("loading iptables: no family %q", fam)
		}
		if err := ipt.Load(save); err != nil {
			return nil, fmt.Errorf("loading the %s tables: %w", fam, err)
		}
	}
	return f, nil
}
