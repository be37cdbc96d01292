package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/graphwalk"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// fakeKernel is a namespace in memory: the managed objects by ref, and the
// external links. Its configurators write to it through a real reconciler.
// The loop calls it from its goroutine, the test from its own: a mutex
// guards it.
type fakeKernel struct {
	mu        sync.Mutex
	objects   map[dg.ItemRef]dg.Item
	links     map[string]*items.Link
	fail      map[dg.ItemRef]int                   // the next n operations on ref fail
	ops       []string                             // "create route/..." in order
	opsAt     []time.Time                          // when each of ops ran
	rewrite   map[dg.ItemRef]func(dg.Item) dg.Item // the kernel keeps its own value, not what was written
	runs      int                                  // Reconcile calls
	stuck     chan struct{}                        // non-nil: Reconcile waits until it is closed
	slow      map[dg.ItemRef]chan struct{}         // creates of ref go on in the background until closed
	linkReads int                                  // ReadLinkItems calls
	nftReads  int                                  // ReadNftItems calls
}

var errFake = errors.New("fake kernel says no")

func newFakeKernel(links ...*items.Link) *fakeKernel {
	k := &fakeKernel{objects: map[dg.ItemRef]dg.Item{}, links: map[string]*items.Link{}, fail: map[dg.ItemRef]int{},
		slow: map[dg.ItemRef]chan struct{}{}, rewrite: map[dg.ItemRef]func(dg.Item) dg.Item{}}
	for _, l := range links {
		k.links[l.IfName] = l
	}
	return k
}

func uplink(index int, carrier bool) *items.Link {
	return &items.Link{IfName: "uplink0", Index: index, Kind: "veth", AdminUp: true, OperUp: carrier, Carrier: carrier,
		MAC: net.HardwareAddr{2, 0, 0, 0, 0, byte(index)}}
}

type fakeRegistry struct{ k *fakeKernel }

func (r fakeRegistry) Configurator(dg.Item) reconciler.Configurator { return fakeConfigurator(r) }

type fakeConfigurator struct{ k *fakeKernel }

func (c fakeConfigurator) Create(ctx context.Context, it dg.Item) error {
	if release, ok := c.k.slow[dg.Ref(it)]; ok {
		done := reconciler.ContinueInBackground(ctx)
		go func() {
			<-release
			c.k.mu.Lock()
			err := c.k.write("create", dg.Ref(it), it)
			c.k.mu.Unlock()
			done(err)
		}()
		return nil
	}
	return c.k.write("create", dg.Ref(it), it)
}

func (c fakeConfigurator) Modify(_ context.Context, _, it dg.Item) error {
	return c.k.write("modify", dg.Ref(it), it)
}

func (c fakeConfigurator) Delete(_ context.Context, it dg.Item) error {
	return c.k.write("delete", dg.Ref(it), nil)
}

func (c fakeConfigurator) NeedsRecreate(old, new dg.Item) bool { return items.NeedsRecreate(old, new) }

// write is one kernel operation; it is called with k.mu held (from
// Reconcile).
func (k *fakeKernel) write(op string, ref dg.ItemRef, it dg.Item) error {
	k.ops = append(k.ops, op+" "+ref.String())
	k.opsAt = append(k.opsAt, time.Now())
	if f := k.rewrite[ref]; f != nil && it != nil {
		it = f(it)
	}
	if k.fail[ref] > 0 {
		k.fail[ref]--
		return fmt.Errorf("%s %s: %w", op, ref, errFake)
	}
	if it == nil {
		delete(k.objects, ref)
	} else {
		k.objects[ref] = it
	}
	return nil
}

func (k *fakeKernel) ReadCurrent(_ context.Context, hint *dg.Graph) (*dg.Graph, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	g := dg.New("current")
	for ref, it := range k.objects {
		graphwalk.Into(g, scopeIn(hint, ref)).Put(it)
	}
	for _, l := range k.links {
		g.Put(l)
	}
	return g, nil
}

// ReadItems lists what ReadCurrent puts into its graph; an object that
// is the hint's item (the same value) is listed as that item, as the
// configurators' read-back hands it back.
func (k *fakeKernel) ReadItems(_ context.Context, hint *dg.Graph) ([]dg.Item, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var list []dg.Item
	for ref, it := range k.objects {
		if hint != nil {
			if want, ok := hint.Get(ref); ok && want.Equal(it) {
				it = want
			}
		}
		list = append(list, it)
	}
	for _, l := range k.links {
		list = append(list, l)
	}
	return list, nil
}

func scopeIn(g *dg.Graph, ref dg.ItemRef) string {
	if g == nil {
		return ""
	}
	p, _ := g.ScopeOf(ref)
	return p
}

// ReadLinkItems is ReadItems of the link configurator's types.
func (k *fakeKernel) ReadLinkItems(ctx context.Context, hint *dg.Graph) ([]dg.Item, error) {
	k.mu.Lock()
	k.linkReads++
	k.mu.Unlock()
	all, err := k.ReadItems(ctx, hint)
	var out []dg.Item
	for _, it := range all {
		if it.External() || linkTypes[it.Type()] {
			out = append(out, it)
		}
	}
	return out, err
}

// ReadNftItems is ReadItems of the nftables tables.
func (k *fakeKernel) ReadNftItems(ctx context.Context, hint *dg.Graph) ([]dg.Item, error) {
	k.mu.Lock()
	k.nftReads++
	k.mu.Unlock()
	all, err := k.ReadItems(ctx, hint)
	return slices.DeleteFunc(all, func(it dg.Item) bool { return it.Type() != items.TypeNftTable }), err
}

func (k *fakeKernel) ReadLinks(context.Context) ([]*items.Link, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slicesOf(k.links), nil
}

func slicesOf(m map[string]*items.Link) []*items.Link {
	var out []*items.Link
	for _, n := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[n])
	}
	return out
}

func (k *fakeKernel) Reconcile(ctx context.Context, records *reconciler.Records, current, intended *dg.Graph) reconciler.Status {
	k.mu.Lock()
	stuck := k.stuck
	k.runs++
	k.mu.Unlock()
	if stuck != nil {
		<-stuck
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.reconciler(records).Reconcile(ctx, current, intended)
}

func (k *fakeKernel) Plan(ctx context.Context, records *reconciler.Records, current, intended *dg.Graph) reconciler.Status {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.reconciler(records).Plan(ctx, current, intended)
}

func (k *fakeKernel) reconciler(records *reconciler.Records) *reconciler.Reconciler {
	return reconciler.New(fakeRegistry{k}, reconciler.WithRecords(records))
}

// takeOps returns the operations run since the last call.
func (k *fakeKernel) takeOps() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	ops := k.ops
	k.ops, k.opsAt = nil, nil
	return ops
}

// writesOf returns when the creates and modifies of ref ran.
func (k *fakeKernel) writesOf(ref dg.ItemRef) []time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []time.Time
	for i, op := range k.ops {
		if op == "create "+ref.String() || op == "modify "+ref.String() {
			out = append(out, k.opsAt[i])
		}
	}
	return out
}

// rewriteWith makes the kernel keep f's version of whatever is written to
// ref (nil: keep what is written).
func (k *fakeKernel) rewriteWith(ref dg.ItemRef, f func(dg.Item) dg.Item) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rewrite[ref] = f
}

func (k *fakeKernel) has(ref dg.ItemRef) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.objects[ref]
	return ok
}

func (k *fakeKernel) setLink(l *items.Link) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.links[l.IfName] = l
}

func (k *fakeKernel) dropLink(name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.links, name)
}

func (k *fakeKernel) failNext(ref dg.ItemRef, n int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fail[ref] = n
}

func (k *fakeKernel) linkReadCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.linkReads
}

func (k *fakeKernel) reconciles() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.runs
}

// tamper changes the kernel behind the agent's back.
func (k *fakeKernel) tamper(f func(objects map[dg.ItemRef]dg.Item)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	f(k.objects)
}

// fakeSource is an intent source in memory.
type fakeSource struct {
	name    string
	mu      sync.Mutex
	docs    map[string][]byte
	loads   int
	failing error
	kick    chan struct{}
	renamed chan struct{} // kicks of setRenamed
}

func newFakeSource(name string, docs map[string]string) *fakeSource {
	s := &fakeSource{name: name, docs: map[string][]byte{}, kick: make(chan struct{}, 1), renamed: make(chan struct{}, 1)}
	for n, d := range docs {
		s.docs[n] = []byte(d)
	}
	return s
}

func (s *fakeSource) Name() string { return s.name }

func (s *fakeSource) Load() (map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads++
	if s.failing != nil {
		return nil, s.failing
	}
	return maps.Clone(s.docs), nil
}

// Watch forwards kicks, coalesced like a real source.
func (s *fakeSource) Watch(ctx context.Context, changed chan<- string) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
			select {
			case changed <- s.name:
			case <-ctx.Done():
				return
			}
		}
	}
}

// WatchSettled is Watch, with the kicks of setRenamed reported on settled.
func (s *fakeSource) WatchSettled(ctx context.Context, changed, settled chan<- string) {
	for {
		out := changed
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-s.renamed:
			out = settled
		}
		select {
		case out <- s.name:
		case <-ctx.Done():
			return
		}
	}
}

// setRenamed changes a document as a file renamed into place.
func (s *fakeSource) setRenamed(name, doc string) {
	s.mu.Lock()
	s.docs[name] = []byte(doc)
	s.mu.Unlock()
	select {
	case s.renamed <- struct{}{}:
	default:
	}
}

// set changes (or, with "", removes) a document and reports the change.
func (s *fakeSource) set(name, doc string) {
	s.mu.Lock()
	if doc == "" {
		delete(s.docs, name)
	} else {
		s.docs[name] = []byte(doc)
	}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *fakeSource) loadCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads
}

// fakeLinks is a link watcher the test drives.
type fakeLinks struct{ events chan LinkEvent }

func (w *fakeLinks) Watch(ctx context.Context, out chan<- LinkEvent) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-w.events:
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}
}

// fakeNotifier counts notifications.
type fakeNotifier struct {
	mu     sync.Mutex
	counts map[string]int
	pings  []time.Time
	status string
}

func newFakeNotifier() *fakeNotifier { return &fakeNotifier{counts: map[string]int{}} }

func (n *fakeNotifier) note(what string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.counts[what]++
	if what == "watchdog" {
		n.pings = append(n.pings, time.Now())
	}
	return nil
}

func (n *fakeNotifier) Ready() error     { return n.note("ready") }
func (n *fakeNotifier) Reloading() error { return n.note("reloading") }
func (n *fakeNotifier) Stopping() error  { return n.note("stopping") }
func (n *fakeNotifier) Watchdog() error  { return n.note("watchdog") }
func (n *fakeNotifier) Status(s string) error {
	n.mu.Lock()
	n.status = s
	n.mu.Unlock()
	return nil
}

func (n *fakeNotifier) count(what string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.counts[what]
}

// rig is an agent over fakes, running in the test's goroutine tree.
type rig struct {
	t      *testing.T
	k      *fakeKernel
	src    *fakeSource
	links  *fakeLinks
	notify *fakeNotifier
	hook   *logtest.Hook
	a      *Agent
	cancel context.CancelFunc
	ran    chan error
}

// rigOption adjusts the Config before New.
type rigOption func(*Config)

func newRig(t *testing.T, docs map[string]string, opts ...rigOption) *rig {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	log.SetLevel(logrus.DebugLevel)
	r := &rig{
		t:      t,
		k:      newFakeKernel(uplink(2, true)),
		src:    newFakeSource("dir:test", docs),
		links:  &fakeLinks{events: make(chan LinkEvent)},
		notify: newFakeNotifier(),
		hook:   logtest.NewLocal(log),
		ran:    make(chan error, 1),
	}
	cfg := Config{
		Kernel:   r.k,
		Log:      log,
		Sources:  []source.IntentSource{r.src},
		Links:    r.links,
		Notifier: r.notify,
		Rand:     func() float64 { return 0.5 },
	}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.a = a
	return r
}

// start runs the agent and waits until its first reconcile is done.
func (r *rig) start() *rig {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.ran <- r.a.Run(ctx) }()
	r.t.Cleanup(r.stop)
	r.call(api.Request{Command: api.CmdStatus}) // answered once the loop runs
	return r
}

func (r *rig) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	if err := <-r.ran; err != nil {
		r.t.Errorf("Run: %v", err)
	}
}

func (r *rig) call(req api.Request) api.Response {
	r.t.Helper()
	resp, err := r.a.Call(context.Background(), req)
	if err != nil {
		r.t.Fatalf("%s: %v", req.Command, err)
	}
	return resp
}

func (r *rig) status() status.Status {
	r.t.Helper()
	resp := r.call(api.Request{Command: api.CmdStatus})
	return *resp.Status
}

// linkEvent sends a link event, as the netlink watcher would.
func (r *rig) linkEvent(names ...string) {
	r.links.events <- LinkEvent{Names: names}
}

// reasons lists the reasons of the reconciles logged so far.
func (r *rig) reasons() []string {
	var out []string
	for _, e := range r.hook.AllEntries() {
		if e.Message == "reconciling" {
			out = append(out, e.Data["reason"].(string))
		}
	}
	return out
}
