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
	"github.com/netagent/netagent/items"
)

// sender is a Sender that records what it is sent and answers with
// answer (nil: no answer, ErrNoResponse-like).
type sender struct {
	fakeX
	sent   []*dhcpv6.Message
	answer func(m *dhcpv6.Message) *dhcpv6.Message
}

func (s *sender) Send(ctx context.Context, ifname string, build func(net.HardwareAddr) (*dhcpv6.Message, error), await bool) (*dhcpv6.Message, error) {
	m, err := build(hw)
	if err != nil {
		return nil, err
	}
	s.sent = append(s.sent, m)
	if !await {
		return nil, nil
	}
	if s.answer == nil {
		return nil, context.DeadlineExceeded
	}
	return s.answer(m), nil
}

func heldLease(t *testing.T, at time.Time) *Lease {
	t.Helper()
	l, err := LeaseFromReply("up0", reply(t, withAddr(leased, time.Hour), dhcpv6.WithDNS(dns6.AsSlice())), at)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A RENEW carries the client's DUID and IAID as the SOLICIT did, the
// server's DUID and the address; a REBIND the same without the server's
// DUID. The REPLY's lease counts from when the exchange began.
func TestRenewAndRebindMessages(t *testing.T) {
	start := time.Unix(5000, 0)
	now := start
	s := &sender{answer: func(m *dhcpv6.Message) *dhcpv6.Message {
		now = now.Add(3 * time.Second) // the server takes its time
		return reply(t, withAddr(leased, 2*time.Hour))
	}}
	c := &Client{X: s, Now: func() time.Time { return now }}
	l := heldLease(t, time.Unix(1000, 0))
	got, err := c.Renew(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Acquired.Equal(start) || got.Valid != 2*time.Hour || got.Server != l.Server || got.Obtained != "renew" {
		t.Errorf("renewed lease %+v, want acquired at %v", got, start)
	}
	if _, err := c.Rebind(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	sol, err := dhcpv6.NewSolicit(hw, Modifiers(hw, netip.Addr{})...)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []dhcpv6.MessageType{dhcpv6.MessageTypeRenew, dhcpv6.MessageTypeRebind} {
		m := s.sent[i]
		if m.MessageType != want {
			t.Errorf("message %d is %s, want %s", i, m.MessageType, want)
		}
		if id, ok := m.Options.ClientID().(*dhcpv6.DUIDLL); !ok || id.LinkLayerAddr.String() != hw.String() {
			t.Errorf("%s: client id %v", want, m.Options.ClientID())
		}
		ia := m.Options.OneIANA()
		if ia == nil || ia.IaId != sol.Options.OneIANA().IaId {
			t.Errorf("%s: IA_NA %v, want the SOLICIT's IAID %v", want, ia, sol.Options.OneIANA().IaId)
		} else if a := ia.Options.OneAddress(); a == nil || !a.IPv6Addr.Equal(leased.AsSlice()) {
			t.Errorf("%s: IA_NA address %v, want %v", want, a, leased)
		}
		if sid := m.Options.ServerID(); (sid != nil) != (want == dhcpv6.MessageTypeRenew) {
			t.Errorf("%s: server id %v", want, sid)
		}
	}
}

// A REPLY that takes the address back (NoBinding, another address) ends
// the lease (ErrRefused); no answer is an error that is neither.
func TestExtendRefused(t *testing.T) {
	l := heldLease(t, time.Now())
	noBinding := func(*dhcpv6.Message) *dhcpv6.Message {
		m := reply(t)
		ia := &dhcpv6.OptIANA{}
		ia.Options.Add(&dhcpv6.OptStatusCode{StatusCode: iana.StatusNoBinding})
		m.UpdateOption(ia)
		return m
	}
	other := func(*dhcpv6.Message) *dhcpv6.Message {
		return reply(t, withAddr(netip.MustParseAddr("2001:db8:77::999"), time.Hour))
	}
	for name, answer := range map[string]func(*dhcpv6.Message) *dhcpv6.Message{"no binding": noBinding, "another address": other} {
		c := &Client{X: &sender{answer: answer}}
		if _, err := c.Renew(context.Background(), l); !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v, want ErrRefused", name, err)
		}
	}
	c := &Client{X: &sender{}}
	if _, err := c.Renew(context.Background(), l); err == nil || errors.Is(err, ErrRefused) || errors.Is(err, ErrNoAddress) {
		t.Errorf("no answer: %v", err)
	}
}

// T1 and T2 are the server's; when it leaves them to the client, 0.5 and
// 0.8 times the preferred lifetime.
func TestRenewAtDefaults(t *testing.T) {
	at := time.Unix(0, 0)
	l := &Lease{Acquired: at, Preferred: 100 * time.Second, Valid: 200 * time.Second}
	if got := l.RenewAt().Sub(at); got != 50*time.Second {
		t.Errorf("default T1 %v", got)
	}
	if got := l.RebindAt().Sub(at); got != 80*time.Second {
		t.Errorf("default T2 %v", got)
	}
	l.T1, l.T2 = 30*time.Second, 60*time.Second
	if l.RenewAt().Sub(at) != 30*time.Second || l.RebindAt().Sub(at) != 60*time.Second {
		t.Errorf("server's T1/T2: %v %v", l.RenewAt().Sub(at), l.RebindAt().Sub(at))
	}
}

// Delete with the carrier gone keeps the lease and sends nothing; with
// the carrier, it releases the lease and forgets it.
func TestDeleteReleasesOnlyWithCarrier(t *testing.T) {
	dir := t.TempDir()
	l := heldLease(t, time.Now())
	if err := SaveLease(dir, l); err != nil {
		t.Fatal(err)
	}
	s := &sender{}
	carrier := false
	c := &Configurator{Client: &Client{X: s}, Leases: &Leases{}, StateDir: dir, Carrier: func(string) bool { return carrier }}
	c.Leases.Set(l)
	if err := c.Delete(context.Background(), &items.DHCP6Lease{Dev: "up0"}); err != nil {
		t.Fatal(err)
	}
	if len(s.sent) != 0 || LoadValid(dir, "up0", time.Now()) == nil || c.Leases.Get("up0") != nil {
		t.Fatalf("carrier lost: sent %v, kept %v, held %v", s.sent, LoadValid(dir, "up0", time.Now()), c.Leases.Get("up0"))
	}
	carrier = true
	if err := c.Delete(context.Background(), &items.DHCP6Lease{Dev: "up0"}); err != nil {
		t.Fatal(err)
	}
	if len(s.sent) != 1 || s.sent[0].MessageType != dhcpv6.MessageTypeRelease {
		t.Errorf("dhcp6 dropped: sent %v, want a RELEASE", s.sent)
	}
	if l, _ := LoadLease(dir, "up0"); l != nil {
		t.Errorf("still kept after the release: %v", l)
	}
}
