package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/pace"
)

// start builds the loop's state: the documents accepted in an earlier run,
// every source's documents now, the intended graph, and the current state
// read back from the kernel. It starts the watchers (before the first
// reconcile, so that no change after the read-back is missed), reconciles
// once and tells the Notifier the agent is ready.
func (a *Agent) start(ctx context.Context) error {
	s := a.newState()
	a.st = s
	if err := a.seedDocs(); err != nil {
		return err
	}
	if err := a.loadHistory(); err != nil {
		return err
	}
	a.seedLeases()
	a.loadSources(a.sourceNames(), reasonStart)
	a.adoptFoundLeases()
	cur, err := a.cfg.Kernel.ReadCurrent(ctx, s.intended)
	if err != nil {
		return fmt.Errorf("reading the kernel's state back: %w", err)
	}
	s.current = cur
	if a.cfg.Leases != nil {
		a.cfg.Leases.IgnoreKept() // read back once: the leases are the loop's from now on
	}
	if a.cfg.Leases6 != nil {
		a.cfg.Leases6.IgnoreKept()
	}
	a.startWatchers(ctx)
	if a.cfg.DriftInterval > 0 {
		s.drift.set(a.cfg.DriftInterval) // before: a reconcile that changes the kernel brings it forward
	}
	s.want(reasonStart)
	a.syncFleetTrials(ctx)
	if err := a.firstReconcile(ctx); err != nil {
		return err
	}
	a.publishMetrics()
	a.reportStatus()
	a.notify("ready", a.cfg.Notifier.Ready)
	if a.cfg.WatchdogInterval > 0 {
		s.watchdog = time.NewTicker(a.cfg.WatchdogInterval)
	}
	return nil
}

// firstReconcile runs the start's reconcile (with the follow-ups it
// wants), adopting what others made when Config.Adopt is set: only this
// once, or, when it found leases of other DHCP clients, until they are
// settled (adoptFoundLeases).
func (a *Agent) firstReconcile(ctx context.Context) error {
	if a.cfg.Adopt == nil {
		a.reconcileWanted(ctx)
		return nil
	}
	if err := a.cfg.Adopt(true); err != nil {
		return fmt.Errorf("adopting at the first reconcile: %w", err)
	}
	a.reconcileWanted(ctx)
	if a.st.leases.V4.Adopting() { // until the leases found are settled (leases.go)
		a.st.adoptingLeases = true
		return nil
	}
	if err := a.cfg.Adopt(false); err != nil {
		return fmt.Errorf("ending the adoption after the first reconcile: %w", err)
	}
	return nil
}

func (a *Agent) newState() *loopState {
	c := a.cfg
	return &loopState{
		docs:      newDocSet(),
		intended:  dg.New("intended"),
		dirty:     map[string]bool{},
		read:      map[string]bool{},
		intentDeb: pace.NewDebouncer(c.IntentDebounce, 10*c.IntentDebounce).WithSettle(c.IntentSettle),
		linkDeb:   pace.NewDebouncer(c.LinkDebounce, 10*c.LinkDebounce),
		linkNames: map[string]struct{}{},
		ownedDeb:  pace.NewDebouncer(c.LinkDebounce, 10*c.LinkDebounce),
		nftDeb:    pace.NewDebouncer(c.NftDebounce, 10*c.NftDebounce),
		nftTables: map[string]struct{}{},
		results:   newResults(pace.Backoff{Base: c.RetryBase, Limit: c.RetryMax, Rand: c.Rand}),
		notes:     notes{sources: map[string]string{}},
		conds:     status.Memo{},
		lastTrial: c.LastTrial,
	}
}

// seedDocs loads the documents accepted in an earlier run, and the socket
// API's document, from the state directory.
func (a *Agent) seedDocs() error {
	if a.store == nil {
		return nil
	}
	stored, err := a.store.load()
	if err != nil {
		return err
	}
	a.st.docs.holdUnclaimed = true
	for name, doc := range stored {
		if err := a.st.docs.seedGood(name, doc.raw, doc.at); err != nil {
			a.log.WithError(err).WithField("file", name).Warn("ignoring a stored intent")
			continue
		}
		if name == apiDocName {
			a.api.set(doc.raw)
		}
	}
	return nil
}

// sourceNames lists every source, the socket API's included.
func (a *Agent) sourceNames() []string {
	names := []string{a.api.Name()}
	for _, src := range a.cfg.Sources {
		names = append(names, src.Name())
	}
	return names
}

func (a *Agent) startWatchers(ctx context.Context) {
	for _, src := range a.cfg.Sources {
		if sw, ok := src.(source.SettledWatcher); ok {
			go sw.WatchSettled(ctx, a.changed, a.settled)
			continue
		}
		go src.Watch(ctx, a.changed)
	}
	if a.cfg.Links != nil {
		go a.cfg.Links.Watch(ctx, a.links)
	}
	if a.cfg.Owned != nil {
		go a.cfg.Owned.Watch(ctx, a.owned)
	}
	if a.cfg.Nftables != nil {
		a.followNft()
		go a.cfg.Nftables.Watch(ctx, a.nft)
	}
}
