package render

import (
	"slices"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
)

// ProtectedLinks returns the names of the interfaces that the intent files
// mark "protected": true, sorted, once each; nil for none. Protection is
// not a kernel attribute: it stays out of the items, so that toggling it
// changes no item and writes nothing, and goes along beside the graph.
func ProtectedLinks(files map[string]*intent.Intent) []string {
	var names []string
	for _, in := range files {
		if in == nil {
			continue
		}
		for _, ifc := range in.Interfaces {
			if ifc.Protected {
				names = append(names, ifc.Name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// LoadProtected is Load that also returns ProtectedLinks of the files.
func LoadProtected(files map[string][]byte) (*dg.Graph, []string, error) {
	parsed, err := ParseFiles(files)
	if err != nil {
		return nil, nil, err
	}
	g, err := RenderFiles(parsed)
	if err != nil {
		return nil, nil, err
	}
	return g, ProtectedLinks(parsed), nil
}
