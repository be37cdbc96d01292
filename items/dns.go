package items

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
)

// TypeDNS is the type of DNS items.
const TypeDNS = "dns"

// DNS is the host's resolver configuration as the agent hands it on: to
// the resolv.conf at Path, or to systemd-resolved when Path is its stub
// (configurators/dns decides). Its name is Path. Render merges it from
// the intent's dns section and the leases (see agent/render/dns.go for
// the order and limits); Global and Links keep the two parts apart for
// systemd-resolved, which takes per-link servers.
type DNS struct {
	Path        string
	Nameservers []netip.Addr // merged, in order, at most 3
	Search      []string     // merged, in order
	// Global is the intent's own part (its dns section).
	Global LinkDNS
	// Links are the leases' parts, in the intent's interface order.
	Links []LinkDNS
}

// LinkDNS is the DNS of one source: a lease on an interface (Dev), or the
// intent (Dev "").
type LinkDNS struct {
	Dev         string
	Nameservers []netip.Addr
	Search      []string
}

// Equal compares every field.
func (l LinkDNS) Equal(o LinkDNS) bool {
	return l.Dev == o.Dev && slices.Equal(l.Nameservers, o.Nameservers) && slices.Equal(l.Search, o.Search)
}

// Empty reports whether l gives no server and no domain.
func (l LinkDNS) Empty() bool { return len(l.Nameservers) == 0 && len(l.Search) == 0 }

// Limits of resolv.conf as glibc reads it (resolv.h: MAXNS name servers,
// MAXDNSRCH search domains, and the 256 characters of the search line
// that glibc before 2.26 kept): render merges within them, the intent's
// validation refuses more, and configurators/dns never writes more.
const (
	MaxNameservers = 3
	MaxSearch      = 6
	MaxSearchChars = 256
)

// Silent reports whether d gives nothing at all: no server, no domain, no
// link's part. Render still puts it while the agent handles DNS (a path is
// given): the agent's file at Path, holding servers of a dns section or a
// lease gone since, is then removed (configurators/dns).
func (d *DNS) Silent() bool {
	return len(d.Nameservers) == 0 && len(d.Search) == 0 && d.Global.Empty() && len(d.Links) == 0
}

// DNSRef refers to the DNS item of path.
func DNSRef(path string) dg.ItemRef { return dg.ItemRef{Type: TypeDNS, Name: path} }

func (d *DNS) Type() string   { return TypeDNS }
func (d *DNS) Name() string   { return d.Path }
func (d *DNS) External() bool { return false }

// Dependencies: none. The leases' parts are copied in by render; a
// resolver configuration that names an interface does not need it to
// exist (resolv.conf does not), and systemd-resolved's per-link settings
// are refused for a missing link, which the configurator reports.
func (d *DNS) Dependencies() []dg.Dependency { return nil }

// Equal compares every field.
func (d *DNS) Equal(o dg.Item) bool {
	other, ok := o.(*DNS)
	return ok && other != nil && d.Path == other.Path && slices.Equal(d.Nameservers, other.Nameservers) &&
		slices.Equal(d.Search, other.Search) && d.Global.Equal(other.Global) &&
		slices.EqualFunc(d.Links, other.Links, LinkDNS.Equal)
}

// String describes the configuration in one line.
func (d *DNS) String() string {
	ns := make([]string, len(d.Nameservers))
	for i, a := range d.Nameservers {
		ns[i] = a.String()
	}
	return fmt.Sprintf("dns %s: nameservers [%s], search [%s]", d.Path, strings.Join(ns, " "), strings.Join(d.Search, " "))
}

// Validate checks the path.
func (d *DNS) Validate() error {
	if !strings.HasPrefix(d.Path, "/") {
		return fmt.Errorf("resolv.conf path %q is not absolute", d.Path)
	}
	return nil
}
