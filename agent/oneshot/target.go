package oneshot

import (
	"context"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
)

// Target is a namespace opened for a command, with its intent rendered
// once.
type Target struct {
	Runtime *host.Runtime
	Intent  *Intent
	// Graph is the intent rendered with the host's facts and the leases
	// kept: the command's one render.
	Graph *dg.Graph
	// Leases renders the intent with DHCP leases; nil without dhcp4 or
	// dhcp6.
	Leases *Leases
	// Recovered is what the first step found of a pending trial.
	Recovered Recovered
	// Lock is the namespace's lock, held for a writer (Start).
	Lock *host.Lock
	opts *Options
}

// Close closes the namespace and releases its lock.
func (t *Target) Close() {
	t.Runtime.Close()
	if t.Lock != nil {
		t.Lock.Release()
	}
}

// Options are the options the target was prepared with.
func (t *Target) Options() *Options { return t.opts }

// Prepare opens the namespace for in (Gate has decided to go ahead),
// reverts a pending trial first (a writer: RecoverFirst) and renders the
// intent once, with the host's facts and the DHCP leases kept (the leases
// that have not reached their renewal time held as confirmed: no server is
// asked before T1). An intent whose render needs no fact of the host (no
// --resolv-conf, acceptRA, dhcp4 or dhcp6) is rendered before the
// namespace is opened, so that an invalid one touches nothing at all.
// With o.Adopt the configurators take over what others made at the
// intent's places (host.Options.Adopt) once the recovery is done.
func Prepare(ctx context.Context, o *Options, in *Intent) (*Target, error) {
	var g *dg.Graph
	facts := needsFacts(in.Files, o.ResolvConf)
	if !facts {
		var err error
		if g, err = o.RenderPlain(in); err != nil {
			return nil, err
		}
	}
	WarnDNS(o.log(), in.Files, o.ResolvConf)
	rt, err := o.open()
	if err != nil {
		return nil, err
	}
	t := &Target{Runtime: rt, Intent: in, Graph: g, opts: o}
	t.Recovered, err = RecoverFirst(ctx, rt, o.Write)
	if err == nil && o.Recovered != nil {
		o.Recovered(t.Recovered)
	}
	if err == nil && o.Adopt { // after the recovery, which puts back what netagent had
		err = rt.SetAdopt(true)
	}
	if err == nil && facts {
		err = t.renderWithFacts()
	}
	if err != nil {
		rt.Close()
		return nil, err
	}
	t.Leases.TrustFresh(rt, time.Now())
	return t, nil
}

// renderWithFacts renders the intent with the host's facts and the leases
// the state directory keeps.
func (t *Target) renderWithFacts() error {
	o, files := t.opts, t.Intent.Files
	lf, g, err := KeptLeases(t.Runtime, files, o.ResolvConf, o.renderer())
	if lf == nil && err == nil {
		var f render.Facts
		if f, err = Facts(t.Runtime, files, o.ResolvConf); err == nil {
			g, err = o.renderer()(files, f)
		}
	}
	if err != nil {
		return &InvalidError{Err: err}
	}
	t.Leases, t.Graph = lf, g
	return nil
}

// Guard is Guard on the target's render.
func (t *Target) Guard(ctx context.Context) (*Guarded, error) {
	return Guard(ctx, t.opts, t.Runtime, t.Intent.Protected, t.Graph)
}

// Start is the start that apply, plan, check and try share: Gate (a
// daemon serving the namespace is a *DaemonError, with no lock taken),
// Load and Prepare.
func Start(ctx context.Context, o *Options, paths []string) (*Target, error) {
	d, err := Gate(o)
	switch {
	case err != nil:
		return nil, err
	case d.Daemon != nil:
		return nil, &DaemonError{Holder: *d.Daemon}
	case d.Busy != nil:
		o.log().WithField("holder", d.Busy.String()).Warn("another netagent is changing the namespace now: what this reads may change under it")
	}
	t, err := loadAndPrepare(ctx, o, paths)
	if err != nil {
		if d.Lock != nil {
			d.Lock.Release()
		}
		return nil, err
	}
	t.Lock = d.Lock
	return t, nil
}

// loadAndPrepare is Start after the gate.
func loadAndPrepare(ctx context.Context, o *Options, paths []string) (*Target, error) {
	if len(paths) == 0 {
		return nil, ErrNoIntent
	}
	in, err := Load(paths, o.Sized)
	if err != nil {
		return nil, err
	}
	return Prepare(ctx, o, in)
}
