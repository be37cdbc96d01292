package member

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/snapshot"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// Config says how the daemon joins its fleet (`netagent run
// --etcd-endpoints`).
type Config struct {
	// Conn reaches the fleet's store; its Timeout is unused (etcd's
	// defaults bound the daemon's requests).
	Conn Conn
	// Host is this machine's name in the fleet; Groups the groups it is a
	// member of (fleet.CheckName each).
	Host   string
	Groups []string
	// Labels are published in the host's status (fleet.CheckLabels).
	Labels map[string]string
	// TTL is the status's lease (DefaultStatusTTL).
	TTL time.Duration
	Log logrus.FieldLogger
	// Prober, PreCheck, Watcher and StateDir are the StoreSource's
	// (StoreSourceConfig).
	Prober   func(ctx context.Context, specs []string) error
	PreCheck func(ctx context.Context, specs []string) ([]string, []trial.Failing)
	Watcher  func(ctx context.Context, specs []string, every time.Duration) <-chan error
	StateDir string
	// PublishSnapshot, if positive, publishes the host's snapshot (taken
	// by TakeSnapshot) at most once per PublishSnapshot
	// (SnapshotPublisher); 0: none.
	PublishSnapshot time.Duration
	TakeSnapshot    func(ctx context.Context) (*snapshot.Document, error)
}

// Member is the daemon's store side: its source, its status writer and
// the connection they share.
type Member struct {
	st     store.Store
	log    logrus.FieldLogger
	Source *StoreSource
	Writer *StatusWriter
	// Publisher publishes the host's snapshot; nil: off.
	Publisher *SnapshotPublisher
}

// Open connects to the store (lazily: a daemon started while the store is
// down still starts and applies its last documents) and builds the source
// and the status writer.
func Open(cfg Config) (*Member, error) {
	c := cfg.Conn
	st, err := openStore(c, false)
	if err != nil {
		return nil, err
	}
	layout := fleet.Layout{Prefix: c.Prefix}
	src, err := NewStoreSource(StoreSourceConfig{Store: st, Layout: layout, Host: cfg.Host, Groups: cfg.Groups, Log: cfg.Log,
		Prober: cfg.Prober, PreCheck: cfg.PreCheck, Watcher: cfg.Watcher, StateDir: cfg.StateDir})
	if err != nil {
		st.Close()
		return nil, err
	}
	w, err := NewStatusWriter(StatusWriterConfig{Store: st, Layout: layout, Host: cfg.Host, Labels: cfg.Labels, Log: cfg.Log, TTL: cfg.TTL, Source: src})
	if err != nil {
		st.Close()
		return nil, err
	}
	m := &Member{st: st, log: cfg.Log, Source: src, Writer: w}
	if cfg.PublishSnapshot > 0 {
		m.Publisher, err = NewSnapshotPublisher(SnapshotPublisherConfig{Store: st, Layout: layout, Host: cfg.Host, Log: cfg.Log,
			Every: cfg.PublishSnapshot, Take: cfg.TakeSnapshot})
		if err != nil {
			st.Close()
			return nil, err
		}
		w.showSnapshot(m.Publisher)
		cfg.Log.WithFields(logrus.Fields{"key": layout.Snapshot(cfg.Host), "every": cfg.PublishSnapshot}).Info("fleet member: publishing the host's snapshot")
	}
	cfg.Log.WithFields(logrus.Fields{"etcd": c.Endpoints, "prefix": layout.Host(cfg.Host), "groups": cfg.Groups}).
		Info("fleet member: intents from etcd, status to " + layout.Status(cfg.Host))
	return m, nil
}

// Report hands the agent's status to the writer (the agent's
// Config.Report), and tells the publisher the state may have changed.
func (m *Member) Report(st fleet.Status) {
	m.Writer.Report(st)
	if m.Publisher != nil {
		m.Publisher.Changed()
	}
}

// Prime lists the documents before the agent starts, so that its first
// reconcile applies them; the store down (the wait is bounded by the
// request timeout) is no reason not to start: the agent applies the
// documents of the state directory and shows the source unreachable.
func (m *Member) Prime(ctx context.Context) {
	if err := m.Source.Prime(ctx); err != nil {
		m.log.WithError(err).Warn("etcd does not answer; starting with the documents of the state directory")
	}
}

// Run writes the status (and publishes the snapshot) until ctx ends,
// then revokes the status's lease and closes the connection.
func (m *Member) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if m.Publisher != nil {
		wg.Go(func() { m.Publisher.Run(ctx) })
	}
	m.Writer.Run(ctx)
	wg.Wait()
	m.st.Close()
}
