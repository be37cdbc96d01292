package render

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// The sysctls section: a map, one item per key.
var sysctlsSection = section{
	path:   "sysctls",
	render: (*builder).sysctls,
	refs: func(it dg.Item) []string {
		if s, ok := it.(*items.Sysctl); ok {
			if ifname, ok := items.SysctlInterface(s.Key); ok {
				return []string{ifname}
			}
		}
		return nil
	},
	toIntent: func(inv *inverter, out *intent.Intent) {
		for _, s := range sectionItems[*items.Sysctl](inv) {
			if out.Sysctls == nil {
				out.Sysctls = map[string]string{}
			}
			out.Sysctls[intentSysctlKey(s.Key)] = items.NormalizeSysctlValue(s.Value)
		}
	},
}

// sysctls renders every sysctl, in key order. A per-interface key must
// name a declared interface: the item depends on it. A global forwarding
// key depends on the intent's per-interface forwarding keys of its family
// (see forwardingDeps).
func (b *builder) sysctls() {
	keys := make(map[string]string, len(b.in.Sysctls)) // intent key -> item key
	for k := range b.in.Sysctls {
		keys[k] = b.sysctlKey(k)
	}
	for _, k := range slices.Sorted(maps.Keys(b.in.Sysctls)) {
		at, ok := b.in.SysctlOrigins[k]
		if !ok {
			at = intent.Origin{Path: "sysctls[" + strconv.Quote(k) + "]"}
		}
		key := keys[k]
		if ifname, perIf := items.SysctlInterface(key); perIf {
			if _, ok := b.deviceRef(at, ifname); !ok {
				continue
			}
		}
		b.object("", b.in.SysctlOrigins[k])
		b.put(&items.Sysctl{Key: key, Value: b.in.Sysctls[k], Deps: forwardingDeps(key, keys)}, at)
	}
}

// forwardingDeps returns, for a key whose write rewrites every interface's
// forwarding key (net.ipv4.ip_forward, net.ipv{4,6}.conf.all.forwarding),
// the references of the per-interface forwarding keys of the same family
// in the intent, in key order. Those are then set first, so that the values
// saved to be restored are the real originals, and restored last.
func forwardingDeps(key string, keys map[string]string) []dg.ItemRef {
	fam, global := items.GlobalForwardingSysctl(key)
	if !global {
		return nil
	}
	var deps []dg.ItemRef
	for _, k := range slices.Sorted(maps.Values(keys)) {
		if f, ok := items.InterfaceForwardingSysctl(k); ok && f == fam {
			deps = append(deps, dg.ItemRef{Type: items.TypeSysctl, Name: k})
		}
	}
	return deps
}

// sysctlKey turns an intent key into the item's: the dots inside a
// declared interface name ("net.ipv4.conf.bond0.100.rp_filter" for
// interface bond0.100) become slashes, as sysctl(8) writes them.
func (b *builder) sysctlKey(k string) string {
	for _, name := range slices.Sorted(maps.Keys(b.idx.ifaces)) {
		if !strings.Contains(name, ".") || !strings.Contains(k, "."+name+".") {
			continue
		}
		cand := strings.Replace(k, "."+name+".", "."+strings.ReplaceAll(name, ".", "/")+".", 1)
		if got, ok := items.SysctlInterface(cand); ok && got == name {
			return cand
		}
	}
	return k
}

// intentSysctlKey is the inverse of sysctlKey.
func intentSysctlKey(key string) string { return strings.ReplaceAll(key, "/", ".") }
