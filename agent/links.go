package agent

import (
	"cmp"
	"context"
	"slices"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/linkwatch"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// LinkWatcher reports link changes in the target namespace
// (linkwatch.NewNetlink).
type LinkWatcher = linkwatch.Watcher

// LinkEvent says that links may have changed. The loop does not trust its
// details: after a burst it lists the links again (netlink is lossy), so an
// event only needs to say "look again", and which links, for the log.
type LinkEvent = linkwatch.Event

func (s *loopState) noteLinks(ev LinkEvent) {
	for _, n := range ev.Names {
		s.linkNames[n] = struct{}{}
	}
	s.linkResync = s.linkResync || ev.Resync
}

// refreshLinks lists the external links after a burst of link events and
// puts what changed into the current state, where the reconciler finds it:
// a link that went or lost its carrier withdraws what depends on it, and
// its return brings them back.
//
// A link replaced by another of the same name (deleted and created again
// within one burst: a new ifindex) took every kernel object on it along, so
// it is first taken out and reconciled without, then put back: whatever
// depends on it is created again instead of believed present.
func (a *Agent) refreshLinks(ctx context.Context) {
	s := a.st
	log := a.log.WithField("events", len(s.linkNames))
	if s.linkResync {
		log = log.WithField("resync", true)
	}
	named := s.ownedLinksNamed()
	owned := s.linkResync || len(named) > 0
	links, err := a.cfg.Kernel.ReadLinks(ctx)
	if err != nil {
		log.WithError(err).Warn("listing links; trying again")
		s.linkDeb.Touch()
		return
	}
	clear(s.linkNames)
	s.linkResync = false
	changes := diffLinks(s.current, links)
	if replaced := changes.replaced(); len(replaced) > 0 {
		for _, c := range replaced {
			s.current.Delete(items.LinkRef(c.name))
		}
		s.want(reasonLink)
		a.reconcile(ctx)
	}
	moved := map[string]bool{} // appeared, went or replaced
	for _, c := range changes {
		logLinkChange(log, c)
		c.apply(s.current)
		if c.old == nil || c.new == nil || c.old.Index != c.new.Index {
			moved[c.name] = true
		}
	}
	if len(changes) > 0 {
		s.want(reasonLink)
	}
	if owned {
		a.checkLinks(ctx, moved, named)
	}
}

// ownedLinksNamed returns the links the burst's events named that the
// agent owns (an interface item: one it created or configures), whose
// change (an MTU, a state, a master set by hand, the link deleted)
// checkLinks repairs at once. The events of other links cost nothing more
// than the listing.
func (s *loopState) ownedLinksNamed() []string {
	var out []string
	for n := range s.linkNames {
		ref := items.InterfaceRef(n)
		if s.intended.Contains(ref) || s.current.Contains(ref) {
			out = append(out, n)
		}
	}
	return out
}

// linkChange is the difference of one external link between the current
// state and the kernel.
type linkChange struct {
	name     string
	old, new *items.Link // nil: absent
}

type linkChanges []linkChange

func (cs linkChanges) replaced() []linkChange {
	var out []linkChange
	for _, c := range cs {
		if c.old != nil && c.new != nil && c.old.Index != c.new.Index {
			out = append(out, c)
		}
	}
	return out
}

// apply puts the change into g.
func (c linkChange) apply(g *dg.Graph) {
	if c.new == nil {
		g.Delete(items.LinkRef(c.name))
		return
	}
	g.Put(c.new)
}

// what describes the change for the log.
func (c linkChange) what() string {
	switch {
	case c.old == nil:
		return "appeared"
	case c.new == nil:
		return "gone"
	case c.old.Index != c.new.Index:
		return "replaced"
	case c.old.Carrier && !c.new.Carrier:
		return "lost carrier"
	case !c.old.Carrier && c.new.Carrier:
		return "carrier up"
	}
	return "changed"
}

func logLinkChange(log logrus.FieldLogger, c linkChange) {
	l := log.WithFields(logrus.Fields{"link": c.name, "change": c.what()})
	if c.new != nil {
		l = l.WithFields(logrus.Fields{"carrier": c.new.Carrier, "oper_up": c.new.OperUp, "admin_up": c.new.AdminUp})
	}
	l.Info("link changed")
}

// diffLinks compares the external links of g with links, in name order.
func diffLinks(g *dg.Graph, links []*items.Link) linkChanges {
	seen := make(map[string]bool, len(links))
	var out linkChanges
	for _, l := range links {
		seen[l.IfName] = true
		old, _ := currentLink(g, l.IfName)
		if old == nil || !old.Equal(l) {
			out = append(out, linkChange{name: l.IfName, old: old, new: l})
		}
	}
	for _, ref := range g.Refs() {
		if ref.Type != items.TypeLink || seen[ref.Name] {
			continue
		}
		old, _ := currentLink(g, ref.Name)
		out = append(out, linkChange{name: ref.Name, old: old})
	}
	slices.SortFunc(out, func(a, b linkChange) int { return cmp.Compare(a.name, b.name) })
	return out
}

func currentLink(g *dg.Graph, name string) (*items.Link, bool) {
	it, ok := g.Get(items.LinkRef(name))
	if !ok {
		return nil, false
	}
	l, ok := it.(*items.Link)
	return l, ok
}
