package ethtool

import (
	"fmt"

	"github.com/mdlayher/ethtool"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// Kernel is what the configurator needs of the kernel: the link's index,
// its features, and the groups of plain settings by name (the codec's
// groups, and "link" and "wake-on-lan" through the library). FakeKernel
// is the package's fake.
type Kernel interface {
	// Index fails with ErrNoLink for a link that does not exist.
	Index(name string) (int, error)
	// MTU is the link's MTU, which the settings follow (items.Ethtool).
	MTU(name string) (int, error)
	Features(ifindex int) (Features, error)
	SetFeatures(ifindex int, want map[string]bool) error
	Get(group string, ifindex int) (Values, error)
	Set(group string, ifindex int, set map[string]uint32) error
	// SetSets writes a group's set-valued settings (link: "advertise",
	// exactly those speed and duplex modes; the other advertised bits
	// stay).
	SetSets(group string, ifindex int, sets map[string][]string) error
}

// netKernel is the real kernel of a namespace, less Index (lazyKernel's).
type netKernel struct {
	conn  *Conn
	modes *Modes
}

var _ Kernel = (*lazyKernel)(nil)

// openKernel dials both clients inside the target namespace.
func openKernel(t *netnsx.Target) (*netKernel, error) {
	c, err := Dial(int(t.NsHandle()))
	if err != nil {
		return nil, err
	}
	m, err := DialModes(t.Do)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &netKernel{conn: c, modes: m}, nil
}

// Close closes both clients.
func (k *netKernel) Close() {
	k.conn.Close()
	k.modes.Close()
}

func (k *netKernel) Features(ifindex int) (Features, error) { return k.conn.Features(ifindex) }

func (k *netKernel) SetFeatures(ifindex int, want map[string]bool) error {
	return k.conn.SetFeatures(ifindex, want)
}

func (k *netKernel) Get(group string, ifindex int) (Values, error) {
	switch group {
	case "link":
		lm, err := k.conn.LinkModes(ifindex)
		if err != nil {
			return Values{}, err
		}
		return lm.values(), nil
	case "wake-on-lan":
		m, err := k.modes.WakeOnLAN(ifindex)
		return Values{Cur: map[string]uint32{"modes": uint32(m)}}, err
	}
	g, ok := Groups[group]
	if !ok {
		return Values{}, fmt.Errorf("no ethtool group %q", group)
	}
	return k.conn.Get(g, ifindex)
}

func (k *netKernel) Set(group string, ifindex int, set map[string]uint32) error {
	switch group {
	case "link":
		return k.modes.SetLinkMode(ifindex, linkUpdate(set))
	case "wake-on-lan":
		return k.conn.SetWakeOnLAN(ifindex, set["modes"])
	}
	g, ok := Groups[group]
	if !ok {
		return fmt.Errorf("no ethtool group %q", group)
	}
	return k.conn.Set(g, ifindex, set)
}

func (k *netKernel) SetSets(group string, ifindex int, sets map[string][]string) error {
	want, ok := sets["advertise"]
	if group != "link" || len(sets) != 1 || !ok {
		return fmt.Errorf("no ethtool sets %v in %s", sets, group)
	}
	lm, err := k.conn.LinkModes(ifindex)
	if err != nil {
		return err
	}
	bits, err := lm.advertising(want)
	if err != nil {
		return fmt.Errorf("ifindex %d: %w", ifindex, err)
	}
	return k.modes.SetLinkMode(ifindex, &ethtool.LinkModeUpdate{Advertise: bits})
}

// linkUpdate is the library's update of the set fields.
func linkUpdate(set map[string]uint32) *ethtool.LinkModeUpdate {
	u := &ethtool.LinkModeUpdate{}
	if v, ok := set["speed"]; ok {
		s := int(v)
		u.SpeedMegabits = &s
	}
	if v, ok := set["duplex"]; ok {
		d := ethtool.Half
		if v == items.EthtoolDuplexFull {
			d = ethtool.Full
		}
		u.Duplex = &d
	}
	if v, ok := set["autoneg"]; ok {
		a := ethtool.AutonegOff
		if v == 1 {
			a = ethtool.AutonegOn
		}
		u.Autoneg = &a
	}
	return u
}
