package dhcp6

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/iana"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

var (
	hw     = net.HardwareAddr{2, 0, 0, 0, 0, 1}
	leased = netip.MustParseAddr("2001:db8:77::123")
	dns6   = netip.MustParseAddr("2001:db8:77::53")
)

// reply builds a server's REPLY with modifiers.
func reply(t *testing.T, mods ...dhcpv6.Modifier) *dhcpv6.Message {
	t.Helper()
	m, err := dhcpv6.NewMessage(append([]dhcpv6.Modifier{
		dhcpv6.WithServerID(&dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: net.HardwareAddr{2, 0, 0, 0, 0, 9}}),
	}, mods...)...)
	if err != nil {
		t.Fatal(err)
	}
	m.MessageType = dhcpv6.MessageTypeReply
	return m
}

func withAddr(a netip.Addr, valid time.Duration) dhcpv6.Modifier {
	return func(d dhcpv6.DHCPv6) {
		ia := &dhcpv6.OptIANA{T1: 30 * time.Second, T2: 48 * time.Second}
		ia.Options.Add(&dhcpv6.OptIAAddress{IPv6Addr: a.AsSlice(), PreferredLifetime: valid, ValidLifetime: valid})
		d.UpdateOption(ia)
	}
}

// A REPLY's address, lifetimes, T1/T2, DNS and search list make the
// lease; a REPLY without an address or with a failure status is an error.
func TestLeaseFromReply(t *testing.T) {
	now := time.Unix(1000, 0)
	l, err := LeaseFromReply("up0", reply(t, withAddr(leased, time.Minute), dhcpv6.WithDNS(dns6.AsSlice()),
		dhcpv6.WithDomainSearchList("lan.example")), now)
	if err != nil {
		t.Fatal(err)
	}
	if l.Address != leased || l.Valid != time.Minute || l.T1 != 30*time.Second || l.T2 != 48*time.Second ||
		len(l.DNS) != 1 || l.DNS[0] != dns6 || len(l.Search) != 1 || l.Search[0] != "lan.example" || l.Server == "" {
		t.Errorf("lease %+v", l)
	}
	if !l.Expires().Equal(now.Add(time.Minute)) {
		t.Errorf("expires %v", l.Expires())
	}
	if d := l.LinkDNS(); d.Dev != "up0" || len(d.Nameservers) != 1 {
		t.Errorf("link DNS %+v", d)
	}
	if _, err := LeaseFromReply("up0", reply(t), now); !errors.Is(err, ErrNoAddress) {
		t.Errorf("no IA_NA: %v", err)
	}
	refused := reply(t, withAddr(leased, time.Minute), dhcpv6.WithOption(&dhcpv6.OptStatusCode{StatusCode: iana.StatusNoAddrsAvail, StatusMessage: "full"}))
	if _, err := LeaseFromReply("up0", refused, now); !errors.Is(err, ErrRefused) {
		t.Errorf("refused: %v", err)
	}
}

// The SOLICIT carries a DUID-LL of the MAC (stable across restarts) and,
// when asked, the address wanted.
func TestModifiers(t *testing.T) {
	m, err := dhcpv6.NewSolicit(hw, Modifiers(hw, leased)...)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := m.Options.ClientID().(*dhcpv6.DUIDLL); !ok || id.LinkLayerAddr.String() != hw.String() {
		t.Errorf("client id %v", m.Options.ClientID())
	}
	if a := m.Options.OneIANA().Options.OneAddress(); a == nil || !a.IPv6Addr.Equal(leased.AsSlice()) {
		t.Errorf("IA_NA %v, want %v asked for", m.Options.OneIANA(), leased)
	}
}

// fakeX answers with a REPLY for the address asked, or a fixed one, once
// release is closed; it records the addresses asked for.
type fakeX struct {
	t       *testing.T
	release chan struct{}
	asked   chan netip.Addr
}

func (x *fakeX) Exchange(ctx context.Context, ifname string, want netip.Addr) (*dhcpv6.Message, error) {
	x.asked <- want
	select {
	case <-x.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	a := want
	if !a.IsValid() {
		a = leased
	}
	return reply(x.t, withAddr(a, time.Hour), dhcpv6.WithDNS(dns6.AsSlice())), nil
}

// noop configures nothing (the interface and sysctl items the lease
// needs are taken as there).
type noop struct{}

func (noop) Create(context.Context, dg.Item) error          { return nil }
func (noop) Modify(context.Context, dg.Item, dg.Item) error { return nil }
func (noop) Delete(context.Context, dg.Item) error          { return nil }
func (noop) NeedsRecreate(dg.Item, dg.Item) bool            { return false }

// The lease is acquired in the background: Reconcile returns with the
// operation in progress, the lease is kept in the state directory and
// read back while it has not expired (no second exchange); a restarted
// configurator asks for the kept address; Delete forgets it.
func TestConfiguratorAsync(t *testing.T) {
	dir := t.TempDir()
	x := &fakeX{t: t, release: make(chan struct{}), asked: make(chan netip.Addr, 4)}
	leases := &Leases{}
	c := &Configurator{Client: &Client{X: x}, Leases: leases, StateDir: dir}
	reg := &reconciler.TypeRegistry{}
	for _, typ := range []string{items.TypeInterface, items.TypeSysctl} {
		if err := reg.Register(typ, noop{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.Register(items.TypeDHCP6Lease, c); err != nil {
		t.Fatal(err)
	}
	intended := dg.New("intended", &items.Interface{IfName: "up0", Kind: items.KindPhysical},
		&items.DHCP6Lease{Dev: "up0"})
	current := dg.New("current", &items.Link{IfName: "up0", Carrier: true, OperUp: true, AdminUp: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	records := reconciler.NewRecords() // the resumed run collects the acquisition, not lost
	st := reconciler.New(reg, reconciler.WithRecords(records)).Reconcile(ctx, current, intended)
	if !st.AsyncOpsInProgress {
		t.Fatalf("no operation in progress:\n%s", st.OperationLog)
	}
	if got := <-x.asked; got.IsValid() {
		t.Errorf("first exchange asked for %v", got)
	}
	close(x.release)
	<-st.ReadyToResume
	st = reconciler.New(reg, reconciler.WithRecords(records)).Reconcile(ctx, st.NewCurrentState, intended)
	if st.Err != nil || st.AsyncOpsInProgress {
		t.Fatalf("resumed run: %v, in progress %v:\n%s", st.Err, st.AsyncOpsInProgress, st.OperationLog)
	}
	if l := leases.Get("up0"); l == nil || l.Address != leased {
		t.Fatalf("lease held %v", l)
	}
	if rb := ReadBack(leases, dir, intended, time.Now()); len(rb) != 1 {
		t.Errorf("read back %v, want the lease item", rb)
	}
	fresh := &Leases{} // a restart: only the state directory keeps it
	if rb := ReadBack(fresh, dir, intended, time.Now()); len(rb) != 1 {
		t.Errorf("read back of the kept lease %v, want the lease item", rb)
	}
	if rb := ReadBack(fresh, dir, intended, time.Now().Add(2*time.Hour)); len(rb) != 0 {
		t.Errorf("read back after expiry %v", rb)
	}
	fresh.IgnoreKept()
	if rb := ReadBack(fresh, dir, intended, time.Now()); len(rb) != 0 {
		t.Errorf("read back of a kept lease once they are ignored %v", rb)
	}
	// A restart: a new configurator asks for the kept address.
	c2 := &Configurator{Client: &Client{X: x}, Leases: &Leases{}, StateDir: dir}
	if err := c2.acquire(ctx, "up0"); err != nil {
		t.Fatal(err)
	}
	if got := <-x.asked; got != leased {
		t.Errorf("after a restart asked for %v, want %v", got, leased)
	}
	if err := c2.Delete(ctx, &items.DHCP6Lease{Dev: "up0"}); err != nil {
		t.Fatal(err)
	}
	if l, _ := LoadLease(dir, "up0"); l != nil || c2.Leases.Get("up0") != nil {
		t.Errorf("after Delete: kept %v", l)
	}
}
