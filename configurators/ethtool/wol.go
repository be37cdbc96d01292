package ethtool

import (
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// wolModeNames are the kernel's names of the Wake-on-LAN modes by bit
// (net/ethtool/common.c wol_mode_names: the WAKE_* flags).
var wolModeNames = []string{"phy", "ucast", "mcast", "bcast", "arp", "magic", "magicsecure", "filter"}

// EncodeWakeOnLANSet is the WOL_SET request making modes (a mask of
// WAKE_* bits) the link's whole set of Wake-on-LAN modes: a plain bit list
// (NOMASK), so the kernel clears every mode not named and 0 turns
// Wake-on-LAN off. (github.com/mdlayher/ethtool v0.7.0 sends the modes as
// both value and mask, which can only set bits.)
func EncodeWakeOnLANSet(ifindex int, modes uint32) ([]byte, error) {
	if modes>>len(wolModeNames) != 0 {
		return nil, fmt.Errorf("wake-on-lan modes %#x: bits above the kernel's %d modes", modes, len(wolModeNames))
	}
	bits := map[string]bool{}
	for i, name := range wolModeNames {
		if modes&(1<<i) != 0 {
			bits[name] = true
		}
	}
	ae := netlink.NewAttributeEncoder()
	encodeHeader(ae, unix.ETHTOOL_A_WOL_HEADER, ifindex, 0)
	encodeBitset(ae, unix.ETHTOOL_A_WOL_MODES, bits, true)
	return ae.Encode()
}

// SetWakeOnLAN makes modes the link's Wake-on-LAN modes, clearing the
// others; the kernel refuses (EINVAL) a mode the NIC does not support.
func (c *Conn) SetWakeOnLAN(ifindex int, modes uint32) error {
	b, err := EncodeWakeOnLANSet(ifindex, modes)
	if err != nil {
		return err
	}
	if err := c.tell(unix.ETHTOOL_MSG_WOL_SET, b); err != nil {
		return fmt.Errorf("setting wake-on-lan of ifindex %d to %#x: %w", ifindex, modes, err)
	}
	return nil
}
