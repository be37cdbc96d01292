package linkwatch

import (
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

func TestLinkName(t *testing.T) {
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC).Serialize()
	msg = append(msg, nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(1500)).Serialize()...)
	msg = append(msg, nl.NewRtAttr(unix.IFLA_ADDRESS, []byte{1, 2, 3, 4, 5, 6}).Serialize()...) // padded
	full := append(msg, nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated("uplink0")).Serialize()...)
	if n, ok := linkName(full); !ok || n != "uplink0" {
		t.Errorf("linkName = %q, %v; want uplink0", n, ok)
	}
	if n, ok := linkName(msg); ok {
		t.Errorf("without IFLA_IFNAME: %q", n)
	}
	if _, ok := linkName(full[:len(full)-3]); ok {
		t.Error("a truncated attribute gave a name")
	}
	if _, ok := linkName(full[:8]); ok {
		t.Error("a truncated ifinfomsg gave a name")
	}
}
