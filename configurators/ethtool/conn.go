package ethtool

import (
	"errors"
	"fmt"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Conn is a generic netlink connection to the ethtool family in one
// network namespace.
type Conn struct {
	c      *genetlink.Conn
	family uint16
}

// Dial connects to the ethtool family in the namespace of the file
// descriptor ns (0: the caller's).
func Dial(ns int) (*Conn, error) {
	c, err := genetlink.Dial(&netlink.Config{Strict: true, NetNS: ns})
	if err != nil {
		return nil, fmt.Errorf("dialing generic netlink: %w", err)
	}
	f, err := c.GetFamily(unix.ETHTOOL_GENL_NAME)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("finding the ethtool netlink family: %w", err)
	}
	return &Conn{c: c, family: f.ID}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Features reads the link's features.
func (c *Conn) Features(ifindex int) (Features, error) {
	b, err := EncodeFeaturesGet(ifindex)
	if err != nil {
		return Features{}, err
	}
	reply, err := c.ask(unix.ETHTOOL_MSG_FEATURES_GET, b)
	if err != nil {
		return Features{}, fmt.Errorf("reading features of ifindex %d: %w", ifindex, err)
	}
	return DecodeFeatures(reply)
}

// SetFeatures turns the named features on or off.
func (c *Conn) SetFeatures(ifindex int, want map[string]bool) error {
	b, err := EncodeFeaturesSet(ifindex, want)
	if err != nil {
		return err
	}
	if err := c.tell(unix.ETHTOOL_MSG_FEATURES_SET, b); err != nil {
		return fmt.Errorf("setting features of ifindex %d: %w", ifindex, err)
	}
	return nil
}

// Get reads g's settings of the link.
func (c *Conn) Get(g Group, ifindex int) (Values, error) {
	b, err := EncodeGet(g, ifindex)
	if err != nil {
		return Values{}, err
	}
	reply, err := c.ask(g.Get, b)
	if err != nil {
		return Values{}, fmt.Errorf("reading %s of ifindex %d: %w", g.Name, ifindex, err)
	}
	return DecodeGet(g, reply)
}

// Set writes the named settings of g.
func (c *Conn) Set(g Group, ifindex int, set map[string]uint32) error {
	b, err := EncodeSet(g, ifindex, set)
	if err != nil {
		return err
	}
	if err := c.tell(g.Set, b); err != nil {
		return fmt.Errorf("setting %s of ifindex %d: %w", g.Name, ifindex, err)
	}
	return nil
}

// LinkModes reads the link's speed, duplex, autoneg and link modes.
func (c *Conn) LinkModes(ifindex int) (LinkModes, error) {
	b, err := EncodeLinkModesGet(ifindex)
	if err != nil {
		return LinkModes{}, err
	}
	reply, err := c.ask(unix.ETHTOOL_MSG_LINKMODES_GET, b)
	if err != nil {
		return LinkModes{}, fmt.Errorf("reading link modes of ifindex %d: %w", ifindex, err)
	}
	return DecodeLinkModes(reply)
}

// ErrNotSupported is what the kernel answers for a setting the driver
// does not implement.
var ErrNotSupported = errors.New("not supported by the driver")

// ask sends a request and returns the one reply's attributes.
func (c *Conn) ask(cmd uint8, b []byte) ([]byte, error) {
	msgs, err := c.execute(cmd, b, 0)
	if err != nil {
		return nil, err
	}
	if len(msgs) != 1 {
		return nil, fmt.Errorf("%w: %d replies to one request", errBadAnswer, len(msgs))
	}
	return msgs[0].Data, nil
}

// tell sends a request that expects only an acknowledgement.
func (c *Conn) tell(cmd uint8, b []byte) error {
	_, err := c.execute(cmd, b, netlink.Acknowledge)
	return err
}

// execute sends one request; a refusal keeps the kernel's extended ack.
func (c *Conn) execute(cmd uint8, b []byte, flags netlink.HeaderFlags) ([]genetlink.Message, error) {
	msgs, err := c.c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: unix.ETHTOOL_GENL_VERSION},
		Data:   b,
	}, c.family, netlink.Request|flags)
	if err == nil {
		return msgs, nil
	}
	if errors.Is(err, unix.EOPNOTSUPP) {
		return nil, fmt.Errorf("%w (%w)", ErrNotSupported, err)
	}
	return nil, err // a netlink.OpError carries the kernel's extended ack
}
