package oneshot

import (
	"maps"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/configurators/dhcp6"
)

// Facts returns what render needs of the namespace for files: its IPv6
// forwarding, the resolv.conf path (--resolv-conf), and the DHCPv6 leases
// kept in the state directory that have not expired (their addresses and
// DNS). The one-shot commands and the daemon (DaemonFacts) both read them
// here.
func Facts(rt *host.Runtime, files map[string]*intent.Intent, resolvConf string) (render.Facts, error) {
	fwd, err := rt.IPv6Forwarding()
	f := render.Facts{IPv6Forwarding: fwd, ResolvConf: resolvConf}
	now := time.Now()
	for _, name := range DHCP6Interfaces(files) {
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

// DHCP6Interfaces returns the interfaces of files with ipv6.dhcp6, sorted.
func DHCP6Interfaces(files map[string]*intent.Intent) []string {
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

// needsFacts reports whether files render differently with the host's
// facts: with --resolv-conf, an interface with ipv6.acceptRA, dhcp6 or
// dhcp4 (the leases kept). Prepare renders every other intent (100k
// routes) before it opens the namespace, as validate does.
func needsFacts(files map[string]*intent.Intent, resolvConf string) bool {
	if resolvConf != "" {
		return true
	}
	for _, in := range files {
		for i := range in.Interfaces {
			ifc := &in.Interfaces[i]
			if v := ifc.IPv6; v != nil && (v.AcceptRA || v.DHCP6) || ifc.DHCP4.Enabled() {
				return true
			}
		}
	}
	return false
}

// DNSIgnored names a file whose dns section goes nowhere without
// --resolv-conf (netagent then leaves DNS alone, as documented); "" when
// none has one or resolvConf is set.
func DNSIgnored(files map[string]*intent.Intent, resolvConf string) string {
	if resolvConf != "" {
		return ""
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if files[name].DNS != nil {
			return name
		}
	}
	return ""
}

// WarnDNS logs DNSIgnored's warning.
func WarnDNS(log logrus.FieldLogger, files map[string]*intent.Intent, resolvConf string) {
	if name := DNSIgnored(files, resolvConf); name != "" {
		log.WithField("file", name).Warn("the dns section is not applied: netagent hands DNS on only with --resolv-conf PATH")
	}
}

// DaemonFacts is the daemon's render facts (agent.Config.Facts): Facts,
// read again at each render (a failed read of the forwarding leaves it
// off, logged); it warns about a dns section it cannot apply.
func DaemonFacts(rt *host.Runtime, resolvConf string, log logrus.FieldLogger) func(map[string]*intent.Intent) render.Facts {
	return func(files map[string]*intent.Intent) render.Facts {
		WarnDNS(log, files, resolvConf)
		f, err := Facts(rt, files, resolvConf)
		if err != nil {
			log.WithError(err).Warn("reading the target's facts for render")
		}
		return f
	}
}
