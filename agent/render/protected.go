package render

import (
	"slices"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
)

// metaProtected is the graph Meta key under which Render leaves the names
// of the interfaces the intent marks "protected".
const metaProtected = "render.protected"

// setProtected records the protected interfaces of in on g (see
// ProtectedLinks). Protection is not a kernel attribute: it stays out of
// the items, so that toggling it changes no item and writes nothing.
func setProtected(g *dg.Graph, in *intent.Intent) {
	var names []string
	for _, ifc := range in.Interfaces {
		if ifc.Protected {
			names = append(names, ifc.Name)
		}
	}
	if len(names) > 0 {
		slices.Sort(names)
		g.SetMeta(metaProtected, names)
	}
}

// ProtectedLinks returns the names of the interfaces that the intent
// rendered into g marks "protected": true, sorted; nil for none (or a
// graph Render did not make).
func ProtectedLinks(g *dg.Graph) []string {
	if g == nil {
		return nil
	}
	names, _ := g.Meta(metaProtected).([]string)
	return slices.Clone(names)
}
