package main

import (
	"errors"
	"flag"
	"path/filepath"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/dhcp6"
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

// facts returns what render needs of the target for files: its IPv6
// forwarding, the resolv.conf path of --resolv-conf, and the DHCPv6
// leases kept in the state directory that have not expired (their
// addresses and DNS).
func (k *kernelOpts) facts(rt *host.Runtime, files map[string]*intent.Intent) (render.Facts, error) {
	fwd, err := configurators.IPv6Forwarding(rt.Target())
	f := render.Facts{IPv6Forwarding: fwd, ResolvConf: k.resolvConf}
	now := time.Now()
	for _, name := range dhcp6Interfaces(files) {
		if l := dhcp6.LoadValid(rt.StateDir(), name, now); l != nil {
			if f.DHCP6 == nil {
				f.DHCP6 = map[string]render.Lease6{}
			}
			f.DHCP6[name] = render.Lease6{Address: l.Address, ValidUntil: l.Expires(), PreferredUntil: l.PreferredUntil()}
			f.LeaseDNS = append(f.LeaseDNS, l.LinkDNS())
		}
	}
	return f, err
}

// dhcp6Interfaces returns the interfaces of files with ipv6.dhcp6, sorted.
func dhcp6Interfaces(files map[string]*intent.Intent) []string {
	var out []string
	for _, in := range files {
		for i := range in.Interfaces {
			if v := in.Interfaces[i].IPv6; v != nil && v.DHCP6 {
				out = append(out, in.Interfaces[i].Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// hostFacts returns a function that reads the target's facts for files
// (facts), for the lease rounds of apply (leaseFacts).
func (k *kernelOpts) hostFacts(rt *host.Runtime, files map[string]*intent.Intent) func() (render.Facts, error) {
	return func() (render.Facts, error) { return k.facts(rt, files) }
}

// needsFacts reports whether files render differently with the target's
// facts (render.Facts): with --resolv-conf, or an interface with
// ipv6.acceptRA or dhcp6. prepare renders them again then, once the target is
// open; every other intent (100k routes) is rendered once.
func (k *kernelOpts) needsFacts(files map[string]*intent.Intent) bool {
	if k.resolvConf != "" {
		return true
	}
	for _, in := range files {
		for i := range in.Interfaces {
			if v := in.Interfaces[i].IPv6; v != nil && (v.AcceptRA || v.DHCP6) {
				return true
			}
		}
	}
	return false
}

// renderWithFacts renders files again with the target's facts (the first
// render, before the target was open, had none).
func (k *kernelOpts) renderWithFacts(rt *host.Runtime, files map[string]*intent.Intent) (*dg.Graph, error) {
	f, err := k.facts(rt, files)
	if err != nil {
		return nil, err
	}
	return render.RenderFilesWith(files, f)
}

// daemonFacts is the daemon's agent.Config.Facts: the target's facts,
// read again at each render (a failed read of the forwarding leaves it
// off, logged); it warns about a dns section it cannot apply.
func (k *kernelOpts) daemonFacts(g *globals, rt *host.Runtime) func(map[string]*intent.Intent) render.Facts {
	return func(files map[string]*intent.Intent) render.Facts {
		k.warnDNS(g, files)
		f, err := k.facts(rt, files)
		if err != nil {
			g.log.WithError(err).Warn("reading the target's facts for render")
		}
		return f
	}
}

// warnDNS warns that the intents' dns section goes nowhere without
// --resolv-conf (netagent then leaves DNS alone, as documented).
func (k *kernelOpts) warnDNS(g *globals, files map[string]*intent.Intent) {
	if k.resolvConf != "" {
		return
	}
	for name, in := range files {
		if in.DNS != nil {
			g.log.WithField("file", name).Warn("the dns section is not applied: netagent hands DNS on only with --resolv-conf PATH")
			return
		}
	}
}
