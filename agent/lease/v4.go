package lease

import (
	"context"
	"errors"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/configurators/dhcp"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// Client4 extends held DHCPv4 leases: dhcp.Client (the daemon's, over the
// target's Exchanger); tests may fake it.
type Client4 interface {
	Renew(ctx context.Context, l *lease4.Lease, o dhcp.Options) (*lease4.Lease, error)
	Rebind(ctx context.Context, l *lease4.Lease, o dhcp.Options) (*lease4.Lease, error)
}

// V4 is DHCPv4 (Family): the leases are extended by Client (nil: each
// lease ends at its expiry) with the options of the intended lease item;
// the kept leases are asked for again (INIT-REBOOT), not held.
type V4 struct{ Client Client4 }

func (V4) Info() Info {
	return Info{Ref: items.DHCP4LeaseRef, Name: "dhcp4", Option: "dhcp4", Withdrawing: "its address and routes",
		Withdrawn: "its address and routes are withdrawn", Refused: "lease refused"}
}

// Exchanger sends what the intended lease item asks (its hostname,
// client id and vendor class: dhcp.OptionsOf).
func (f V4) Exchanger(intended *dg.Graph, ifname string) Exchange[*lease4.Lease] {
	if f.Client == nil {
		return nil
	}
	o := dhcp.Options{}
	if intended != nil {
		if it, ok := intended.Get(items.DHCP4LeaseRef(ifname)); ok {
			o = dhcp.OptionsOf(it.(*items.DHCP4Lease))
		}
	}
	c := f.Client
	return func(ctx context.Context, l *lease4.Lease, rebind bool) (*lease4.Lease, error) {
		if rebind {
			return c.Rebind(ctx, l, o)
		}
		return c.Renew(ctx, l, o)
	}
}

func (V4) HoldsKept() bool { return false }

// Acquired: a DISCOVER or an INIT-REBOOT got l.
func (V4) Acquired(_, l *lease4.Lease) bool {
	return l.Obtained == dhcp.ObtainedDiscover || l.Obtained == dhcp.ObtainedReboot
}

func (V4) Refused(err error) bool  { return errors.Is(err, dhcp.ErrNAK) }
func (V4) Unusable(err error) bool { return errors.Is(err, dhcp.ErrUnusable) }

func (V4) Kept(dir string, now time.Time) map[string]*lease4.Lease { return dhcp.KeptLeases(dir, now) }
func (V4) Save(dir string, l *lease4.Lease) error                  { return dhcp.SaveLease(dir, l) }
func (V4) Forget(dir, ifname string)                               { dhcp.ForgetLease(dir, ifname) }

func (V4) WarnDropped(log logrus.FieldLogger, l *lease4.Lease) { dhcp.WarnDropped(log, l) }

func (V4) Fields(l *lease4.Lease) logrus.Fields {
	return logrus.Fields{"interface": l.Interface, "address": l.Address.String(), "server": l.Server.String(),
		"gateway": l.Router.String(), "dns": l.DNS, "obtained": l.Obtained,
		"renew": l.RenewAt().Format(time.RFC3339), "expires": l.Expires().Format(time.RFC3339)}
}

func (V4) Row(l *lease4.Lease) status.LeaseStatus {
	ls := status.LeaseStatus{Family: "ipv4", Address: l.Address.String(), Domains: l.Domains, Obtained: l.Obtained,
		Acquired: l.Acquired, Dropped: l.Dropped}
	if l.Server.IsValid() {
		ls.Server = l.Server.String()
	}
	if l.Router.IsValid() {
		ls.Gateway = l.Router.String()
	}
	for _, d := range l.DNS {
		ls.DNS = append(ls.DNS, d.String())
	}
	return ls
}
