package host

import (
	"fmt"
	"slices"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Protection names the links that no apply may disrupt: delete or
// recreate, set down, take out of their bond, bridge or vrf, strip of
// their addresses or neighbours, or withdraw the routes through.
//
// The two sources differ in one way only, what a removal from the intent
// means:
//
//   - Flags (`--protect LINK`, the host operator's word, independent of
//     any intent): an intent that would remove the link or anything on it
//     is refused, like any other disruption: it most likely forgot the
//     uplink.
//   - Intent (`"protected": true` on an interface, the intent author's
//     word, remembered in the state directory once applied): removing the
//     link, or its addresses, routes, neighbours or port, from the intent
//     leaves them in the kernel as orphans, kept as they are and
//     reported; a later intent that declares them again adopts them.
//
// Either way, a disruption the intent still asks for (a recreate, the link
// set down, a route moved off the link) is refused.
type Protection struct {
	Flags  []string
	Intent []string
}

// Empty reports whether nothing is protected.
func (p Protection) Empty() bool { return len(p.Flags) == 0 && len(p.Intent) == 0 }

// Refusal is one planned operation that would disrupt a protected link.
type Refusal struct {
	Ref dg.ItemRef
	Op  reconciler.Operation
	// Link is the protected link the operation would disrupt.
	Link string
	// Why says what would happen, naming the object and the link:
	// "route 0.0.0.0/0 via 192.0.2.1 dev eth0 would be withdrawn: eth0 is
	// protected".
	Why string
}

// String returns Why.
func (r Refusal) String() string { return r.Why }

// Orphan is an object no longer intended that is kept in the kernel as it
// is, because deleting it would disrupt a link the intent protected.
type Orphan struct {
	Ref  dg.ItemRef
	Item dg.Item
	Link string
	// Reason: "no longer in the intent; deleting it would withdraw ...:
	// eth0 is protected".
	Reason string
}

// String renders the orphan as "route/x: orphaned: reason".
func (o Orphan) String() string { return fmt.Sprintf("%s: orphaned: %s", o.Ref, o.Reason) }

// Judge looks at each operation of a plan (a dry run from current to
// intended: current is the state before it) and sorts out those that
// would disrupt a protected link: a plain delete of an object that a link
// protected by the intent carries becomes an orphan (keep it: the caller
// puts it back into the intended graph); every other disruption is
// refused. It is pure: it only reads the graphs.
func Judge(ops reconciler.OperationLog, current, intended *dg.Graph, p Protection) ([]Orphan, []Refusal) {
	if p.Empty() {
		return nil, nil
	}
	gd := newGuards(current, intended, p)
	var orphans []Orphan
	var refused []Refusal
	seen := map[dg.ItemRef]bool{}
	preds := PredictOps(ops, current)
	for _, e := range ops {
		if ifc, ok := e.Item.(*items.Interface); ok && (e.Op == reconciler.OpDelete || e.Recreate) {
			gd.removed[ifc.IfName] = true // judged by its own operation
		}
	}
	for i, e := range ops {
		if seen[e.Ref] {
			continue // a recreate's create, or a follow-up pass
		}
		var old dg.Item
		if current != nil {
			old, _ = current.Get(e.Ref)
		}
		d, ok := gd.disruption(e, old)
		if !ok {
			d, ok = gd.carrierLoss(e, preds[i])
		}
		if !ok {
			continue
		}
		seen[e.Ref] = true
		if e.Op == reconciler.OpDelete && !e.Recreate && gd.orphans(d.link) {
			orphans = append(orphans, Orphan{Ref: e.Ref, Item: e.Item, Link: d.link,
				Reason: "no longer in the intent; deleting it " + d.would + ": " + d.link + " is protected"})
			continue
		}
		refused = append(refused, Refusal{Ref: e.Ref, Op: e.Op, Link: d.link,
			Why: fmt.Sprintf("%s %s: %s is protected%s", d.what, d.verb(e), d.link, d.via)})
	}
	return orphans, refused
}

// guards knows which link names are protected, by which source, and which
// links are the lowers of a protected one (a VLAN's parent: taking it
// down takes the VLAN down).
type guards struct {
	flag, intent map[string]bool
	// lowerOf maps a lower link to the protected link above it.
	lowerOf map[string]string
	// removed are the interfaces the plan deletes or recreates.
	removed map[string]bool
	cur, in *dg.Graph
}

func newGuards(current, intended *dg.Graph, p Protection) *guards {
	g := &guards{flag: set(p.Flags), intent: set(p.Intent), lowerOf: map[string]string{}, removed: map[string]bool{}, cur: current, in: intended}
	for _, name := range slices.Concat(p.Flags, p.Intent) {
		g.addLowers(name, name, map[string]bool{})
	}
	return g
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// addLowers records the interfaces that link (protected as top) depends
// on, in either graph, recursively.
func (g *guards) addLowers(link, top string, seen map[string]bool) {
	if seen[link] {
		return
	}
	seen[link] = true
	for _, gr := range []*dg.Graph{g.in, g.cur} {
		if gr == nil {
			continue
		}
		it, ok := gr.Get(items.InterfaceRef(link))
		if !ok {
			continue
		}
		for _, dep := range it.Dependencies() {
			if dep.RequiredItem.Type != items.TypeInterface || dep.RequiredItem.Name == link {
				continue
			}
			lower := dep.RequiredItem.Name
			if _, done := g.lowerOf[lower]; !done && !g.protected(lower) {
				g.lowerOf[lower] = top
			}
			g.addLowers(lower, top, seen)
		}
	}
}

func (g *guards) protected(name string) bool { return g.flag[name] || g.intent[name] }

// orphans reports whether removals from the intent of what link carries
// are kept as orphans (the intent protects it) rather than refused.
func (g *guards) orphans(link string) bool { return g.intent[link] && !g.flag[link] }

// disrupted is what an operation does to a protected link.
type disrupted struct {
	link  string // the protected link
	what  string // the object: "route 0.0.0.0/0 via 192.0.2.1 dev eth0"
	would string // for an orphan's reason: "would withdraw route ..."
	// modify is the verb phrase of a modify ("would be set down"); "" when
	// only a delete or recreate disrupts.
	modify string
	via    string // ", taking eth0.100 down" for a lower
}

// verb says what the operation would do to the object.
func (d disrupted) verb(e reconciler.OpLogEntry) string {
	switch {
	case e.Recreate:
		return "would be recreated (deleted and created again)"
	case e.Op == reconciler.OpDelete:
		return deleteVerb(e.Item)
	}
	return d.modify
}

func deleteVerb(it dg.Item) string {
	switch it := it.(type) {
	case *items.Route:
		return "would be withdrawn"
	case *items.Port:
		return "would leave " + it.Master
	case *items.Interface:
		if it.Kind == items.KindPhysical {
			return "would get back the settings it had before netagent"
		}
		return "would be deleted"
	}
	return "would be removed"
}

// disruption says whether operation e, on an item whose value before it is
// old (nil when it does not exist), disrupts a protected link, and how.
func (g *guards) disruption(e reconciler.OpLogEntry, old dg.Item) (disrupted, bool) {
	removes := e.Op == reconciler.OpDelete || e.Recreate
	switch it := e.Item.(type) {
	case *items.Interface:
		return g.ofInterface(it, old, removes)
	case *items.Port:
		link, ok := g.guarded(it.IfName)
		if !ok {
			return disrupted{}, false
		}
		d := disrupted{link: link.name, what: "port " + it.IfName + " of " + it.Master, via: link.via}
		d.would = "would take " + it.IfName + " out of " + it.Master
		if o, isPort := old.(*items.Port); isPort && e.Op == reconciler.OpModify && o.Master != it.Master {
			d.what = "port " + it.IfName + " of " + o.Master
			d.modify = "would move to " + it.Master
			return d, true
		}
		return d, removes
	case *items.Address:
		link, ok := g.guarded(it.Dev)
		d := disrupted{link: link.name, what: "address " + it.Prefix.String() + " on " + it.Dev, via: link.via}
		d.would = "would remove address " + it.Prefix.String() + " from " + it.Dev
		return d, ok && removes
	case *items.Neighbor:
		link, ok := g.guarded(it.Dev)
		d := disrupted{link: link.name, what: "neighbour " + it.IP.String() + " on " + it.Dev, via: link.via}
		d.would = "would remove neighbour " + it.IP.String() + " from " + it.Dev
		return d, ok && removes
	case *items.Route:
		return g.ofRoute(it, old, removes)
	}
	return disrupted{}, false
}

// carrierLoss says whether operation e, predicted as p, certainly takes
// down a protected link other than its own: a port the carrier of its
// master (the last port leaves, see link.PredictPort), an interface a link
// that goes down with it (a veth's peer: see link.Predict).
func (g *guards) carrierLoss(e reconciler.OpLogEntry, p disrupt.Prediction) (disrupted, bool) {
	if !p.Certain {
		return disrupted{}, false
	}
	if ifc, ok := e.Item.(*items.Interface); ok {
		return g.downWith(ifc, p)
	}
	port, ok := e.Item.(*items.Port)
	if !ok {
		return disrupted{}, false
	}
	for _, l := range p.LinksDown {
		link, ok := g.guarded(l)
		if l == port.IfName || !ok {
			continue
		}
		what := "port " + port.IfName + " of " + l
		d := disrupted{link: link.name, what: what, via: link.via,
			would:  "would take " + port.IfName + ", the last port of " + l + ", out of it (" + l + " loses its carrier)",
			modify: "would move to " + port.Master + ", the last port to leave " + l + " (it loses its carrier)"}
		if e.Op == reconciler.OpDelete {
			d.what += ", its last port,"
		}
		return d, true
	}
	return disrupted{}, false
}

// downWith: an interface operation (predicted as p) that takes a
// protected link down with it.
func (g *guards) downWith(ifc *items.Interface, p disrupt.Prediction) (disrupted, bool) {
	for _, l := range p.LinksDown {
		link, ok := g.guarded(l)
		if l == ifc.IfName || !ok || g.removed[l] {
			continue
		}
		return disrupted{link: link.name, what: "interface " + ifc.IfName, via: " (" + l + " goes down with " + ifc.IfName + ")",
			would: "would take " + l + " down with " + ifc.IfName, modify: "would be set down"}, true
	}
	return disrupted{}, false
}

func (g *guards) ofInterface(it *items.Interface, old dg.Item, removes bool) (disrupted, bool) {
	link, ok := g.guarded(it.IfName)
	if !ok {
		return disrupted{}, false
	}
	d := disrupted{link: link.name, what: "interface " + it.IfName, via: link.via}
	d.would = "would delete interface " + it.IfName
	if it.Kind == items.KindPhysical {
		d.would = "would give " + it.IfName + " back the settings it had before netagent"
	}
	if removes {
		return d, true
	}
	if o, isIf := old.(*items.Interface); isIf && o.AdminUp && !it.AdminUp {
		d.modify = "would be set down"
		return d, true
	}
	return disrupted{}, false
}

// ofRoute: a route is through a link when its device or a nexthop's is
// the link, or when its gateway is reached through an address on the link
// (GwAddress); withdrawing it, or moving it (or one of its nexthops) off
// the link, disrupts the link.
func (g *guards) ofRoute(r *items.Route, old dg.Item, removes bool) (disrupted, bool) {
	if removes {
		for _, dev := range g.routeDevs(r) {
			if link, ok := g.guarded(dev); ok {
				d := disrupted{link: link.name, what: routeText(r), via: link.via}
				d.would = "would withdraw " + routeText(r)
				return d, true
			}
		}
		return disrupted{}, false
	}
	o, isRoute := old.(*items.Route)
	if !isRoute {
		return disrupted{}, false
	}
	now := g.routeDevs(r)
	for _, dev := range g.routeDevs(o) {
		link, ok := g.guarded(dev)
		if ok && !slices.Contains(now, dev) {
			d := disrupted{link: link.name, what: routeText(o), via: link.via}
			d.modify = "would be moved off " + dev + " (to " + routeText(r) + ")"
			return d, true
		}
	}
	return disrupted{}, false
}

// routeDevs lists the links a route goes through.
func (g *guards) routeDevs(r *items.Route) []string {
	var devs []string
	add := func(dev string) {
		if dev != "" && !slices.Contains(devs, dev) {
			devs = append(devs, dev)
		}
	}
	add(r.Dev)
	for _, n := range r.Nexthops {
		add(n.Dev)
	}
	add(r.CarrierLink)
	if r.GwAddress != "" {
		ref := dg.ItemRef{Type: items.TypeAddress, Name: r.GwAddress}
		for _, gr := range []*dg.Graph{g.in, g.cur} {
			if gr == nil {
				continue
			}
			if a, ok := gr.Get(ref); ok {
				add(a.(*items.Address).Dev)
				break
			}
		}
	}
	return devs
}

// routeText describes a route as `ip route` does, without what does not
// say where it goes: "route 0.0.0.0/0 via 192.0.2.1 dev eth0".
func routeText(r *items.Route) string {
	var b strings.Builder
	b.WriteString("route ")
	if r.Kind != items.RouteUnicast {
		b.WriteString(r.Kind.String() + " ")
	}
	b.WriteString(r.Dst.String())
	if t := r.TableID(); t != items.TableMain {
		fmt.Fprintf(&b, " table %d", t)
	}
	if r.Gw.IsValid() {
		b.WriteString(" via " + r.Gw.String())
	}
	if r.Dev != "" {
		b.WriteString(" dev " + r.Dev)
	}
	for _, n := range r.Nexthops {
		b.WriteString(" nexthop")
		if n.Gw.IsValid() {
			b.WriteString(" via " + n.Gw.String())
		}
		if n.Dev != "" {
			b.WriteString(" dev " + n.Dev)
		}
	}
	return b.String()
}

// guardedBy is the protected link a name falls under: itself, or the link
// above it when it is a lower of one.
type guardedBy struct{ name, via string }

func (g *guards) guarded(name string) (guardedBy, bool) {
	if name == "" {
		return guardedBy{}, false
	}
	if g.protected(name) {
		return guardedBy{name: name}, true
	}
	if top, ok := g.lowerOf[name]; ok {
		return guardedBy{name: top, via: fmt.Sprintf(" (%s is below %s)", name, top)}, true
	}
	return guardedBy{}, false
}
