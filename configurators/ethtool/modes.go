package ethtool

import (
	"errors"
	"fmt"

	"github.com/mdlayher/ethtool"
	"golang.org/x/sys/unix"
)

// Modes are the link-mode writes and the Wake-on-LAN reads, through
// github.com/mdlayher/ethtool's client (link modes are read by this
// package's codec: Conn.LinkModes says why; Wake-on-LAN is written by
// it: EncodeWakeOnLANSet says why).
type Modes struct{ c *ethtool.Client }

// DialModes opens the library's client; do runs its dial inside the
// target namespace (netnsx.Target.Do), to which the socket stays bound.
func DialModes(do func(func() error) error) (*Modes, error) {
	var c *ethtool.Client
	err := do(func() (err error) {
		c, err = ethtool.New()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dialing the ethtool family: %w", err)
	}
	return &Modes{c: c}, nil
}

// Close closes the client.
func (m *Modes) Close() error { return m.c.Close() }

// SetLinkMode writes the fields of u that are set.
func (m *Modes) SetLinkMode(ifindex int, u *ethtool.LinkModeUpdate) error {
	if err := m.c.UpdateLinkMode(ethtool.Interface{Index: ifindex}, u); err != nil {
		return fmt.Errorf("setting link modes of ifindex %d: %w", ifindex, unsupported(err))
	}
	return nil
}

// WakeOnLAN reads the link's Wake-on-LAN modes.
func (m *Modes) WakeOnLAN(ifindex int) (ethtool.WOLMode, error) {
	w, err := m.c.WakeOnLAN(ethtool.Interface{Index: ifindex})
	if err != nil {
		return 0, fmt.Errorf("reading wake-on-lan of ifindex %d: %w", ifindex, unsupported(err))
	}
	return w.Modes, nil
}

// unsupported marks the driver's EOPNOTSUPP as ErrNotSupported.
func unsupported(err error) error {
	if errors.Is(err, unix.EOPNOTSUPP) {
		return fmt.Errorf("%w (%w)", ErrNotSupported, err)
	}
	return err
}
