package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/snapshot"
	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/fleet"
)

// The daemon as a fleet member: `netagent run --etcd-endpoints URL,...`
// reads the host's documents and its groups' from etcd (member.StoreSource)
// beside or instead of the intent directory, and writes its status back
// (member.StatusWriter) and, with --publish-snapshot, the host's snapshot
// (member.SnapshotPublisher).

// storeOpts are run's fleet options.
type storeOpts struct {
	endpoints string
	prefix    string
	hostname  string
	groups    []string
	labels    map[string]string
	ca        string
	cert      string
	key       string
	ttl       time.Duration
	publish   time.Duration
	// fs and names: the flag set and the options storeFlags defined in
	// it (a build without the fleet refuses each of them, check).
	fs    *flag.FlagSet
	names []string
}

func storeFlags(fs *flag.FlagSet) *storeOpts {
	o := &storeOpts{fs: fs}
	var before []string
	fs.VisitAll(func(f *flag.Flag) { before = append(before, f.Name) })
	defer fs.VisitAll(func(f *flag.Flag) {
		if !slices.Contains(before, f.Name) {
			o.names = append(o.names, f.Name)
		}
	})
	fs.StringVar(&o.endpoints, "etcd-endpoints", "", "etcd client URLs, comma-separated: read intents from etcd and write the status there")
	fs.StringVar(&o.prefix, "etcd-prefix", fleet.DefaultPrefix, "the fleet's key prefix in etcd")
	fs.StringVar(&o.hostname, "hostname", "", "this host's name in the fleet (default: the machine's hostname)")
	fs.Func("group", "a group this host is a member of: its documents under PREFIX/groups/GROUP/ apply too (repeatable)",
		func(v string) error {
			if err := fleet.CheckName("group", v); err != nil {
				return err
			}
			o.groups = append(o.groups, v)
			return nil
		})
	fs.Func("label", "a label KEY=VALUE of this host, published in its fleet status: rollout waves select hosts by label (repeatable)",
		func(v string) error {
			k, val, err := fleet.ParseLabel(v)
			if err != nil {
				return err
			}
			if o.labels == nil {
				o.labels = map[string]string{}
			}
			if _, dup := o.labels[k]; dup {
				return fmt.Errorf("label %s given twice", k)
			}
			if len(o.labels) == fleet.MaxLabels {
				return fmt.Errorf("more than %d labels", fleet.MaxLabels)
			}
			o.labels[k] = val
			return nil
		})
	fs.StringVar(&o.ca, "etcd-ca", "", "CA certificate (PEM) that verifies the etcd servers")
	fs.StringVar(&o.cert, "etcd-cert", "", "client certificate (PEM) for etcd")
	fs.StringVar(&o.key, "etcd-key", "", "the client certificate's key (PEM)")
	fs.DurationVar(&o.ttl, "status-ttl", member.DefaultStatusTTL, "lease of the status in etcd: it expires this long after the daemon stops renewing it")
	fs.DurationVar(&o.publish, "publish-snapshot", 0, "publish the host's snapshot to PREFIX/snapshots/HOST when it changes, at most once per `INTERVAL` (0: never)")
	return o
}

// enabled reports whether the daemon is a fleet member.
func (o *storeOpts) enabled() bool { return o.endpoints != "" }

// check validates the options that need no connection.
func (o *storeOpts) check() error {
	if !member.Built {
		var given string
		o.fs.Visit(func(f *flag.Flag) {
			if given == "" && slices.Contains(o.names, f.Name) {
				given = f.Name
			}
		})
		if given != "" {
			return fmt.Errorf("--%s: %w", given, member.ErrNoFleet)
		}
		return nil
	}
	if !o.enabled() {
		if len(o.groups) > 0 || o.hostname != "" || len(o.labels) > 0 || o.publish != 0 {
			return errors.New("--group, --label, --hostname and --publish-snapshot need --etcd-endpoints")
		}
		return nil
	}
	if o.publish != 0 && o.publish < time.Second {
		return fmt.Errorf("--publish-snapshot %v: at most one snapshot a second (0: none)", o.publish)
	}
	h, err := member.CheckHost(o.hostname, o.ttl)
	o.hostname = h
	return err
}

// openMember opens the fleet member when the daemon is one, and lists its
// documents before the agent starts (member.Member.Prime).
func openMember(g *globals, o *daemonOpts, rt *host.Runtime) (int, bool) {
	if !o.store.enabled() || !member.Built { // check refused --etcd-endpoints without the fleet
		return exitOK, true
	}
	so := o.store
	m, err := member.Open(member.Config{
		Conn: member.Conn{Endpoints: member.Endpoints(so.endpoints), Prefix: so.prefix, CAFile: so.ca, CertFile: so.cert, KeyFile: so.key},
		Host: so.hostname, Groups: so.groups, Labels: so.labels, TTL: so.ttl, Log: g.log, Prober: trial.Probes(rt), PreCheck: trial.PreChecks(rt), Watcher: trial.Watches(rt), StateDir: o.kernel.stateDir(g),
		PublishSnapshot: so.publish, TakeSnapshot: func(ctx context.Context) (*snapshot.Document, error) {
			return snapshot.Take(ctx, o.kernel.netns, o.kernel.stateDir(g))
		}})
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: etcd: %v\n", err)
		return exitInternal, false
	}
	o.member = m
	m.Prime(context.Background())
	return exitOK, true
}

// daemonSources are the agent's sources (the intent directory, the fleet
// member's) and where it reports its fleet status (nil: nowhere).
func daemonSources(g *globals, o *daemonOpts) (sources []source.IntentSource, report func(fleet.Status)) {
	if o.intentDir != "" {
		sources = append(sources, source.NewDirSource(o.intentDir, g.log))
	}
	if o.member != nil {
		sources = append(sources, o.member.Source)
		report = o.member.Report
	}
	return sources, report
}

// checkIntentDir checks --intent-dir. A fleet member may go without one:
// the default directory missing is then no error, and --intent-dir ""
// turns it off.
func checkIntentDir(g *globals, fs *flag.FlagSet, o *daemonOpts) (int, bool) {
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "intent-dir" })
	if o.intentDir == "" && !o.store.enabled() {
		return usageError(g, fs, "--intent-dir is needed without --etcd-endpoints"), false
	}
	dir, err := source.CheckDir(o.intentDir, o.store.enabled() && !explicit)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal, false
	}
	o.intentDir = dir
	return 0, true
}
