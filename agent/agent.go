package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/lease"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/configurators/dhcp"
	"github.com/netagent/netagent/configurators/dhcp6"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Kernel is the target namespace as the loop sees it: reading it back,
// and reconciling a current-state graph against an intended one. The
// daemon backs it with agent/host; tests back it with a fake.
type Kernel interface {
	// ReadCurrent reads back the objects netagent owns and the external
	// links into a new current-state graph. hint is the intended graph:
	// fields it leaves unset are read back unset.
	ReadCurrent(ctx context.Context, hint *dg.Graph) (*dg.Graph, error)
	// ReadItems is ReadCurrent as the list of the items read, in the
	// order read, for the drift check, which builds no graph when it finds
	// nothing changed (host.Verifier.VerifyItems).
	ReadItems(ctx context.Context, hint *dg.Graph) ([]dg.Item, error)
	// ReadNftItems is the part of ReadItems that the nftables
	// configurator reads: netagent's tables, for their repair after an
	// nftables event (checkNft).
	ReadNftItems(ctx context.Context, hint *dg.Graph) ([]dg.Item, error)
	// ReadLinks lists the namespace's external links (the interfaces
	// netagent did not create), as the current state records them.
	ReadLinks(ctx context.Context) ([]*items.Link, error)
	// ReadLinkItems is the part of ReadItems that one link dump reads:
	// the link configurator's items (interfaces, ports, bridge VLANs) and
	// the external links, for the repair of an owned link that a link
	// event named (checkLinks).
	ReadLinkItems(ctx context.Context, hint *dg.Graph) ([]dg.Item, error)
	// Reconcile and Plan are those of the reconciler, with the target's
	// configurators and the agent's records of the current graph (Plan
	// leaves them as they are). Reconcile logs one line per kernel
	// operation.
	Reconcile(ctx context.Context, records *reconciler.Records, current, intended *dg.Graph) reconciler.Status
	Plan(ctx context.Context, records *reconciler.Records, current, intended *dg.Graph) reconciler.Status
}

// Renderer merges, validates and renders intent documents, by name, into
// the intended graph, with one subgraph per document
// (render.SubgraphName). Its errors are *intent.FieldError values naming
// the documents (render.RenderFiles is the one the daemon uses).
type Renderer func(files map[string]*intent.Intent) (*dg.Graph, error)

// Notifier tells a service manager how the agent is doing (sd_notify).
// Every method is called from the loop goroutine.
type Notifier interface {
	Ready() error             // the first reconcile is done, or a reload
	Reloading() error         // a reload (SIGHUP) starts
	Stopping() error          // the agent is shutting down
	Watchdog() error          // the loop is alive
	Status(line string) error // a one-line summary
}

// Config is what New needs. Kernel and Log are required.
type Config struct {
	Kernel Kernel
	Log    logrus.FieldLogger
	// Render defaults to render.RenderFiles.
	Render Renderer
	// Sources deliver intent documents (besides the socket API, which is
	// built in). Document names must be unique across sources.
	Sources []source.IntentSource
	// Links reports link changes in the target namespace; nil: none.
	Links LinkWatcher
	// Owned reports changes of the agent's own routes, addresses and
	// neighbours, which the loop repairs at once (ownedrepair.go); nil:
	// none (the drift check repairs them).
	Owned OwnedWatcher
	// Nftables reports other writers' changes in the target's nftables
	// tables, which the loop repairs at once (nftrepair.go); nil: none
	// (the drift check repairs them).
	Nftables NftWatcher
	// Notifier is told about readiness and pinged by the loop; nil: none.
	Notifier Notifier
	// Guard, when set, judges every set of documents before it is
	// adopted (protected links): see Guard.
	Guard Guard
	// StateDir keeps the last accepted version of every document (and the
	// socket API's document) across restarts; "": nowhere.
	StateDir string
	// Trials begins trials on the target (nil: a trial's revert only
	// reconciles back to the documents before it); Probe runs a trial's
	// probes (nil: trials with probes are refused); TrialDir is the
	// intent directory a confirmed trial is written to (the directory of
	// a DirSource among Sources; "": trials are refused). See trial.go.
	Trials trial.Starter
	Probe  Prober
	// PreCheck runs a trial's probes once before it changes anything
	// (trial.PreChecks; nil: no pre-check, every probe judges the trial).
	PreCheck PreChecker
	// Watch runs a standing trial's probes again every ProbeInterval
	// (0: trial.ProbeInterval) while it waits for its confirmation, and
	// reports the failure that reverts it (trial.Watches; nil: a standing
	// trial is not watched).
	Watch         ProbeWatcher
	ProbeInterval time.Duration
	TrialDir      string
	// LastTrial is how the last trial ended before this start (status
	// shows it until the next one ends); nil: unknown.
	LastTrial *status.TrialOutcome
	// Report, when set, is given the agent's status as a fleet member
	// (fleet.Status, without Host and Updated) by the loop whenever it
	// changes: a StatusWriter's Report. It must not block.
	Report func(fleet.Status)
	// Leases are the DHCPv4 leases the lease items' configurator holds
	// (host.Runtime.Leases), and LeaseClient renews them (nil: each
	// lease ends at its expiry, unrenewed); Leases nil: the
	// intent's leases are acquired but never extended (agent/lease). With
	// Render nil, the intent renders with the leases in use.
	Leases      *dhcp.Leases
	LeaseClient lease.Client4
	// Leases6 and LeaseClient6 are the same for DHCPv6 (agent/lease:
	// host.Runtime.Leases6 and DHCP6Client); the leases held render
	// their addresses and DNS in place of those Facts gives.
	Leases6      *dhcp6.Leases
	LeaseClient6 lease.Client6
	// Facts, when set, gives render the host's facts for the documents
	// (IPv6 forwarding, the resolv.conf path, the DHCPv6 leases kept:
	// render.Facts), to which the DHCPv4 leases in use are added. Used
	// with Render nil.
	Facts func(files map[string]*intent.Intent) render.Facts
	// KeepVersions is how many versions of the intent the state directory
	// keeps (default versions.DefaultKeep); see history.go.
	KeepVersions int

	// DriftInterval is how often owned objects are read back and repaired
	// (default DefaultDriftInterval; negative: never).
	DriftInterval time.Duration
	// WatchdogInterval is how often the loop pings the Notifier (0: never).
	// Use half of systemd's WATCHDOG_USEC.
	WatchdogInterval time.Duration
	// IntentDebounce and LinkDebounce are the quiet periods that end a
	// burst of intent changes or link events (defaults 200 ms, 100 ms); a
	// burst is handled at the latest ten times that long after it began.
	IntentDebounce, LinkDebounce time.Duration
	// NftDebounce is the quiet period that ends a burst of nftables
	// events (default 20 ms; at the latest ten times that after it began).
	NftDebounce time.Duration
	// IntentSettle ends a burst made only of intent files renamed into
	// place (complete, as editors and config tools write them atomically;
	// default 20 ms): long enough to gather a tool's several files written
	// in a row, and no quiet period to wait.
	IntentSettle time.Duration
	// RetryBase and RetryMax bound the exponential backoff of retries of
	// failed items (defaults 100 ms and 1 min).
	RetryBase, RetryMax time.Duration
	// Rand returns a number in [0, 1) for the retry jitter (default
	// math/rand/v2.Float64).
	Rand func() float64
	// Adopt, when set, is the `run --adopt` policy: the first reconcile
	// takes over the objects others made at the places of intended items
	// (host.Options.Adopt), and no later one does, unless FindLeases found
	// leases of other DHCP clients: then the reconciles adopt until those
	// are settled. The loop calls it with true before that reconcile and
	// with false after (host.Runtime.SetAdopt); an error of the latter
	// stops the start (once leases are settled, it is logged).
	Adopt func(on bool) error
	// FindLeases, with Adopt, returns the DHCPv4 leases other clients hold
	// on the interfaces named (oneshot.FindLeases): the first render keeps
	// their addresses and routes intended, the first reconcile adopts them
	// while the lease items ask for the same addresses, and the adoption
	// lasts until every one is settled (leases.go). nil: none are looked
	// for.
	FindLeases func(ifnames []string) map[string]*dhcp.Lease
	// Settled, when set, is called by the loop when a burst of work is
	// over: the drift check that follows a reconcile which changed the
	// kernel found nothing to repair (with drift checks off: after that
	// reconcile). The daemon returns the memory the work used to the
	// kernel then (cmd/netagent). It must not block.
	Settled func()
}

// Defaults of Config.
const (
	DefaultDriftInterval  = 5 * time.Minute
	DefaultIntentDebounce = 200 * time.Millisecond
	DefaultLinkDebounce   = 100 * time.Millisecond
	DefaultNftDebounce    = 20 * time.Millisecond
	DefaultIntentSettle   = 20 * time.Millisecond
	DefaultRetryBase      = 100 * time.Millisecond
	DefaultRetryMax       = time.Minute
)

// Agent is the daemon's state and its event loop. Run owns the state; the
// other methods are safe to call from any goroutine and only send events.
type Agent struct {
	cfg   Config
	log   logrus.FieldLogger
	store *goodStore
	api   *apiSource
	hist  *history // owned by the loop goroutine

	changed    chan string       // a source's name: it has changed
	settled    chan string       // a source's name: files renamed into place (source.SettledWatcher)
	links      chan LinkEvent    // from the link watcher
	owned      chan LinkEvent    // from the owned objects' watcher
	nft        chan NftEvent     // from the nftables watcher
	reloadc    chan struct{}     // SIGHUP
	calls      chan call         // socket API requests
	probed     chan probeResult  // the outcome of a trial's probe round
	leasesDone chan lease.Report // the outcome of a lease's renewal (agent/lease)
	done       chan struct{}     // closed when Run returns

	st *loopState   // owned by the loop goroutine
	mx *metricsFeed // owned by the loop goroutine; its Metrics are safe anywhere
	// reported is what Report was last given (loop goroutine).
	reported *fleet.Status
	ev       *api.Hub // the status stream's subscribers (events.go)
	// evLast is the status last published into ev (loop goroutine).
	evLast *api.Snapshot
	// ownRender: Config.Render was not given, the agent renders with its
	// leases (render.RenderFilesWith), and so may an edit on its own
	// (adoptEdit).
	ownRender bool
	// renderedFacts are the target's facts (leases left out) of the
	// last full render by the agent's own renderer (adoptEdit).
	renderedFacts render.Facts
	// refusals are the reasons the intended graph leaves out what leases
	// gave, by lease item (lease.Schedulers.Refusals; loop goroutine).
	refusals map[dg.ItemRef]string
}

// New checks cfg, fills in the defaults and returns an Agent ready to Run.
func New(cfg Config) (*Agent, error) {
	if cfg.Kernel == nil || cfg.Log == nil {
		return nil, errors.New("agent: Kernel and Log are required")
	}
	withLeases := cfg.Render == nil
	cfg = withDefaults(cfg)
	a := &Agent{
		cfg:        cfg,
		log:        cfg.Log,
		changed:    make(chan string),
		settled:    make(chan string),
		links:      make(chan LinkEvent),
		owned:      make(chan LinkEvent),
		nft:        make(chan NftEvent),
		reloadc:    make(chan struct{}, 1),
		calls:      make(chan call),
		probed:     make(chan probeResult),
		leasesDone: make(chan lease.Report),
		done:       make(chan struct{}),
		mx:         newMetricsFeed(),
		ev:         api.NewHub(),
	}
	if cfg.StateDir != "" {
		a.store = &goodStore{dir: cfg.StateDir}
	}
	a.ownRender = withLeases
	if withLeases {
		a.cfg.Render = func(files map[string]*intent.Intent) (*dg.Graph, error) {
			f := a.leaseFacts(files)
			g, err := render.RenderFilesWith(files, f)
			if err == nil {
				a.renderedFacts = hostFacts(f)
			}
			return g, err
		}
	}
	a.api = &apiSource{}
	a.hist = newHistory(cfg.StateDir, cfg.KeepVersions, a.log)
	for _, s := range cfg.Sources {
		if s.Name() == a.api.Name() {
			return nil, fmt.Errorf("agent: source name %q is reserved", s.Name())
		}
	}
	return a, nil
}

func withDefaults(c Config) Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.DriftInterval, DefaultDriftInterval)
	def(&c.IntentDebounce, DefaultIntentDebounce)
	def(&c.LinkDebounce, DefaultLinkDebounce)
	def(&c.NftDebounce, DefaultNftDebounce)
	def(&c.IntentSettle, DefaultIntentSettle)
	def(&c.RetryBase, DefaultRetryBase)
	def(&c.RetryMax, DefaultRetryMax)
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	if c.Render == nil {
		c.Render = render.RenderFiles
	}
	if c.Notifier == nil {
		c.Notifier = nopNotifier{}
	}
	return c
}

type nopNotifier struct{}

func (nopNotifier) Ready() error        { return nil }
func (nopNotifier) Reloading() error    { return nil }
func (nopNotifier) Stopping() error     { return nil }
func (nopNotifier) Watchdog() error     { return nil }
func (nopNotifier) Status(string) error { return nil }

// Reload asks the loop to read every intent source again (SIGHUP). It
// never blocks; reloads asked for while one is pending are one reload.
func (a *Agent) Reload() {
	select {
	case a.reloadc <- struct{}{}:
	default:
	}
}

// Run starts the sources and the link watcher, reads the kernel back,
// reconciles once (then tells the Notifier it is ready) and handles events
// until ctx ends. It returns an error only when it cannot start.
func (a *Agent) Run(ctx context.Context) error {
	defer close(a.done)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := a.start(ctx); err != nil {
		return err
	}
	a.loop(ctx)
	a.notify("stopping", a.cfg.Notifier.Stopping)
	return nil
}
