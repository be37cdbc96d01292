package dhcptest

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/netagent/netagent/internal/testns"
)

// The server answers a client's DISCOVER and REQUEST with what the test
// set, even values no real server sends (a renewal time of 0), and counts
// what it received.
func TestServerAnswersAsSet(t *testing.T) {
	t.Parallel()
	client := testns.New(t)
	s := Start(t, client, "up0", Reply{Address: netip.MustParsePrefix("10.77.0.100/0"), Router: netip.MustParseAddr("10.77.0.100"),
		LeaseTime: time.Minute, Options: []dhcpv4.Option{dhcpv4.OptRenewTimeValue(0)}})
	var ack *dhcpv4.DHCPv4
	err := client.Do(func() error {
		c, err := nclient4.New("up0", nclient4.WithTimeout(2*time.Second), nclient4.WithRetry(3))
		if err != nil {
			return err
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		l, err := c.Request(ctx)
		if err == nil {
			ack = l.ACK
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if ones, _ := ack.SubnetMask().Size(); ones != 0 || !ack.YourIPAddr.Equal(ack.Router()[0]) || ack.IPAddressRenewalTime(time.Hour) != 0 {
		t.Errorf("ACK %s", ack.Summary())
	}
	if s.Count(dhcpv4.MessageTypeDiscover) != 1 || s.Count(dhcpv4.MessageTypeRequest) != 1 {
		t.Errorf("counted %d DISCOVER, %d REQUEST", s.Count(dhcpv4.MessageTypeDiscover), s.Count(dhcpv4.MessageTypeRequest))
	}
}
