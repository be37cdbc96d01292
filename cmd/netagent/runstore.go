package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent"
	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store/etcd"
)

// The daemon as a fleet member: `netagent run --etcd-endpoints URL,...`
// reads the host's documents and its groups' from etcd (member.StoreSource)
// beside or instead of the intent directory, and writes its status back
// (member.StatusWriter).

// storeOpts are run's fleet options.
type storeOpts struct {
	endpoints string
	prefix    string
	hostname  string
	groups    []string
	ca        string
	cert      string
	key       string
	ttl       time.Duration
}

func storeFlags(fs *flag.FlagSet) *storeOpts {
	o := &storeOpts{}
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
	fs.StringVar(&o.ca, "etcd-ca", "", "CA certificate (PEM) that verifies the etcd servers")
	fs.StringVar(&o.cert, "etcd-cert", "", "client certificate (PEM) for etcd")
	fs.StringVar(&o.key, "etcd-key", "", "the client certificate's key (PEM)")
	fs.DurationVar(&o.ttl, "status-ttl", member.DefaultStatusTTL, "lease of the status in etcd: it expires this long after the daemon stops renewing it")
	return o
}

// enabled reports whether the daemon is a fleet member.
func (o *storeOpts) enabled() bool { return o.endpoints != "" }

// check validates the options that need no connection.
func (o *storeOpts) check() error {
	if !o.enabled() {
		if len(o.groups) > 0 || o.hostname != "" {
			return errors.New("--group and --hostname need --etcd-endpoints")
		}
		return nil
	}
	if o.hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("the machine's hostname: %w (give --hostname)", err)
		}
		o.hostname = h
	}
	if err := fleet.CheckName("host", o.hostname); err != nil {
		return err
	}
	if o.ttl < 3*time.Second {
		return errors.New("--status-ttl must be at least 3s")
	}
	return nil
}

// fleetMember is the daemon's store side: the source, the status writer
// and the connection they share.
type fleetMember struct {
	st     *etcd.Store
	src    *member.StoreSource
	writer *member.StatusWriter
}

// open connects to etcd (lazily: etcd.New does not wait for an answer, so
// a daemon started while etcd is down still starts and applies its last
// documents) and builds the source and the status writer.
// The source runs fleet trials' probes with prober and remembers the
// trials in stateDir.
func (o *storeOpts) open(g *globals, prober agent.Prober, stateDir string) (*fleetMember, error) {
	var eps []string
	for _, e := range strings.Split(o.endpoints, ",") {
		if e = strings.TrimSpace(e); e != "" {
			eps = append(eps, e)
		}
	}
	st, err := etcd.New(etcd.Config{Endpoints: eps, CAFile: o.ca, CertFile: o.cert, KeyFile: o.key})
	if err != nil {
		return nil, err
	}
	layout := fleet.Layout{Prefix: o.prefix}
	src, err := member.NewStoreSource(member.StoreSourceConfig{Store: st, Layout: layout, Host: o.hostname, Groups: o.groups, Log: g.log,
		Prober: prober, StateDir: stateDir})
	if err != nil {
		st.Close()
		return nil, err
	}
	w, err := member.NewStatusWriter(member.StatusWriterConfig{Store: st, Layout: layout, Host: o.hostname, Log: g.log, TTL: o.ttl, Source: src})
	if err != nil {
		st.Close()
		return nil, err
	}
	g.log.WithFields(logrus.Fields{"etcd": eps, "prefix": layout.Host(o.hostname), "groups": o.groups}).
		Info("fleet member: intents from etcd, status to " + layout.Status(o.hostname))
	return &fleetMember{st: st, src: src, writer: w}, nil
}

// prime lists the documents before the agent starts, so that its first
// reconcile applies them; etcd down (the wait is bounded by the request
// timeout) is no reason not to start: the agent applies the documents of
// the state directory and shows the source unreachable.
func (m *fleetMember) prime(g *globals) {
	if err := m.src.Prime(context.Background()); err != nil {
		g.log.WithError(err).Warn("etcd does not answer; starting with the documents of the state directory")
	}
}

// run writes the status until ctx ends, then revokes its lease and
// closes the connection.
func (m *fleetMember) run(ctx context.Context) {
	m.writer.Run(ctx)
	m.st.Close()
}

// checkIntentDir checks --intent-dir. A fleet member may go without one:
// the default directory missing is then no error, and --intent-dir ""
// turns it off.
func checkIntentDir(g *globals, fs *flag.FlagSet, o *daemonOpts) (int, bool) {
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "intent-dir" })
	if o.intentDir == "" {
		if !o.store.enabled() {
			return usageError(g, fs, "--intent-dir is needed without --etcd-endpoints"), false
		}
		return 0, true
	}
	if fi, err := os.Stat(o.intentDir); err != nil || !fi.IsDir() {
		if o.store.enabled() && !explicit && errors.Is(err, os.ErrNotExist) {
			o.intentDir = ""
			return 0, true
		}
		fmt.Fprintf(g.stderr, "netagent: intent directory %s: not a directory (%v)\n", o.intentDir, err)
		return exitInternal, false
	}
	return 0, true
}
