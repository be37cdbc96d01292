package importer

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/netagent/netagent/agent/intent"
)

// danglingRef is Validate's error for a name that no interface of the
// intent has, at an object of a list: "interfaces[3].master",
// "routes[0].dev".
var danglingRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(interfaces|routes|neighbors)\[(\d+)\]`) })

// LeaveOutDangling finishes what SkipUnsupported began: an object that
// names an interface the import left out (a port of a refused bond, a
// VLAN of a refused NIC, a route over it, ...) is left out too, with a
// warning at file naming what it depended on, until none is left. It
// does nothing unless something was left out. Validate says which
// references dangle ("interface %q is not defined"), so that the rule is
// the intent's own.
func (c *Collector) LeaveOutDangling(in *intent.Intent, file string) {
	if !c.opts.SkipUnsupported || len(c.warnings) == 0 {
		return
	}
	for range len(in.Interfaces) + len(in.Routes) + len(in.Neighbors) + 1 {
		drop := danglingObjects(in)
		if len(drop) == 0 {
			return
		}
		for _, d := range drop {
			c.warnings = append(c.warnings, Refusal{Pos: Position{File: file}, Key: d.what, Why: d.why, Object: d.object})
		}
		in.Interfaces = without(in.Interfaces, drop, "interfaces")
		in.Routes = without(in.Routes, drop, "routes")
		in.Neighbors = without(in.Neighbors, drop, "neighbors")
	}
}

// dangling is one object to leave out: its list and index there, and the
// warning's words.
type dangling struct {
	list              string
	index             int
	what, why, object string
}

// danglingObjects are the objects of in that name an undefined
// interface, each once.
func danglingObjects(in *intent.Intent) []dangling {
	var out []dangling
	seen := map[string]bool{}
	for _, fe := range intent.FieldErrors(in.Validate()) {
		var name string
		if _, err := fmt.Sscanf(fe.Msg, "interface %q is not defined", &name); err != nil {
			continue
		}
		m := danglingRef().FindStringSubmatch(fe.Path)
		if m == nil || seen[m[0]] {
			continue
		}
		seen[m[0]] = true
		i, _ := strconv.Atoi(m[2])
		d := dangling{list: m[1], index: i, why: fmt.Sprintf("names %s (at %s), which was left out", strconv.Quote(name), fe.Path)}
		switch m[1] {
		case "interfaces":
			d.what, d.object = "interface "+in.Interfaces[i].Name, in.Interfaces[i].Name
		case "routes":
			d.what, d.object = "route to "+in.Routes[i].To, in.Routes[i].To
		case "neighbors":
			d.what, d.object = "neighbour "+in.Neighbors[i].IP, in.Neighbors[i].IP
		}
		out = append(out, d)
	}
	return out
}

// without is list less the indexes drop names for it.
func without[T any](list []T, drop []dangling, name string) []T {
	var out []T
	for i, x := range list {
		if !slices.ContainsFunc(drop, func(d dangling) bool { return d.list == name && d.index == i }) {
			out = append(out, x)
		}
	}
	return out
}
