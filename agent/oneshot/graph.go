package oneshot

import (
	"context"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// Graph is `netagent graph`: DOT for `dot -Tsvg`. Without current, the
// intended graph of the files at paths, each file's subgraph labelled
// with its name; with current, the state read back from the kernel, or,
// with files, current and intended together coloured by what an apply
// would change, the items a plan predicts to fail marked
// (depgraph.DiffDOTFailing). It changes nothing.
func Graph(ctx context.Context, o *Options, paths []string, current bool) (string, error) {
	var intended *dg.Graph
	if len(paths) > 0 {
		v, err := Validate(paths, o.Sized)
		if err != nil {
			return "", err
		}
		intended = v.Graph
		describeFiles(intended)
	}
	if !current {
		return dg.DOT(intended), nil
	}
	rt, err := host.Open(o.Netns, o.StateDir, o.log())
	if err != nil {
		return "", err
	}
	defer rt.Close()
	cur, err := readCurrent(rt, intended)
	if err != nil {
		return "", &StepError{Step: "graph", Err: err}
	}
	if intended == nil {
		return dg.DOT(cur), nil
	}
	res, err := rt.Plan(ctx, intended)
	if err != nil {
		return "", &StepError{Step: "graph", Err: err}
	}
	return dg.DiffDOTFailing(cur, intended, predictedFailures(res)), nil
}

// predictedFailures are the items a plan predicts to fail, with why.
func predictedFailures(res *host.PlanResult) map[dg.ItemRef]string {
	out := make(map[dg.ItemRef]string)
	for _, p := range res.Problems {
		if !p.Blocked {
			out[p.Ref] = p.Reason
		}
	}
	return out
}

// describeFiles labels each file's subgraph with the file's name (the
// subgraph's own name has each "/" escaped: see render.SubgraphName), so
// that a DOT cluster reads "/etc/netagent/lan.json".
func describeFiles(intended *dg.Graph) {
	for _, sub := range intended.SubGraphs() {
		sub.SetDescription(render.FileOfSubgraph(sub.Name()))
	}
}

// readCurrent reads the kernel back for graph --current. Without an intent
// (intended nil), a link netagent does not own but that its objects sit on
// (the uplink an address or a route is on, a port of its bridge) is read
// back as the physical interface it is to them, as an intent would declare
// it, so that it is drawn present, under its link, rather than missing.
func readCurrent(rt *host.Runtime, intended *dg.Graph) (*dg.Graph, error) {
	cur, err := rt.ReadCurrent(intended)
	if err != nil || intended != nil {
		return cur, err
	}
	hint := dg.New("physical")
	for _, ref := range cur.Refs() {
		for _, d := range cur.Dependencies(ref) {
			req := d.RequiredItem
			if req.Type == items.TypeInterface && !cur.Contains(req) && cur.Contains(items.LinkRef(req.Name)) {
				hint.Put(&items.Interface{IfName: req.Name, Kind: items.KindPhysical})
			}
		}
	}
	if hint.Len() == 0 {
		return cur, nil
	}
	return rt.ReadCurrent(hint)
}
