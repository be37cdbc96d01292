package ethtool

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// kernelUpdateWoL applies the WOL_MODES bitset of a WOL_SET request to the
// current modes as the kernel does (net/ethtool/bitset.c
// ethnl_update_bitset32): a bit list sets the named bits (with NOMASK
// after clearing every bit; an empty list is still a list), a compact bitset sets the bits of its mask
// (with NOMASK: all bits) to its value.
func kernelUpdateWoL(t *testing.T, cur uint32, msg []byte) uint32 {
	t.Helper()
	var nest []byte
	ad, err := netlink.NewAttributeDecoder(msg)
	if err != nil {
		t.Fatal(err)
	}
	for ad.Next() {
		if ad.Type() == unix.ETHTOOL_A_WOL_MODES {
			nest = ad.Bytes()
		}
	}
	if nest == nil {
		t.Fatal("no ETHTOOL_A_WOL_MODES in the request")
	}
	ad, _ = netlink.NewAttributeDecoder(nest)
	nomask, list := false, []byte(nil)
	value, mask, compact := uint32(0), uint32(0), false
	for ad.Next() {
		switch ad.Type() {
		case unix.ETHTOOL_A_BITSET_NOMASK:
			nomask = true
		case unix.ETHTOOL_A_BITSET_BITS:
			list = ad.Bytes()
			if list == nil {
				list = []byte{}
			}
		case unix.ETHTOOL_A_BITSET_VALUE:
			value, compact = binary.NativeEndian.Uint32(ad.Bytes()), true
		case unix.ETHTOOL_A_BITSET_MASK:
			mask = binary.NativeEndian.Uint32(ad.Bytes())
		}
	}
	if list == nil {
		if !compact {
			t.Fatal("neither a bit list nor a value: the kernel refuses the request")
		}
		if nomask {
			mask = ^uint32(0)
		}
		return cur&^mask | value&mask
	}
	if nomask {
		cur = 0
	}
	bits, _ := netlink.NewAttributeDecoder(list)
	for bits.Next() {
		bad, _ := netlink.NewAttributeDecoder(bits.Bytes())
		name, on := "", nomask
		for bad.Next() {
			switch bad.Type() {
			case unix.ETHTOOL_A_BITSET_BIT_NAME:
				name = bad.String()
			case unix.ETHTOOL_A_BITSET_BIT_VALUE:
				on = true
			}
		}
		i := slices.Index(wolModeNames, name)
		if i < 0 {
			t.Fatalf("bit %q: the kernel refuses an unknown name", name)
		}
		cur = cur&^(1<<i) | map[bool]uint32{true: 1 << i}[on]
	}
	return cur
}

// libraryWoLSet is the request github.com/mdlayher/ethtool v0.7.0 sends
// (WakeOnLAN.encode): the modes as both value and mask.
func libraryWoLSet(t *testing.T, modes uint32) []byte {
	ae := netlink.NewAttributeEncoder()
	encodeHeader(ae, unix.ETHTOOL_A_WOL_HEADER, 3, 0)
	ae.Nested(unix.ETHTOOL_A_WOL_MODES, func(nae *netlink.AttributeEncoder) error {
		nae.Uint32(unix.ETHTOOL_A_BITSET_SIZE, 8)
		nae.Uint32(unix.ETHTOOL_A_BITSET_VALUE, modes)
		nae.Uint32(unix.ETHTOOL_A_BITSET_MASK, modes)
		return nil
	})
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncodeWakeOnLANSetReplacesTheModes applies the request's bytes as
// the kernel does: a write of fewer modes than are set clears the others
// and a write of 0 clears all, where the library's request (checked on
// the same model) keeps them, as the e100 in the VM showed ("32 after
// setting 0").
func TestEncodeWakeOnLANSetReplacesTheModes(t *testing.T) {
	g, u, p := items.EthtoolWakeOnLan["magic"], items.EthtoolWakeOnLan["unicast"], items.EthtoolWakeOnLan["phy"]
	for _, tc := range []struct {
		name              string
		cur, set          uint32
		want, wantLibrary uint32
	}{
		{"g+u to g", g | u, g, g, g | u},
		{"g to 0", g, 0, 0, g},
		{"g+u to 0", g | u, 0, 0, g | u},
		{"0 to g+u", 0, g | u, g | u, g | u},
		{"g to p+u", g, p | u, p | u, g | p | u},
		{"all eight", 0, 0xff, 0xff, 0xff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := EncodeWakeOnLANSet(3, tc.set)
			if err != nil {
				t.Fatal(err)
			}
			if got := kernelUpdateWoL(t, tc.cur, b); got != tc.want {
				t.Errorf("modes %#x after writing %#x over %#x, want %#x", got, tc.set, tc.cur, tc.want)
			}
			if got := kernelUpdateWoL(t, tc.cur, libraryWoLSet(t, tc.set)); got != tc.wantLibrary {
				t.Errorf("the model gives %#x for the library's request, want %#x", got, tc.wantLibrary)
			}
		})
	}
}

// TestEncodeWakeOnLANSetBytes pins the request: header with the ifindex,
// then WOL_MODES holding NOMASK and the list of the set modes' names,
// without VALUE or MASK (the kernel refuses those beside a list).
func TestEncodeWakeOnLANSetBytes(t *testing.T) {
	b, err := EncodeWakeOnLANSet(3, items.EthtoolWakeOnLan["magic"]|items.EthtoolWakeOnLan["unicast"])
	if err != nil {
		t.Fatal(err)
	}
	ae := netlink.NewAttributeEncoder()
	ae.Nested(unix.ETHTOOL_A_WOL_HEADER, func(h *netlink.AttributeEncoder) error {
		h.Uint32(unix.ETHTOOL_A_HEADER_DEV_INDEX, 3)
		return nil
	})
	ae.Nested(unix.ETHTOOL_A_WOL_MODES, func(m *netlink.AttributeEncoder) error {
		m.Flag(unix.ETHTOOL_A_BITSET_NOMASK, true)
		m.Nested(unix.ETHTOOL_A_BITSET_BITS, func(l *netlink.AttributeEncoder) error {
			for _, name := range []string{"magic", "ucast"} {
				l.Nested(unix.ETHTOOL_A_BITSET_BITS_BIT, func(bit *netlink.AttributeEncoder) error {
					bit.String(unix.ETHTOOL_A_BITSET_BIT_NAME, name)
					return nil
				})
			}
			return nil
		})
		return nil
	})
	want, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want) {
		t.Errorf("request\n%x\nwant\n%x", b, want)
	}
	if _, err := EncodeWakeOnLANSet(3, 1<<8); err == nil || !strings.Contains(err.Error(), "above the kernel's 8 modes") {
		t.Errorf("a ninth bit: %v", err)
	}
}

// TestWakeOnLANNarrowedAndGivenBackToOff applies unicast+magic to a NIC
// whose Wake-on-LAN was off, narrows it to magic (unicast goes), then
// removes it from the intent: the found value, off, comes back. On an
// e100, which supports magic only, magic+unicast is refused and changes
// nothing.
func TestWakeOnLANNarrowedAndGivenBackToOff(t *testing.T) {
	k := NewFakeKernel()
	nic := k.AddE100("et0", 3)
	c := k.Configurator(t.TempDir())
	ctx := context.Background()
	g, u := items.EthtoolWakeOnLan["magic"], items.EthtoolWakeOnLan["unicast"]
	nic.WakeOnLANSupported |= u // this test's NIC also supports unicast
	modes := func() uint32 { return nic.Groups["wake-on-lan"].Cur["modes"] }
	both := ethtoolItem(map[string]uint32{"wake-on-lan/modes": g | u})
	if err := c.Create(ctx, both); err != nil {
		t.Fatal(err)
	}
	if modes() != g|u {
		t.Fatalf("modes %#x, want %#x", modes(), g|u)
	}
	magic := ethtoolItem(map[string]uint32{"wake-on-lan/modes": g})
	if err := c.Modify(ctx, both, magic); err != nil {
		t.Fatal(err)
	}
	if modes() != g {
		t.Fatalf("modes %#x after narrowing to magic, want %#x", modes(), g)
	}
	phy := ethtoolItem(map[string]uint32{"wake-on-lan/modes": items.EthtoolWakeOnLan["phy"]})
	if err := c.Modify(ctx, magic, phy); err == nil || !strings.Contains(err.Error(), "unsupported WoL mode") {
		t.Errorf("phy on a NIC without it: %v", err)
	}
	if modes() != g {
		t.Fatalf("modes %#x after a refused write, want %#x", modes(), g)
	}
	if err := c.Delete(ctx, magic); err != nil {
		t.Fatal(err)
	}
	if modes() != 0 {
		t.Errorf("modes %#x after leaving the intent, want the found 0", modes())
	}
	e100 := k.AddE100("et1", 4)
	c = k.Configurator(t.TempDir())
	if err := c.Create(ctx, &items.Ethtool{Interface: "et1", Settings: map[string]uint32{"wake-on-lan/modes": g | u}}); err == nil {
		t.Error("magic+unicast on an e100 accepted")
	}
	if m := e100.Groups["wake-on-lan"].Cur["modes"]; m != 0 {
		t.Errorf("e100 modes %#x after a refused write, want 0", m)
	}
}
