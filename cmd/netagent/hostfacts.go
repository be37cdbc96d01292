package main

import (
	"errors"
	"flag"
	"path/filepath"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/target"
	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
)

// resolvConfFlag adds --resolv-conf to a command that renders the intent
// (plan, check, apply, try, run).
func resolvConfFlag(fs *flag.FlagSet, k *kernelOpts) {
	fs.Func("resolv-conf", "write the DNS servers and search domains of the intent and the leases to `PATH` "+
		"(never over a file netagent did not write; handed to systemd-resolved when PATH is its stub; default: DNS is left alone)",
		func(v string) error {
			if !filepath.IsAbs(v) {
				return errors.New("must be an absolute path")
			}
			k.resolvConf = v
			return nil
		})
}

// facts returns what render needs of the target: its IPv6 forwarding and
// the resolv.conf path of --resolv-conf.
func (k *kernelOpts) facts(rt *target.Runtime) (render.Facts, error) {
	fwd, err := configurators.IPv6Forwarding(rt.Target())
	if err != nil {
		return render.Facts{}, err
	}
	return render.Facts{IPv6Forwarding: fwd, ResolvConf: k.resolvConf}, nil
}

// needsFacts reports whether files render differently with the target's
// facts (render.Facts): with --resolv-conf, or an interface with
// ipv6.acceptRA. prepare renders them again then, once the target is
// open; every other intent (100k routes) is rendered once.
func (k *kernelOpts) needsFacts(files map[string]*intent.Intent) bool {
	if k.resolvConf != "" {
		return true
	}
	for _, in := range files {
		for i := range in.Interfaces {
			if v := in.Interfaces[i].IPv6; v != nil && v.AcceptRA {
				return true
			}
		}
	}
	return false
}

// renderWithFacts renders files again with the target's facts (the first
// render, before the target was open, had none).
func (k *kernelOpts) renderWithFacts(rt *target.Runtime, files map[string]*intent.Intent) (*dg.Graph, error) {
	f, err := k.facts(rt)
	if err != nil {
		return nil, err
	}
	return render.RenderFilesWith(files, f)
}

// renderer is the daemon's render.RenderFiles with the target's facts,
// read again at each render.
func (k *kernelOpts) renderer(rt *target.Runtime) func(map[string]*intent.Intent) (*dg.Graph, error) {
	return func(files map[string]*intent.Intent) (*dg.Graph, error) { return k.renderWithFacts(rt, files) }
}
