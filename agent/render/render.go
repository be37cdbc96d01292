package render

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// GraphName is the name of the graphs Render returns.
const GraphName = "intended"

// Render validates the intent as a whole and turns it into the intended
// graph: one item per kernel object, with its dependencies. It returns a
// nil graph and every problem (as *intent.FieldError values, see
// intent.FieldErrors) when the intent is invalid or cannot be rendered.
//
// Objects whose Origin names a file (a merged intent, see RenderFiles) go
// into the subgraph SubgraphName(file); the others into the root.
//
// Render fills the intent's derived fields (intent.Validate does) and
// changes nothing else. It touches no kernel and no file.
func Render(in *intent.Intent) (*dg.Graph, error) { return RenderWith(in, Facts{}) }

// RenderWith is Render with the facts of the host and the network the
// intent needs (the DHCP leases held, the kernel's IPv6 forwarding, the
// resolv.conf path: Facts): still a pure function of its arguments.
func RenderWith(in *intent.Intent, facts Facts) (*dg.Graph, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	b, err := build(in, facts, false)
	if err != nil {
		return nil, err
	}
	return b.g, nil
}

// build renders the validated in; with drift, it also records the drift
// policy of every item (builder.drifts).
func build(in *intent.Intent, facts Facts, drift bool) (*builder, error) {
	b := newBuilder(in, facts)
	b.tracking = drift
	for _, s := range sections {
		s.render(b)
	}
	b.leaseItems() // dhcp4.go: after every section, whose objects win
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	return b, nil
}

// RenderFiles merges intent files, keyed by file name (intent.Merge), and
// renders the result (Render), with each object in the subgraph named
// after the file that defines it (SubgraphName). Items that exist only
// because of another object (a port, an address) go with that object. An
// object defined by two files is reported on both, and then nothing is
// rendered: an error means a nil graph.
func RenderFiles(files map[string]*intent.Intent) (*dg.Graph, error) {
	return RenderFilesWith(files, Facts{})
}

// RenderFilesWith is RenderFiles with facts (see RenderWith).
func RenderFilesWith(files map[string]*intent.Intent, facts Facts) (*dg.Graph, error) {
	merged, err := intent.Merge(files)
	if err != nil {
		return nil, err
	}
	return RenderWith(merged, facts)
}

// SubgraphName is the name of the subgraph that holds the objects of an
// intent file: the file name, with each "/" written as "%2F" so that a
// path stays one level of subgraph (depgraph reads "/" as a path
// separator). FileOfSubgraph is its inverse.
func SubgraphName(file string) string { return strings.ReplaceAll(file, "/", "%2F") }

// FileOfSubgraph returns the file whose objects the subgraph named name
// holds (see SubgraphName).
func FileOfSubgraph(name string) string { return strings.ReplaceAll(name, "%2F", "/") }

// builder collects the items and problems of one Render.
type builder struct {
	in    *intent.Intent
	facts Facts
	idx   *index
	g     *dg.Graph
	errs  []error

	// subs holds the subgraph of each file put into, so that 100k routes
	// of one file do not each look it up again (SubgraphName, the path).
	subs map[string]*dg.Graph
	// lastGw caches the last gateway parsed (routes share a few), and
	// lastHop the last gateway's hop (builder.gatewayHop).
	lastGw     string
	lastGwAddr netip.Addr
	lastHop    hopMemo

	// tracking: drifts records the drift policy (other than repair) of
	// every item put, that of the object being rendered (drift).
	tracking bool
	drift    intent.DriftPolicy
	drifts   DriftPolicies
}

func newBuilder(in *intent.Intent, facts Facts) *builder {
	g := dg.New(GraphName)
	// Room for about as many items as objects (a route, a rule, a
	// neighbour: one each; an interface: a few), so that the graph's index
	// does not grow step by step with 100k routes.
	g.Reserve(len(in.Routes) + len(in.Rules) + len(in.Neighbors) + 4*len(in.Interfaces))
	return &builder{in: in, facts: facts, idx: newIndex(in, facts), g: g, subs: map[string]*dg.Graph{"": g}}
}

// validator is what every item type of package items implements.
type validator interface {
	dg.Item
	Validate() error
}

// put adds item to the subgraph of the file at names, after checking it
// with its Validate method and that no other object rendered to it.
func (b *builder) put(item validator, at intent.Origin) {
	b.putFrom(item, at.File, func() intent.Origin { return at })
}

// putObject is put for the item of element i of the list kind, whose
// Origin is o: the object's path is made only for a problem.
func (b *builder) putObject(item validator, o intent.Origin, kind string, i int) {
	b.putFrom(item, b.in.FileOf(o), func() intent.Origin { return b.in.Locate(o, kind, i) })
}

// putFrom is put with the object's origin made by at, for a problem.
func (b *builder) putFrom(item validator, file string, at func() intent.Origin) {
	if err := item.Validate(); err != nil {
		b.fail(at(), "%v", err)
		return
	}
	b.putChecked(item, file, at)
}

// putChecked is putFrom for an item checked already.
func (b *builder) putChecked(item dg.Item, file string, at func() intent.Origin) {
	ref := dg.Ref(item)
	n := b.g.NodeFor(ref) // the node the item goes into: no second lookup
	if n.Present() {
		b.fail(at(), "renders to %s, which another object of the intent already is", ref)
		return
	}
	g, ok := b.subs[file]
	if !ok {
		g = b.g.EditSubGraph(SubgraphName(file))
		b.subs[file] = g
	}
	g.PutAt(n, item, dg.StateData{State: dg.StateCreated})
	if b.tracking && b.drift != intent.DriftRepair {
		if b.drifts == nil {
			b.drifts = DriftPolicies{}
		}
		b.drifts[ref] = b.drift
	}
}

// object starts the items of an object whose own "drift" is own and whose
// Origin is o: they take its policy (intent.DriftOf).
func (b *builder) object(own intent.DriftPolicy, o intent.Origin) {
	if b.tracking {
		b.drift = b.in.DriftOf(own, o)
	}
}

// fail records a problem at o.
func (b *builder) fail(o intent.Origin, format string, args ...any) {
	b.errs = append(b.errs, &intent.FieldError{File: o.File, Path: o.Path, Msg: fmt.Sprintf(format, args...)})
}

// field returns the origin of member name of o.
func field(o intent.Origin, name string) intent.Origin {
	return intent.Origin{File: o.File, Path: o.Path + "." + name}
}

// element returns the origin of element i of o.
func element(o intent.Origin, i int) intent.Origin {
	return intent.Origin{File: o.File, Path: fmt.Sprintf("%s[%d]", o.Path, i)}
}

// deviceRef checks that dev, the device of an object at o, has an
// interface item of its own, and returns that item's ref. A veth peer has
// none (it is part of its veth's item), so nothing can name it as a device.
func (b *builder) deviceRef(o intent.Origin, dev string) (dg.ItemRef, bool) {
	if _, ok := b.idx.ifaces[dev]; ok {
		return items.InterfaceRef(dev), true
	}
	if veth, ok := b.idx.peers[dev]; ok {
		b.fail(o, "%q is the peer of veth %q, which netagent cannot use as a device yet: "+
			"declare the pair from the other end, or use %q", dev, veth.Name, veth.Name)
		return dg.ItemRef{}, false
	}
	b.fail(o, "interface %q is not defined", dev)
	return dg.ItemRef{}, false
}
