package configurators

import (
	"fmt"
	"slices"

	"github.com/netagent/netagent/configurators/firewall"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
)

// ReadOthers reads what the target namespace holds that netagent did not
// make (another tool's objects, or the administrator's), for `import
// kernel`: each object as the item that would make it, or as an
// items.Foreign whose Why says why no item can. It covers the links of
// every kind and their ports (link.ReadOthers), addresses, routes, rules
// and permanent neighbours (l3.ReadOthers), the sysctls that differ from
// the kernel's defaults (firewall.ReadChangedSysctls) and the iptables
// chains (firewall.ReadOtherChains). The kernel's own objects are left
// out, or with all included (the loopback) or listed as Foreign (the
// rest: the kernel makes them by itself). Every list is bounded: the
// namespace is another writer's.
func ReadOthers(t *netnsx.Target, stateDir string, all bool) ([]dg.Item, error) {
	readers := []struct {
		what string
		read func() ([]dg.Item, error)
	}{
		{"links", func() ([]dg.Item, error) { return link.ReadOthers(t, stateDir, all) }},
		{"l3", func() ([]dg.Item, error) { return l3.ReadOthers(t, stateDir, all) }},
		{"sysctls", func() ([]dg.Item, error) { return firewall.ReadChangedSysctls(t) }},
		{"iptables chains", func() ([]dg.Item, error) { return firewall.ReadOtherChains(t, stateDir) }},
	}
	var lists [][]dg.Item
	for _, r := range readers {
		got, err := r.read()
		if err != nil {
			return nil, fmt.Errorf("reading others' %s: %w", r.what, err)
		}
		lists = append(lists, got)
	}
	return slices.Concat(lists...), nil
}
