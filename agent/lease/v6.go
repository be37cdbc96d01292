package lease

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/configurators/dhcp6"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// Client6 extends held DHCPv6 leases: dhcp6.Client (the daemon's, over
// the target's Exchanger); tests may fake it.
type Client6 interface {
	Renew(ctx context.Context, l *dhcp6.Lease) (*dhcp6.Lease, error)
	Rebind(ctx context.Context, l *dhcp6.Lease) (*dhcp6.Lease, error)
}

// V6 is DHCPv6 (Family): the leases are extended by Client (nil: each
// lease ends at its expiry) with a RENEW at T1 and a REBIND at T2; the
// kept leases are held at start (read back as held: nothing is asked)
// and renewed on time.
type V6 struct{ Client Client6 }

func (V6) Info() Info {
	return Info{Ref: items.DHCP6LeaseRef, Name: "dhcp6", Option: "ipv6.dhcp6", Withdrawing: "its address",
		Withdrawn: "its address is withdrawn", Refused: "lease taken back by the server"}
}

func (f V6) Exchanger(*dg.Graph, string) Exchange[*dhcp6.Lease] {
	if f.Client == nil {
		return nil
	}
	c := f.Client
	return func(ctx context.Context, l *dhcp6.Lease, rebind bool) (*dhcp6.Lease, error) {
		if rebind {
			return c.Rebind(ctx, l)
		}
		return c.Renew(ctx, l)
	}
}

func (V6) HoldsKept() bool { return true }

// Acquired: no lease was in use before l.
func (V6) Acquired(old, _ *dhcp6.Lease) bool { return old == nil }

// Refused: the server refused, or its REPLY has no address for us.
func (V6) Refused(err error) bool {
	return errors.Is(err, dhcp6.ErrRefused) || errors.Is(err, dhcp6.ErrNoAddress)
}

func (V6) Unusable(err error) bool { return errors.Is(err, dhcp6.ErrUnusable) }

func (V6) Kept(dir string, now time.Time) map[string]*dhcp6.Lease { return dhcp6.KeptLeases(dir, now) }
func (V6) Save(dir string, l *dhcp6.Lease) error                  { return dhcp6.SaveLease(dir, l) }
func (V6) Forget(dir, ifname string)                              { _ = dhcp6.DropLease(dir, ifname) }

func (V6) WarnDropped(log logrus.FieldLogger, l *dhcp6.Lease) { dhcp6.WarnDropped(log, l) }

func (V6) Fields(l *dhcp6.Lease) logrus.Fields {
	return logrus.Fields{"interface": l.Interface, "address": l.Address.String(), "server": l.Server, "dns": l.DNS,
		"renew": l.RenewAt().Format(time.RFC3339), "expires": l.Expires().Format(time.RFC3339)}
}

func (V6) Row(l *dhcp6.Lease) status.LeaseStatus {
	ls := status.LeaseStatus{Family: "ipv6", Address: l.Address.String() + "/128", Server: l.Server,
		Domains: l.Search, Obtained: l.Obtained, Acquired: l.Acquired, Dropped: l.Dropped}
	for _, d := range l.DNS {
		ls.DNS = append(ls.DNS, d.String())
	}
	return ls
}

// facts6 sets f's DHCPv6 leases to used: their addresses (valid until
// each lease's end) and DNS, in the interfaces' order.
func facts6(used map[string]*dhcp6.Lease, f *render.Facts) {
	f.DHCP6, f.LeaseDNS = nil, nil
	for _, name := range slices.Sorted(maps.Keys(used)) {
		l := used[name]
		if f.DHCP6 == nil {
			f.DHCP6 = map[string]render.Lease6{}
		}
		f.DHCP6[name] = render.Lease6{Address: l.Address, ValidUntil: l.Expires(), PreferredUntil: l.PreferredUntil()}
		f.LeaseDNS = append(f.LeaseDNS, l.LinkDNS())
	}
}
