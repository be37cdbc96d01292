package member

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// ErrSourceUnreachable is wrapped by what a StoreSource's Load returns
// while its store cannot be reached: the loop keeps the documents it has,
// and status shows the agent Degraded ("intent source unreachable").
var ErrSourceUnreachable = errors.New("intent source unreachable")

// errNotListed: a directory of the store has not been listed yet (at
// start, or after a reconnect while it is listed again).
var errNotListed = errors.New("not listed yet")

// DefaultStoreRetry is how long a StoreSource waits before watching a
// directory again after the store failed to answer.
const DefaultStoreRetry = 2 * time.Second

// StoreSourceConfig says what a StoreSource reads.
type StoreSourceConfig struct {
	Store  store.Store
	Layout fleet.Layout
	// Host is this machine's name in the layout; Groups the groups it is
	// a member of (fleet.CheckName each).
	Host   string
	Groups []string
	Log    logrus.FieldLogger
	// Retry is the wait before watching again after the store failed
	// (DefaultStoreRetry).
	Retry time.Duration
	// Prober runs the probes of fleet trials (storetrial.go; specs as
	// `--probe` takes them, inside the target; nil error: all passed: the
	// agent's Prober); StateDir, if set, is where the source remembers
	// them across a restart.
	Prober func(ctx context.Context, specs []string) error
	// PreCheck runs a fleet trial's probes once before its intent is
	// delivered (trial.PreChecks; nil: none, every probe judges it).
	PreCheck func(ctx context.Context, specs []string) ([]string, []trial.Failing)
	// Watcher watches a standing fleet trial's probes, and a confirmed
	// one's through its bake (trial.Watches: every interval, the failure
	// of a probe that failed trial.FailuresToRevert rounds in a row); nil:
	// trial.Watch over Prober, each run bounded by trial.ProbeInterval.
	Watcher  func(ctx context.Context, specs []string, every time.Duration) <-chan error
	StateDir string
}

// StoreSource is an IntentSource over a shared store: the documents under
// Layout.Host(Host) and Layout.Group(g) for each group, named by
// Layout.Source ("hosts/h1/base.json", "groups/edge-eu/dns.json"), so
// that they never clash with file names, and merged with every other
// document like files are.
//
// Its Watch runs one store watch per directory, each in its own
// goroutine: the documents first, then every change. It keeps what the
// watches delivered (the loop Loads it) and tells the loop when that
// changed. A watch the store ends (ErrWatchClosed: its history was
// compacted) is discarded and listed again. While the store is
// unreachable (a listing fails with ErrUnavailable, or SetReachable says
// so: the status writer's lease renewals are how an outage is noticed,
// since a store watch just waits for the store to come back), Load fails
// with ErrSourceUnreachable: the loop keeps applying the documents it has
// (and, across a restart, those of the state directory) and never
// withdraws them. When the store answers again every directory is listed
// again before Load succeeds.
type StoreSource struct {
	cfg   StoreSourceConfig
	dirs  []string
	name  string
	retry time.Duration

	mu     sync.Mutex
	docs   map[string]map[string]store.Entry // directory → document name → entry
	listed map[string]bool                   // directory → delivered since the last (re)listing
	down   error                             // non-nil: the store is unreachable
	relist chan struct{}                     // closed when the store is back: every watch lists again
	seen   map[string][]store.Entry          // document name → its last few versions (Revision)

	kick chan struct{} // capacity 1: the documents may have changed

	// Fleet trials (storetrial.go), under mu.
	trials      map[string]*storeTrial // document name → its latest trial
	delivered   map[string][]byte      // document name → what Load last gave
	trialsDirty bool
	writer      *StatusWriter // told when a trial ends
	watchCtx    context.Context
	// loadedTrials are the trials as the last Load delivered them: what
	// the loop's journal follows (Journal, journal.go).
	loadedTrials map[string]storeTrial
}

// NewStoreSource checks cfg and returns its source.
func NewStoreSource(cfg StoreSourceConfig) (*StoreSource, error) {
	if cfg.Store == nil || cfg.Log == nil {
		return nil, errors.New("store source: Store and Log are required")
	}
	if err := fleet.CheckName("host", cfg.Host); err != nil {
		return nil, err
	}
	dirs := []string{cfg.Layout.Host(cfg.Host)}
	for _, g := range cfg.Groups {
		if err := fleet.CheckName("group", g); err != nil {
			return nil, err
		}
		if d := cfg.Layout.Group(g); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	retry := cfg.Retry
	if retry <= 0 {
		retry = DefaultStoreRetry
	}
	s := &StoreSource{
		cfg:    cfg,
		dirs:   dirs,
		name:   "store:" + cfg.Layout.Host(cfg.Host),
		retry:  retry,
		docs:   map[string]map[string]store.Entry{},
		listed: map[string]bool{},
		relist: make(chan struct{}),
		seen:   map[string][]store.Entry{},
		kick:   make(chan struct{}, 1),
	}
	if err := s.loadTrials(); err != nil {
		return nil, err
	}
	return s, nil
}

// Name identifies the source: "store:" and the host's directory.
func (s *StoreSource) Name() string { return s.name }

// Load returns the documents of every directory as last delivered. It
// fails while the store is unreachable (ErrSourceUnreachable) or a
// directory has not been listed yet: the loop then keeps what it has.
func (s *StoreSource) Load() (map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down != nil {
		return nil, fmt.Errorf("%w: %v", ErrSourceUnreachable, s.down)
	}
	out := map[string][]byte{}
	for _, dir := range s.dirs {
		if !s.listed[dir] {
			return nil, fmt.Errorf("%s: %w", dir, errNotListed)
		}
		for name, e := range s.docs[dir] {
			s.deliver(name, e, out)
		}
	}
	s.saveTrials()
	s.noteLoaded()
	return out, nil
}

// Revision returns the store revision of the version raw of the document
// name, if it is one of the last few the source delivered.
func (s *StoreSource) Revision(name string, raw []byte) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range slices.Backward(s.seen[name]) {
		if bytes.Equal(e.Value, raw) {
			return int64(e.Version), true
		}
		if env, _, err := ParseTrialEnvelope(e.Value); err == nil && bytes.Equal(env.Intent, raw) {
			return int64(e.Version), true
		}
	}
	return 0, false
}

// seenKeep is how many versions of a document Revision knows.
const seenKeep = 4

// SetReachable tells the source whether the store answers (err nil) or
// not (err wraps store.ErrUnavailable; other errors are ignored). From
// unreachable to reachable, every directory is listed again.
func (s *StoreSource) SetReachable(err error) {
	if err != nil && !errors.Is(err, store.ErrUnavailable) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil && s.down == nil:
		s.cfg.Log.WithError(err).WithField("source", s.name).Warn("intent source unreachable; keeping the documents applied")
		s.down = err
		s.changed()
	case err == nil && s.down != nil:
		s.backUp()
		s.changed()
	}
}

// backUp ends an outage: every directory is listed again before Load
// succeeds (s.mu held).
func (s *StoreSource) backUp() {
	s.cfg.Log.WithField("source", s.name).Info("intent source reachable again; listing it again")
	s.down = nil
	clear(s.listed)
	close(s.relist)
	s.relist = make(chan struct{})
}

// Prime lists every directory once, before the agent starts, so that its
// first Load has the documents (and its first reconcile applies them, not
// only those of the state directory), or knows that the store is
// unreachable. Watch lists again anyway; Prime only saves the agent a
// start without its documents. ctx bounds the wait.
func (s *StoreSource) Prime(ctx context.Context) error {
	for _, dir := range s.dirs {
		entries, _, err := s.cfg.Store.List(ctx, dir)
		if err != nil {
			s.SetReachable(err)
			return fmt.Errorf("listing %s: %w", dir, err)
		}
		listing := map[string]store.Entry{}
		for _, e := range entries {
			if name := s.cfg.Layout.Source(e.Key); name != "" {
				listing[name] = e
			}
		}
		s.listedDir(dir, listing)
	}
	return nil
}

// changed marks the documents changed (s.mu held).
func (s *StoreSource) changed() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Watch watches every directory, each in a goroutine of its own, and
// tells the loop when the documents may have changed, until ctx ends.
func (s *StoreSource) Watch(ctx context.Context, changed chan<- string) {
	s.mu.Lock()
	s.watchCtx = ctx
	s.mu.Unlock()
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, dir := range s.dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.watchDir(ctx, dir)
		}()
	}
	pending := false
	for {
		var out chan<- string
		if pending {
			out = changed
		}
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
			pending = true
		case out <- s.name:
			pending = false
		}
	}
}

// errRelist ends a watch that must list again (the store is back).
var errRelist = errors.New("the store is reachable again: listing again")

// watchDir keeps dir's documents up to date, watching it again after
// every end of its watch.
func (s *StoreSource) watchDir(ctx context.Context, dir string) {
	log := s.cfg.Log.WithFields(logrus.Fields{"source": s.name, "dir": dir})
	for ctx.Err() == nil {
		err := s.watchOnce(ctx, dir)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errRelist):
			continue
		case errors.Is(err, store.ErrUnavailable):
			s.SetReachable(err)
		case errors.Is(err, store.ErrWatchClosed):
			// Compacted or dropped: list again at once.
			log.WithError(err).Info("the store ended the watch; listing again")
			continue
		default:
			log.WithError(err).Warn("watching the store; trying again")
		}
		s.mu.Lock()
		relist := s.relist
		s.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-relist:
		case <-time.After(s.retry):
		}
	}
}

// watchOnce lists dir and follows it until the watch ends, ctx ends or
// the store comes back after an outage (errRelist).
func (s *StoreSource) watchOnce(ctx context.Context, dir string) error {
	s.mu.Lock()
	var relist <-chan struct{} = s.relist
	s.mu.Unlock()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.cfg.Store.Watch(wctx, dir, store.NoVersion)
	if err != nil {
		return err
	}
	listing := map[string]store.Entry{}
	synced := false
	for {
		select {
		case <-relist:
			return errRelist
		case ev, ok := <-w.C:
			if !ok {
				return w.Err()
			}
			if ev.Type == store.Synced {
				relist = s.listedDir(dir, listing)
				synced = true
				continue
			}
			name := s.cfg.Layout.Source(ev.Entry.Key)
			if name == "" {
				continue // deeper than a document: not one
			}
			if !synced {
				listing[name] = ev.Entry
				continue
			}
			s.event(dir, name, ev)
		}
	}
}

// listedDir makes the listing dir's documents and the store reachable;
// it returns the channel that tells the watch to list again.
func (s *StoreSource) listedDir(dir string, listing map[string]store.Entry) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down != nil { // a listing is an answer: the store is back
		s.backUp()
	}
	old := s.docs[dir]
	s.docs[dir] = listing
	s.listed[dir] = true
	for name := range old {
		if _, ok := listing[name]; !ok {
			s.forgetTrial(name)
		}
	}
	for name, e := range listing {
		var was *store.Entry
		if o, ok := old[name]; ok {
			was = &o
		}
		s.noteTrial(name, e, was)
		s.remember(name, e)
	}
	s.changed()
	return s.relist
}

// event applies a change of one document of dir.
func (s *StoreSource) event(dir, name string, ev store.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	docs := s.docs[dir]
	switch ev.Type {
	case store.Put:
		var was *store.Entry
		if o, ok := docs[name]; ok {
			was = &o
		}
		s.noteTrial(name, ev.Entry, was)
		docs[name] = ev.Entry
		s.remember(name, ev.Entry)
	case store.Delete:
		delete(docs, name)
		s.forgetTrial(name)
	}
	s.changed()
}

// remember records a version of a document for Revision (s.mu held).
func (s *StoreSource) remember(name string, e store.Entry) {
	list := s.seen[name]
	if n := len(list); n > 0 && list[n-1].Version == e.Version {
		return
	}
	list = append(list, e)
	if len(list) > seenKeep {
		list = slices.Delete(list, 0, len(list)-seenKeep)
	}
	s.seen[name] = list
}
