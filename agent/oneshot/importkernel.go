package oneshot

import (
	"context"
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// kernelSource is the file name of import kernel's warnings.
const kernelSource = "kernel"

// ImportKernel reads what the namespace holds (as show --all does) and
// returns it as an intent: netagent's objects as show --json gives them
// and the physical links around them as physical interfaces. What it
// cannot (yet) turn into the intent is left out with a warning, never
// silently: links of a kind other than physical that are not netagent's,
// and the others' addresses, routes, rules, neighbours and iptables
// chains. Without all, the kernel's own objects (lo, the local table,
// the default rules, the addresses and routes the kernel adds) are left
// out without a word.
func ImportKernel(ctx context.Context, o *Options, all bool) (*importer.Result, error) {
	s, err := Show(ctx, o, true)
	if err != nil {
		return nil, err
	}
	res := &importer.Result{}
	s.Items = slices.DeleteFunc(s.Items, func(it dg.Item) bool {
		l, ok := it.(*items.Link)
		if !ok || l.Kind == "" {
			return ok && l.IfName == "lo" && !all
		}
		res.Warnings = append(res.Warnings, kernelWarning("link "+l.IfName, l.Kind+" links that are not netagent's are not imported yet", l.IfName))
		return true
	})
	res.Intent = s.Intent()
	if !all {
		res.Intent.Interfaces = slices.DeleteFunc(res.Intent.Interfaces, func(i intent.Interface) bool {
			return i.Name == "lo" && i.Type == intent.LinkPhysical && len(i.Addresses) == 0
		})
	}
	res.Warnings = append(res.Warnings, foreignWarnings(s.Items, s.Foreign, all)...)
	// The namespace's objects are others' words as much as a file's: the
	// intent made of them is validated as every importer's is.
	checked, err := importer.NewCollector(importer.Options{}).Finish(res.Intent, "the namespace")
	if err != nil {
		return nil, err
	}
	checked.Warnings = res.Warnings
	return checked, nil
}

// foreignWarnings are the warnings for the others' objects import kernel
// leaves out; without all, not for the kernel's own.
func foreignWarnings(list []dg.Item, f *configurators.Foreign, all bool) []importer.Refusal {
	var out []importer.Refusal
	for _, it := range slices.Concat(list, f.AddrNeigh) {
		fo, ok := it.(*items.Foreign)
		if !ok || (!all && kernelOwn(fo)) {
			continue
		}
		out = append(out, kernelWarning(fo.Kind+" "+fo.Desc, "objects of others ("+fo.Kind+") are not imported yet", fo.Desc))
	}
	for _, c := range f.Chains {
		if c.BuiltIn && len(c.Rules) == 0 {
			continue
		}
		out = append(out, kernelWarning("iptables-chain "+c.Name(), "the others' iptables chains and rules are not imported yet", c.Name()))
	}
	return out
}

// kernelOwn reports whether a foreign object is one the kernel makes by
// itself: a route or address it adds (proto kernel), the local table's
// routes, what sits on lo (the default rules are never read back).
func kernelOwn(f *items.Foreign) bool {
	d := " " + f.Desc + " "
	for _, s := range []string{" proto kernel ", " table local ", " dev lo "} {
		if strings.Contains(d, s) {
			return true
		}
	}
	return false
}

func kernelWarning(key, why, object string) importer.Refusal {
	return importer.Refusal{Pos: importer.Position{File: kernelSource}, Key: key, Why: why, Object: object}
}
