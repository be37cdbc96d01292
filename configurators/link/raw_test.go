package link

import (
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// parseInfo reads IFLA_LINKINFO's data and slave data by type, nested
// flags stripped, the last value of a type sent twice; linkInfoOf finds
// IFLA_LINKINFO in an RTM_NEWLINK message.
func TestParseInfo(t *testing.T) {
	info := nl.NewRtAttr(unix.IFLA_LINKINFO|unix.NLA_F_NESTED, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("bridge"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA|unix.NLA_F_NESTED, nil)
	data.AddRtAttr(nl.IFLA_BR_STP_STATE, nl.Uint32Attr(0))
	data.AddRtAttr(nl.IFLA_BR_FORWARD_DELAY, nl.Uint32Attr(400))
	data.AddRtAttr(nl.IFLA_BR_STP_STATE, nl.Uint32Attr(1)) // the last one counts
	slave := info.AddRtAttr(nl.IFLA_INFO_SLAVE_DATA|unix.NLA_F_NESTED, nil)
	slave.AddRtAttr(nl.IFLA_BRPORT_COST, nl.Uint32Attr(7))
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC).Serialize()
	msg = append(msg, nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated("br0")).Serialize()...)
	msg = append(msg, info.Serialize()...)

	li, err := linkInfoOf(msg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseInfo(li)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := got.dataU32(nl.IFLA_BR_STP_STATE); !ok || v != 1 {
		t.Errorf("stp_state %d, %v; want the last value, 1", v, ok)
	}
	if v, ok := got.dataU32(nl.IFLA_BR_FORWARD_DELAY); !ok || v != 400 {
		t.Errorf("forward_delay %d, %v", v, ok)
	}
	if v, ok := got.slaveU32(nl.IFLA_BRPORT_COST); !ok || v != 7 {
		t.Errorf("port cost %d, %v", v, ok)
	}
	for _, typ := range []int{nl.IFLA_BR_HELLO_TIME, 1000, -1} {
		if _, ok := got.dataU32(typ); ok {
			t.Errorf("type %d read, but was not sent", typ)
		}
	}

	bare := nl.NewIfInfomsg(unix.AF_UNSPEC).Serialize() // a link without IFLA_LINKINFO
	if li, err := linkInfoOf(bare); li != nil || err != nil {
		t.Errorf("no IFLA_LINKINFO: %x, %v", li, err)
	}
	if _, err := linkInfoOf(msg[:4]); err == nil {
		t.Error("a short message read")
	}
	if _, err := parseInfo([]byte{64, 0, 1, 0}); err == nil {
		t.Error("a malformed IFLA_LINKINFO read")
	}
}
