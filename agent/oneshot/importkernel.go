package oneshot

import (
	"context"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/ethtool"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// kernelSource is the file name of import kernel's warnings.
const kernelSource = "kernel"

// maxKernelWarnings bounds import kernel's warnings: past it, one more
// says how many were left unsaid.
const maxKernelWarnings = 1000

// ImportKernel reads what the namespace holds and returns it as an
// intent: netagent's objects as show --json gives them, and the others'
// (another tool's, the administrator's) as configurators.ReadOthers reads
// them: links of every kind with their ports, addresses, routes of every
// table, rules, permanent neighbours, the sysctls that differ from the
// kernel's defaults, iptables chains (render.ToIntent turns the items
// into the intent). What no intent can express is left out with a
// warning naming it and why, never silently. Without all, the kernel's
// own objects (lo, link-local and loopback addresses, protocol kernel
// routes, the default rules, the neighbour cache) are left out without a
// word; with all, lo is in the intent (its state) and the others, which
// the kernel makes by itself and no intent can declare, are warnings.
//
// A physical NIC whose driver reports a permanent (burnt-in) MAC gets a
// match by it, so that the intent finds it under another name (see
// withMatches); a link without one (a veth, a container's NIC) is taken
// by its name alone. With k.Ethtool, each physical interface's ethtool
// settings are in too, at their current values (see ethtool.ReadCurrent:
// the kernel does not record which settings someone changed), and a
// virtual link's are named in a warning (withEthtool).
func ImportKernel(ctx context.Context, o *Options, k KernelImport) (*importer.Result, error) {
	s, err := Show(ctx, o, false)
	if err != nil {
		return nil, err
	}
	read, err := readOthers(o, k)
	if err != nil {
		return nil, err
	}
	res := &importer.Result{}
	others, warnings := withMatches(read.others, read.permMACs)
	s.Items, res.Warnings = withOthers(s.Items, others)
	res.Warnings = append(res.Warnings, warnings...)
	s.Items, warnings = withEthtool(s.Items, read.ethtool)
	res.Warnings = append(res.Warnings, warnings...)
	res.Intent = s.Intent()
	res.Warnings = append(res.Warnings, peerEndWarnings(s.Items, res.Intent)...)
	if !k.All {
		res.Intent.Interfaces = slices.DeleteFunc(res.Intent.Interfaces, func(i intent.Interface) bool {
			return i.Name == "lo" && i.Type == intent.LinkPhysical && len(i.Addresses) == 0
		})
	}
	// The namespace's objects are others' words as much as a file's: the
	// intent made of them is validated as every importer's is.
	checked, err := importer.NewCollector(importer.Options{}).Finish(res.Intent, "the namespace")
	if err != nil {
		return nil, err
	}
	checked.Warnings = res.Warnings
	return checked, nil
}

// KernelImport are the choices of ImportKernel.
type KernelImport struct {
	// All includes the kernel's own objects (--all).
	All bool
	// Ethtool includes each physical interface's ethtool settings, at
	// their current values (--ethtool; see withEthtool).
	Ethtool bool
}

// kernelRead is what readOthers reads.
type kernelRead struct {
	others   []dg.Item                   // configurators.ReadOthers
	permMACs map[string]net.HardwareAddr // link.PermanentMACs
	ethtool  []dg.Item                   // ethtool.ReadCurrent of every link, with KernelImport.Ethtool
}

// readOthers reads o's namespace for ImportKernel: others' objects
// (configurators.ReadOthers), the NICs' permanent MACs and, with
// k.Ethtool, every link's ethtool settings.
func readOthers(o *Options, k KernelImport) (*kernelRead, error) {
	rt, err := host.Open(o.Netns, o.StateDir, o.log())
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	r := &kernelRead{}
	r.others, err = configurators.ReadOthers(rt.Target(), rt.StateDir(), k.All)
	if err == nil {
		r.permMACs, err = link.PermanentMACs(rt.Target())
	}
	if err == nil && k.Ethtool {
		r.ethtool, err = ethtool.ReadCurrent(rt.Target(), slices.Sorted(maps.Keys(r.permMACs)))
	}
	if err != nil {
		return nil, &StepError{Step: "import kernel", Err: err}
	}
	return r, nil
}

// withMatches returns others with a match by its permanent MAC on each
// physical interface whose driver reports one (perm), so that the intent
// finds the NIC under another name too (a rename by udev, another
// kernel's naming): the interface's name is what netagent then names it.
// A permanent MAC that two links report (some virtual NICs, ports of one
// card) finds neither alone: those interfaces are kept by their name,
// with a warning. The loopback and the links without one (veth,
// container NICs) are kept by their name, without a word.
func withMatches(others []dg.Item, perm map[string]net.HardwareAddr) ([]dg.Item, []importer.Refusal) {
	holders := map[string][]string{}
	for name, mac := range perm {
		if len(mac) > 0 {
			holders[mac.String()] = append(holders[mac.String()], name)
		}
	}
	out := slices.Clone(others)
	var warnings []importer.Refusal
	for n, it := range out {
		i, ok := it.(*items.Interface)
		if !ok || i.Kind != items.KindPhysical || i.IfName == "lo" || i.Match != nil || len(perm[i.IfName]) == 0 {
			continue
		}
		mac := perm[i.IfName]
		m := &items.NICMatch{PermanentMAC: mac}
		why := m.Problem()
		if h := holders[mac.String()]; len(h) > 1 {
			slices.Sort(h)
			why = "links " + strings.Join(h, ", ") + " have it"
		}
		if why != "" {
			warnings = append(warnings, importer.Refusal{Pos: importer.Position{File: kernelSource}, Key: "interface " + i.IfName + " match",
				Why: "its permanent MAC " + mac.String() + " finds no NIC alone (" + why + "): taken by its name, which a rename loses", Object: i.IfName, Kept: true})
			continue
		}
		c := *i
		c.Match = m
		out[n] = &c
	}
	return out, warnings
}

// withEthtool returns list with the ethtool settings read (one Ethtool
// item per link) of each physical interface list has that has none of
// netagent's, and a warning for each other interface they were read for:
// a virtual link is made anew at boot, with its kind's defaults, and
// which of its settings someone changed is not known (the kernel records
// neither); its adoption would also recreate the settings' item.
func withEthtool(list, settings []dg.Item) ([]dg.Item, []importer.Refusal) {
	have := map[dg.ItemRef]dg.Item{}
	for _, it := range list {
		have[dg.Ref(it)] = it
	}
	var warnings []importer.Refusal
	for _, it := range settings {
		e, ok := it.(*items.Ethtool)
		if !ok || have[dg.Ref(e)] != nil {
			continue
		}
		switch i, _ := have[items.InterfaceRef(e.Interface)].(*items.Interface); {
		case i == nil || i.IfName == "lo":
		case i.Kind == items.KindPhysical:
			list = append(list, e)
		default:
			warnings = append(warnings, kernelWarning("ethtool "+e.Interface, "the ethtool settings of a "+string(i.Kind)+
				" are not imported: netagent makes it anew with its kind's defaults, and which of them someone changed is not known; write its ethtool section by hand", e.Interface))
		}
	}
	return list, warnings
}

// withOthers returns netagent's items (less the external links and
// foreign objects read-back describes them by) with the others' items
// that no item of netagent's has the identity of, and a warning for each
// Foreign of others (bounded).
func withOthers(own, others []dg.Item) ([]dg.Item, []importer.Refusal) {
	others = carriersAsPhysical(others, own)
	own = slices.DeleteFunc(own, func(it dg.Item) bool {
		_, link := it.(*items.Link)
		_, foreign := it.(*items.Foreign)
		return link || foreign
	})
	have := make(map[dg.ItemRef]bool, len(own))
	for _, it := range own {
		have[dg.Ref(it)] = true
	}
	var warnings []importer.Refusal
	for _, it := range others {
		if f, ok := it.(*items.Foreign); ok {
			warnings = append(warnings, kernelWarning(f.Kind+" "+f.Desc, f.Why, f.Desc))
			continue
		}
		if !have[dg.Ref(it)] {
			own = append(own, it)
			have[dg.Ref(it)] = true
		}
	}
	own, warnings = withoutOrphanSysctls(own, warnings)
	if n := len(warnings); n > maxKernelWarnings {
		warnings = append(warnings[:maxKernelWarnings], kernelWarning("more", strconv.Itoa(n-maxKernelWarnings)+" more objects left out, as above", ""))
	}
	return own, warnings
}

// carriersAsPhysical returns others with the links that netagent's intent
// has as physical (carriers: links not its own that its addresses,
// routes or ports are on, or physical interfaces of its own, own) as
// physical interfaces, and the veth peers of those too: links that are
// there, never made. The import keeps them so.
func carriersAsPhysical(others []dg.Item, own []dg.Item) []dg.Item {
	physical := carryingLinks(own)
	for _, it := range own {
		if i, ok := it.(*items.Interface); ok && i.Kind == items.KindPhysical {
			physical[i.IfName] = true
		}
	}
	for _, it := range others {
		if i, ok := it.(*items.Interface); ok && physical[items.LocalPeer(i)] {
			physical[i.IfName] = true
		}
	}
	for _, it := range others {
		if i, ok := it.(*items.Interface); ok && physical[i.IfName] && items.LocalPeer(i) != "" {
			physical[items.LocalPeer(i)] = true
		}
	}
	out := slices.Clone(others)
	for n, it := range out {
		if i, ok := it.(*items.Interface); ok && physical[i.IfName] && i.Kind != items.KindPhysical {
			out[n] = &items.Interface{IfName: i.IfName, Kind: items.KindPhysical, MTU: i.MTU, AdminUp: i.AdminUp, Alias: i.Alias}
		}
	}
	return out
}

// withoutOrphanSysctls leaves out, with a warning each, the sysctls of an
// interface that list does not describe (a link left out: its kind's
// own values, or settings of something not imported).
func withoutOrphanSysctls(list []dg.Item, warnings []importer.Refusal) ([]dg.Item, []importer.Refusal) {
	ifaces := map[string]bool{}
	for _, it := range list {
		if i, ok := it.(*items.Interface); ok {
			ifaces[i.IfName] = true
		}
	}
	list = slices.DeleteFunc(list, func(it dg.Item) bool {
		s, ok := it.(*items.Sysctl)
		if !ok {
			return false
		}
		name, perIf := items.SysctlInterface(s.Key)
		if !perIf || ifaces[name] {
			return false
		}
		warnings = append(warnings, kernelWarning("sysctl "+s.Key, "a sysctl of "+name+", which is not imported", s.Key))
		return true
	})
	return list, warnings
}

// peerEndWarnings warns about the veth ends the intent leaves out (the
// other end declares the pair and creates them) whose settings the
// created end will not have: an intent declares one end of a pair, and
// netagent creates the other down, with the declared end's MTU and no
// alias. (Its MAC is the kernel's random one either way.)
func peerEndWarnings(list []dg.Item, in *intent.Intent) []importer.Refusal {
	declared := map[string]*intent.Interface{}
	for i := range in.Interfaces {
		declared[in.Interfaces[i].Name] = &in.Interfaces[i]
	}
	var out []importer.Refusal
	for _, it := range list {
		end, ok := it.(*items.Interface)
		if !ok || declared[end.IfName] != nil {
			continue
		}
		kept := declared[items.LocalPeer(end)]
		if kept == nil || kept.Veth == nil || kept.Veth.Peer != end.IfName {
			continue
		}
		var lost []string
		if end.AdminUp {
			lost = append(lost, "state up")
		}
		if end.MTU != 0 && kept.MTU != 0 && end.MTU != kept.MTU {
			lost = append(lost, "mtu "+strconv.Itoa(end.MTU))
		}
		if end.Alias != "" {
			lost = append(lost, "alias "+strconv.Quote(end.Alias))
		}
		if len(lost) > 0 {
			out = append(out, kernelWarning("interface "+end.IfName, "the peer of veth "+kept.Name+" is declared by it and created down, with its MTU and no alias: its "+strings.Join(lost, ", ")+" cannot be declared", end.IfName))
		}
	}
	return out
}

func kernelWarning(key, why, object string) importer.Refusal {
	return importer.Refusal{Pos: importer.Position{File: kernelSource}, Key: key, Why: why, Object: object}
}
