package host

import (
	"fmt"
	"reflect"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/configurators/dhcp"
	"github.com/netagent/netagent/configurators/dhcp6"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/killpoint"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/reconciler"
)

// Runtime is what it takes to act on one target namespace: a handle on the
// namespace, its state directory, the configurators of every item type and
// a logger. It keeps no state between calls: every call reads the kernel
// back. A Runtime is not safe for concurrent use.
type Runtime struct {
	target *netnsx.Target // nil over fakes (OpenFake)
	// ns builds the configurators and reads the kernel (or the fakes).
	ns       namespace
	stateDir string
	reg      reconciler.Registry
	log      logrus.FieldLogger
	// adopt: the configurators take over what others made at the places
	// of intended items (Options.Adopt, SetAdopt).
	adopt bool
	// before journals each wave's before-images while a trial runs (see
	// BeginTrial); nil otherwise.
	before func([]reconciler.PlannedOp) error
	// journal is the running trial's journal, which the current state of
	// each reconcile goes to; nil otherwise.
	journal *Journal
	// observe, when set, also gets every operation (ObserveOps).
	observe func(reconciler.OpLogEntry)
	// dhcp acquires the DHCPv4 leases; leases holds them (Leases).
	dhcp   *dhcp.Configurator
	leases *dhcp.Leases
	// dhcp6 acquires the DHCPv6 leases; leases6 holds them (Leases6).
	dhcp6   *dhcp6.Configurator
	leases6 *dhcp6.Leases
}

// Open opens the named network namespace ("" for the caller's own),
// creates the state directory if needed and registers the configurators.
// Programs that some items need and that are missing (iptables) are not
// warned of here: an intent without firewall chains needs none, and the
// chains of one that has them fail on their own, naming the program
// (firewall.ErrNoTools); read-back skips what it cannot read. Close
// releases the namespace handle.
func Open(netns, stateDir string, log logrus.FieldLogger) (*Runtime, error) {
	return OpenWith(netns, stateDir, log, Options{})
}

// OpenWith is Open with opts.
func OpenWith(netns, stateDir string, log logrus.FieldLogger, opts Options) (*Runtime, error) {
	if stateDir == "" {
		return nil, fmt.Errorf("opening namespace %q: no state directory", netns)
	}
	t, err := netnsx.Open(netns) // before the state directory is made for it
	if err != nil {
		return nil, err
	}
	if err := statefile.PrepareDir(stateDir); err != nil {
		t.Close()
		return nil, err
	}
	leases := &dhcp.Leases{}
	dc := &dhcp.Configurator{Client: &dhcp.Client{X: &dhcp.NetnsExchanger{Target: t}}, Leases: leases, StateDir: stateDir, Log: log,
		Carrier: dhcp.CarrierIn(t)}
	leases6 := &dhcp6.Leases{}
	dc6 := &dhcp6.Configurator{Client: &dhcp6.Client{X: &dhcp6.NetnsExchanger{Target: t, Retry: lease6Tries}},
		Leases: leases6, StateDir: stateDir, Log: log, Carrier: dhcp.CarrierIn(t)}
	r := &Runtime{target: t, ns: netnsNamespace{t}, stateDir: stateDir, log: log, dhcp: dc, leases: leases, dhcp6: dc6, leases6: leases6}
	if err := r.SetAdopt(opts.Adopt); err != nil {
		t.Close()
		return nil, fmt.Errorf("namespace %q: %w", netns, err)
	}
	return r, nil
}

// lease6Tries is how many times the DHCPv6 client sends each SOLICIT
// (waiting 2 s, then 4 s, then 8 s: nclient6 doubles the wait) before the
// lease item fails: a one-shot apply with no server answering reports it
// after about 14 s, and the daemon retries the item with its backoff.
const lease6Tries = 3

// Leases6 returns the DHCPv6 leases held: acquired by a server since the
// Runtime opened, or kept (the daemon seeds it with the kept leases, renews
// them and lets them go through it).
func (r *Runtime) Leases6() *dhcp6.Leases { return r.leases6 }

// DHCP6Client returns the DHCPv6 client of the namespace (for the
// daemon's renewals).
func (r *Runtime) DHCP6Client() *dhcp6.Client { return r.dhcp6.Client }

// Leases returns the DHCPv4 leases held: acquired or confirmed by a
// server since the Runtime opened (the daemon renews them and lets them go
// through it too).
func (r *Runtime) Leases() *dhcp.Leases { return r.leases }

// DHCPClient returns the DHCPv4 client of the namespace (for the daemon's
// renewals).
func (r *Runtime) DHCPClient() *dhcp.Client { return r.dhcp.Client }

// SetAcquireTimeout bounds each DISCOVER (the one-shot apply's --wait);
// 0: until the operation is canceled.
func (r *Runtime) SetAcquireTimeout(d time.Duration) { r.dhcp.AcquireTimeout = d }

// Close releases the namespace handle.
func (r *Runtime) Close() {
	if r.target != nil {
		r.target.Close()
	}
}

// Target returns the namespace handle.
func (r *Runtime) Target() *netnsx.Target { return r.target }

// Log returns the Runtime's logger.
func (r *Runtime) Log() logrus.FieldLogger { return r.log }

// StateDir returns the state directory.
func (r *Runtime) StateDir() string { return r.stateDir }

// Reconciler returns a reconciler over the Runtime's configurators that
// logs every kernel operation (see LogOp), with opts (WithRecords: the
// daemon keeps its records next to its current-state graph).
func (r *Runtime) Reconciler(opts ...reconciler.Option) *reconciler.Reconciler {
	hook := LogOp(r.log)
	if killpoint.Armed() {
		log := hook
		var batch time.Time
		hook = func(e reconciler.OpLogEntry) {
			log(e)
			if !e.Start.Equal(batch) { // the entries of one batch share their start
				batch = e.Start
				killPoint()
			}
		}
	}
	if obs := r.observe; obs != nil {
		inner := hook
		hook = func(e reconciler.OpLogEntry) { inner(e); obs(e) }
	}
	base := []reconciler.Option{reconciler.WithOpHook(hook)}
	if r.before != nil {
		base = append(base, reconciler.WithBeforeChange(r.before))
	}
	return reconciler.New(r.reg, append(base, opts...)...)
}

// ReadCurrent reads the kernel back into a current-state graph: the
// external links and every object netagent owns. intended (may be nil) is
// the hint that makes read-back spell "leave as is" fields as the intent
// does; an item that intended holds goes into the same subgraph as there,
// the others into the root.
func (r *Runtime) ReadCurrent(intended *dg.Graph) (*dg.Graph, error) {
	cur, _, err := r.readCurrent(intended)
	return cur, err
}

// readCurrent is ReadCurrent also returning the nodes of the items read
// back, in the order read (see currentGraph).
func (r *Runtime) readCurrent(intended *dg.Graph) (*dg.Graph, []*dg.Node, error) {
	list, err := r.readItems(intended)
	if err != nil {
		return nil, nil, err
	}
	cur, nodes := currentGraph(list, intended)
	return cur, nodes, nil
}

// readItems reads the kernel back as a list of items, in the order read
// (see ReadCurrent).
func (r *Runtime) readItems(intended *dg.Graph) ([]dg.Item, error) {
	list, err := r.ns.ReadItems(r.stateDir, intended)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	list = append(list, dhcp.ReadBack(r.leases, r.stateDir, intended, now)...)
	list = append(list, dhcp6.ReadBack(r.leases6, r.stateDir, intended, now)...)
	return list, nil
}

// currentGraph builds the current-state graph of the items read back, in
// one pass and without journal entries (a reconciler that meets the graph
// starts with all of it anyway). An item that is the intended item itself
// (read-back found it as intended) is put with the dependencies the
// intended graph recorded for it (PutFrom): the two graphs share it.
// It also returns the node of each item of list, in list's order, so
// that a comparison can walk them without sorting the graph's.
func currentGraph(list []dg.Item, intended *dg.Graph) (*dg.Graph, []*dg.Node) {
	cur := dg.New("current")
	cur.Reserve(len(list))
	nodes := make([]*dg.Node, 0, len(list))
	st := dg.StateData{State: dg.StateCreated}
	subs := map[string]*dg.Graph{}
	next := intendedCursor(intended)
	cur.WithoutJournal(func() {
		for _, it := range list {
			src := next.holding(it)
			if src == nil && intended != nil {
				if src = intended.Node(dg.Ref(it)); src != nil && !src.Present() {
					src = nil
				}
			}
			if src == nil {
				ref := dg.Ref(it)
				cur.PutWithState(it, st)
				nodes = append(nodes, cur.Node(ref))
				continue
			}
			g := cur
			if path := src.Scope(); path != "" {
				if g = subs[path]; g == nil {
					g = cur.EditSubGraph(path)
					subs[path] = g
				}
			}
			n := src.In(cur) // the intended graph's strings; caches the peers
			if identical(src.Item(), it) {
				g.PutFrom(n, src, st)
			} else {
				g.PutAt(n, it, st)
			}
			nodes = append(nodes, n)
		}
	})
	return cur, nodes
}

// cursor walks the nodes of an intended graph in the order they were put
// into it (render's order, the intent's), guessing that the read-back
// lists the items in the same order: the kernel dumps routes in prefix
// order, as an intent generated or kept sorted lists them. A right guess
// spares making the item's name and looking it up (a third of building
// the current graph at 100k routes); a wrong one costs a comparison.
type cursor struct {
	nodes []*dg.Node
	i     int
}

// intendedCursor returns a cursor over g's nodes (none if g is nil, not a
// root, or its journal does not reach back to its start).
func intendedCursor(g *dg.Graph) *cursor {
	if g == nil || !g.IsRoot() {
		return &cursor{}
	}
	nodes, _ := g.NodesChangedSince(0)
	return &cursor{nodes: nodes}
}

// cursorWindow is how many nodes past the cursor holding looks at: the
// read-back may lack a few intended items, or find them changed.
const cursorWindow = 8

// holding returns the node that holds it itself (the same pointer: the
// read-back found the intended item) if it is one of the next few, and
// moves past it; else nil. A node the journal lists was put into the
// graph: it holds its item still unless that was deleted (nil) or
// replaced (another pointer).
func (c *cursor) holding(it dg.Item) *dg.Node {
	for j := c.i; j < len(c.nodes) && j < c.i+cursorWindow; j++ {
		n := c.nodes[j]
		if have := n.Item(); have != nil && identical(have, it) {
			c.i = j + 1
			return n
		}
	}
	return nil
}

// identical reports whether a and b are the same item (the same pointer).
func identical(a, b dg.Item) bool {
	return reflect.TypeOf(a).Kind() == reflect.Pointer && a == b
}

// LogOp returns an operation hook (reconciler.WithOpHook) that logs one
// line per kernel operation with the fields item, op, outcome ("ok",
// "failed", "in progress"), duration and, for a recreate, recreate=true:
// at info level, or at warning level with the error for a failure. The
// operations of one kernel batch share their duration: it is logged once,
// on a "kernel batch" line (ops, duration) before the batch's operations,
// and their lines carry none.
//
// A line the logger's level leaves out costs nothing: at 100k operations,
// building its fields took a fifth of an initial apply.
func LogOp(log logrus.FieldLogger) func(reconciler.OpLogEntry) {
	leveled, _ := log.(interface{ IsLevelEnabled(logrus.Level) bool })
	var batch [2]time.Time // the Start and End of the last batch logged
	return func(e reconciler.OpLogEntry) {
		level := logrus.InfoLevel
		if e.Err != nil {
			level = logrus.WarnLevel
		}
		if leveled != nil && !leveled.IsLevelEnabled(level) {
			return
		}
		fields := logrus.Fields{"item": e.Ref.String(), "op": e.Op.String(), "outcome": outcome(e)}
		switch {
		case e.Batch > 0:
			if b := [2]time.Time{e.Start, e.End}; b != batch {
				batch = b
				log.WithFields(logrus.Fields{"ops": e.Batch, "duration": e.End.Sub(e.Start)}).Log(level, "kernel batch")
			}
		case !e.InProgress:
			fields["duration"] = e.End.Sub(e.Start)
		}
		if e.Recreate {
			fields["recreate"] = true
		}
		l := log.WithFields(fields)
		if e.Err != nil {
			l.WithError(e.Err).Warn("kernel operation failed")
			return
		}
		l.Info("kernel operation")
	}
}

func outcome(e reconciler.OpLogEntry) string {
	switch {
	case e.InProgress:
		return "in progress"
	case e.Err != nil:
		return "failed"
	}
	return "ok"
}
