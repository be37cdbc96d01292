package dhcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/leasebook"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Leases holds the DHCPv4 lease of each interface (leasebook.Book): the
// configurator writes it when it acquires one, the daemon when it renews
// or lets one go; render reads a snapshot to make the items that come
// from a lease (render.Facts).
type Leases struct {
	leasebook.Book[*Lease]
	found found // the leases of other clients an adoption takes over
}

// Set holds l on its interface.
func (b *Leases) Set(l *Lease) { b.Hold(l.Interface, l) }

// Configurator manages DHCP4Lease items. Create acquires a lease in the
// background (reconciler.ContinueInBackground): the reconciler goes on
// with every item that does not depend on the lease, and the operation
// finishes when the server answers, AcquireTimeout passes or the operation
// is canceled. A lease kept in the state directory and still valid is
// asked for again first (INIT-REBOOT); a NAK, or no answer to that, falls
// back to a DISCOVER. Modify is the same INIT-REBOOT for an item read back
// from a kept lease (ReadBack's Kept): the address stays in the kernel
// meanwhile, and without an answer the kept lease stands until it
// expires. The lease goes into Leases and, with StateDir set, the state
// directory.
type Configurator struct {
	Client   *Client
	Leases   *Leases
	StateDir string // "": leases are not kept
	// AcquireTimeout bounds a DISCOVER (the one-shot apply's --wait); 0:
	// until the operation is canceled (the daemon).
	AcquireTimeout time.Duration
	// RebootTimeout bounds an INIT-REBOOT (default 6s).
	RebootTimeout time.Duration
	Log           logrus.FieldLogger // nil: no log
	// Carrier reports whether an interface exists with its carrier up:
	// Delete releases a lease only then (a lease let go with the carrier
	// is kept for INIT-REBOOT). nil: always.
	Carrier func(ifname string) bool
}

// Create implements reconciler.Configurator.
func (c *Configurator) Create(ctx context.Context, it dg.Item) error {
	l := it.(*items.DHCP4Lease)
	done := reconciler.ContinueInBackground(ctx)
	go func() { done(c.acquire(ctx, l, false)) }()
	return nil
}

// Modify implements reconciler.Configurator: only Kept differs (see
// NeedsRecreate), so the kept lease is asked for again.
func (c *Configurator) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	l := newItem.(*items.DHCP4Lease)
	done := reconciler.ContinueInBackground(ctx)
	go func() { done(c.acquire(ctx, l, true)) }()
	return nil
}

// acquire gets the lease of it: INIT-REBOOT of the kept lease if there is
// one still valid, else (or on a NAK) a DISCOVER. With held, the kept
// lease's address is in the kernel already: no answer to the INIT-REBOOT
// keeps it.
func (c *Configurator) acquire(ctx context.Context, it *items.DHCP4Lease, held bool) error {
	o := OptionsOf(it)
	kept := c.asked(it.Dev)
	if kept != nil {
		l, err := c.reboot(ctx, kept, o)
		switch {
		case err == nil:
			return c.hold(l)
		case errors.Is(err, ErrNAK):
			c.logf(it.Dev, err, "kept lease refused; starting over with a DISCOVER")
		case ctx.Err() != nil:
			return err
		case held:
			c.logf(it.Dev, err, "no answer to the INIT-REBOOT; keeping the kept lease until it expires")
			k := *kept
			k.Obtained = ObtainedKept
			return c.hold(&k)
		default:
			c.logf(it.Dev, err, "no answer to the INIT-REBOOT; starting over with a DISCOVER")
		}
	}
	actx := ctx
	if c.AcquireTimeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.AcquireTimeout)
		defer cancel()
	}
	l, err := c.Client.Acquire(actx, it.Dev, o)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return fmt.Errorf("dhcp4 lease on %s: %w within %v", it.Dev, ErrNoLease, c.AcquireTimeout)
		}
		return err
	}
	return c.hold(l)
}

func (c *Configurator) reboot(ctx context.Context, kept *Lease, o Options) (*Lease, error) {
	d := c.RebootTimeout
	if d == 0 {
		d = 6 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return c.Client.Reboot(ctx, kept, o)
}

// kept returns the lease kept for ifname if it is still valid.
func (c *Configurator) kept(ifname string) *Lease {
	if c.StateDir == "" {
		return nil
	}
	l, err := LoadLease(c.StateDir, ifname)
	if err != nil {
		c.logf(ifname, err, "ignoring the kept lease")
		return nil
	}
	if l == nil || !l.ValidAt(c.Client.now()) {
		return nil
	}
	return l
}

// asked returns the lease whose address an acquisition on ifname asks
// for first: the one kept for it, else the one another client holds
// there that an adoption found (Leases.SetFound), if still valid.
func (c *Configurator) asked(ifname string) *Lease {
	if l := c.kept(ifname); l != nil {
		return l
	}
	if l := c.Leases.Found(ifname); l != nil && l.ValidAt(c.Client.now()) {
		return l
	}
	return nil
}

// hold makes l the lease held on its interface, and keeps it; what
// lease4.Check left out of it is logged.
func (c *Configurator) hold(l *Lease) error {
	WarnDropped(c.Log, l)
	c.Leases.Set(l)
	if c.StateDir != "" {
		return SaveLease(c.StateDir, l)
	}
	return nil
}

func (c *Configurator) logf(ifname string, err error, msg string) {
	if c.Log != nil {
		c.Log.WithError(err).WithField("interface", ifname).Info(msg)
	}
}

// Delete lets the lease go. With the interface's carrier gone (or the
// interface), the lease stays kept in the state directory, so that the next
// acquisition asks for the same address (INIT-REBOOT), and nothing is
// sent. Else the intent no longer asks for DHCP on the interface (or the
// item is recreated with new options): the lease, held or kept and still
// valid, is given back to the server (DHCPRELEASE) and forgotten. A
// release that cannot be sent is logged; the lease is forgotten anyway
// (the server frees the address when it ends).
func (c *Configurator) Delete(ctx context.Context, it dg.Item) error {
	dev := it.Name()
	l := c.Leases.Get(dev)
	c.Leases.Drop(dev)
	if c.Carrier != nil && !c.Carrier(dev) {
		return nil
	}
	if l == nil {
		l = c.kept(dev)
	}
	if l != nil && l.ValidAt(c.Client.now()) {
		if err := c.Client.Release(ctx, l, OptionsOf(it.(*items.DHCP4Lease))); err != nil {
			c.logf(dev, err, "the lease is forgotten without a release")
		} else if c.Log != nil {
			c.Log.WithField("interface", dev).WithField("address", l.Address.String()).Info("dhcp4: lease released")
		}
	}
	if c.StateDir != "" {
		ForgetLease(c.StateDir, dev)
	}
	return nil
}

// NeedsRecreate: a new hostname, client id or vendor class is a new
// exchange with the server; an item that differs only by Kept is
// modified (asked for again, keeping the address meanwhile), as is one
// that differs only by CarrierLink (a dependency, no exchange).
func (c *Configurator) NeedsRecreate(oldItem, newItem dg.Item) bool {
	o, n := *oldItem.(*items.DHCP4Lease), *newItem.(*items.DHCP4Lease)
	o.Kept, n.Kept = false, false
	o.CarrierLink, n.CarrierLink = "", ""
	return o != n
}

// OptionsOf returns what the client sends for it.
func OptionsOf(it *items.DHCP4Lease) Options {
	return Options{Hostname: it.Hostname, ClientID: it.ClientID, VendorClass: it.VendorClass}
}

// ReadBack returns the lease items of hint (the intended graph) that are
// held: as intended when Leases holds a lease on the interface; marked
// Kept when only the state directory keeps one still valid at now (a
// restarted agent, or the next one-shot apply: the reconciler then
// modifies it, which asks the server again while the address stays). A
// lease kept for an interface the hint has no lease item for reads back
// too (Kept, without options): the intent dropped dhcp4 there, and the
// reconciler deletes it, which releases it.
// A lease another client holds that an adoption found (Leases.SetFound)
// reads back Kept too, but only where the hint has its lease item on a NIC
// (onNIC): it is asked for, never released.
// It looks only at the interfaces with a lease, never through the graph.
func ReadBack(leases *Leases, stateDir string, hint *dg.Graph, now time.Time) []dg.Item {
	if hint == nil {
		return nil
	}
	held, _ := leases.Snapshot()
	var out []dg.Item
	for dev := range held {
		if want, ok := hint.Get(items.DHCP4LeaseRef(dev)); ok {
			out = append(out, want)
		}
	}
	if leases.IgnoresKept() {
		return out
	}
	kept := map[string]bool{}
	for _, dev := range keptInterfaces(stateDir) {
		if _, h := held[dev]; h {
			continue
		}
		l, err := LoadLease(stateDir, dev)
		if err != nil || l == nil || !l.ValidAt(now) {
			continue
		}
		kept[dev] = true
		out = append(out, keptItem(dev, hint))
	}
	for dev, l := range leases.foundAll() {
		if _, h := held[dev]; !h && !kept[dev] && l.ValidAt(now) && onNIC(hint, dev) {
			out = append(out, keptItem(dev, hint))
		}
	}
	return out
}

// onNIC reports whether hint has a lease item on dev and dev is a NIC
// (its lease follows the carrier: CarrierLink), which is there before
// netagent: on an interface netagent creates, which an adoption takes
// over by a create, the lease item is created too (its create asks for
// the found lease's address as a modify would), not read back to be
// recreated with its interface.
func onNIC(hint *dg.Graph, dev string) bool {
	want, ok := hint.Get(items.DHCP4LeaseRef(dev))
	return ok && want.(*items.DHCP4Lease).CarrierLink != ""
}

// keptItem is the lease item of dev read back Kept: the intended one's
// options, or none when the hint has no lease item there (the reconciler
// then deletes it, which releases the lease).
func keptItem(dev string, hint *dg.Graph) dg.Item {
	k := items.DHCP4Lease{Dev: dev}
	if want, ok := hint.Get(items.DHCP4LeaseRef(dev)); ok {
		k = *want.(*items.DHCP4Lease)
	}
	k.Kept = true
	return &k
}

// keptInterfaces is KeptInterfaces, none without a state directory.
func keptInterfaces(stateDir string) []string {
	if stateDir == "" {
		return nil
	}
	return KeptInterfaces(stateDir)
}

// WarnDropped logs, as a warning, what lease4.Check left out of l or
// changed (the daemon's renewals log the same).
func WarnDropped(log logrus.FieldLogger, l *Lease) {
	if log != nil && len(l.Dropped) > 0 {
		log.WithField("interface", l.Interface).WithField("dropped", l.Dropped).Warn("dhcp4: the server's lease had values that are not used")
	}
}
