package dhcp

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/netagent/netagent/configurators/netnsx"
)

// Exchanger runs one DISCOVER-OFFER-REQUEST-ACK exchange on a link and
// returns the ACK: the client's only access to the network.
type Exchanger interface {
	Request(ctx context.Context, ifname string, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, error)
}

// Options are what the client sends (the intent's dhcp4 section).
type Options struct {
	Hostname    string // option 12
	ClientID    string // option 61
	VendorClass string // option 60
}

// requested are the options the client asks for (option 55): dnsmasq,
// like most servers, sends option 121 only to a client that asks.
var requested = []dhcpv4.OptionCode{
	dhcpv4.OptionSubnetMask, dhcpv4.OptionRouter, dhcpv4.OptionDomainNameServer,
	dhcpv4.OptionIPAddressLeaseTime, dhcpv4.OptionRenewTimeValue, dhcpv4.OptionRebindingTimeValue,
	dhcpv4.OptionClasslessStaticRoute,
}

// Modifiers returns what the client adds to its DISCOVER and REQUEST.
func (o Options) Modifiers() []dhcpv4.Modifier {
	mods := []dhcpv4.Modifier{dhcpv4.WithRequestedOptions(requested...)}
	if o.Hostname != "" {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptHostName(o.Hostname)))
	}
	if o.ClientID != "" {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptClientIdentifier([]byte(o.ClientID))))
	}
	if o.VendorClass != "" {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptClassIdentifier(o.VendorClass)))
	}
	return mods
}

// Client acquires leases through an Exchanger.
type Client struct {
	X   Exchanger
	Now func() time.Time // nil: time.Now
}

// Acquire runs an exchange on ifname until ctx ends and returns the lease.
func (c *Client) Acquire(ctx context.Context, ifname string, o Options) (*Lease, error) {
	ack, err := c.X.Request(ctx, ifname, o.Modifiers()...)
	if err != nil {
		return nil, fmt.Errorf("acquiring a DHCPv4 lease on %s: %w", ifname, err)
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	l, err := LeaseFromACK(ifname, ack, now())
	if err != nil {
		return nil, fmt.Errorf("DHCPv4 lease on %s: %w", ifname, err)
	}
	return l, nil
}

// NetnsExchanger is the real Exchanger: nclient4 with its raw socket
// opened in the target namespace. Retry is how many times a DISCOVER or
// REQUEST goes out, Timeout how long each waits for an answer.
type NetnsExchanger struct {
	Target  *netnsx.Target
	Timeout time.Duration // 0: 2s
	Retry   int           // 0: until ctx ends
}

// Request implements Exchanger. Only the socket is opened in the
// namespace (Target.Do); the exchange holds no namespace thread.
func (x *NetnsExchanger) Request(ctx context.Context, ifname string, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, error) {
	timeout, retry := x.Timeout, x.Retry
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	if retry == 0 {
		retry = 1 << 30 // bounded by ctx
	}
	var c *nclient4.Client
	err := x.Target.Do(func() error {
		iface, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		conn, err := nclient4.NewRawUDPConn(iface.Name, nclient4.ClientPort)
		if err != nil {
			return fmt.Errorf("opening a DHCP socket: %w", err)
		}
		c, err = nclient4.NewWithConn(conn, iface.HardwareAddr, nclient4.WithTimeout(timeout), nclient4.WithRetry(retry))
		if err != nil {
			conn.Close()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	lease, err := c.Request(ctx, mods...)
	if err != nil {
		return nil, err
	}
	return lease.ACK, nil
}
