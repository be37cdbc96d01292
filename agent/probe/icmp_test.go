package probe

import (
	"encoding/binary"
	"net/netip"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/testns"
)

// Only this probe's reply from its address to a request it sent counts.
func TestMatchesOnlyOurReply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v6, raw bool
	}{{"ipv4 raw", false, true}, {"ipv4 ping socket", false, false}, {"ipv6 raw", true, true}, {"ipv6 ping socket", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			addr, other := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.9")
			if tc.v6 {
				addr, other = netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::9")
			}
			c := &echoConn{v6: tc.v6, raw: tc.raw, addr: addr, id: 0x1234}
			copy(c.token[:], "0123456789abcdef")
			reply := func(mod func(b []byte)) []byte {
				b := c.request(1)
				b[0] = icmpEchoReply
				if tc.v6 {
					b[0] = icmp6EchoReply
				}
				mod(b)
				if tc.raw && !tc.v6 { // a raw IPv4 socket reads the IP header too
					hdr := make([]byte, 20, 20+len(b))
					hdr[0] = 0x45
					b = append(hdr, b...)
				}
				return b
			}
			keep := func([]byte) {}
			if !c.matches(reply(keep), sa(addr), 2) {
				t.Fatal("our own reply does not match")
			}
			for why, b := range map[string][]byte{
				"a request":         reply(func(b []byte) { b[0] = c.request(0)[0] }),
				"a sequence unsent": reply(func(b []byte) { binary.BigEndian.PutUint16(b[6:], 2) }),
				"another token":     reply(func(b []byte) { b[8] ^= 1 }),
				"a short packet":    reply(func(b []byte) {})[:len(reply(keep))-1],
				"a nonzero code":    reply(func(b []byte) { b[1] = 1 }),
			} {
				if c.matches(b, sa(addr), 2) {
					t.Errorf("%s matches", why)
				}
			}
			if c.matches(reply(keep), sa(other), 2) {
				t.Error("a reply from another address matches")
			}
			otherID := reply(func(b []byte) { binary.BigEndian.PutUint16(b[4:], 0x4321) })
			if got := c.matches(otherID, sa(addr), 2); got != !tc.raw {
				t.Errorf("a reply with another id matches: %v (want a match only on a ping socket, where the kernel owns the id)", got)
			}
		})
	}
}

func sa(a netip.Addr) unix.Sockaddr {
	if a.Is4() {
		return &unix.SockaddrInet4{Addr: a.As4()}
	}
	return &unix.SockaddrInet6{Addr: a.As16()}
}

func TestChecksum(t *testing.T) {
	// An echo request as ping(8) sends it: type 8, id 0x0001, seq 0x0001.
	b := []byte{8, 0, 0, 0, 0, 1, 0, 1, 'a', 'b', 'c'}
	binary.BigEndian.PutUint16(b[2:], checksum(b))
	if checksum(b) != 0 {
		t.Errorf("a packet with its checksum filled in sums to %#x, want 0", checksum(b))
	}
	if got := checksum([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}); got != ^uint16(0xddf2) {
		t.Errorf("RFC 1071 example: %#x, want %#x", got, ^uint16(0xddf2))
	}
}

// Root in a fresh namespace gets a raw socket (ping_group_range "1 0"
// admits nobody); once the range admits it, the unprivileged ping socket.
func TestSocketKindFollowsPingGroupRange(t *testing.T) {
	tgt := testns.New(t)
	kind := func() bool {
		t.Helper()
		c, err := openEcho(tgt, netip.MustParseAddr("127.0.0.1"))
		if err != nil {
			t.Fatal(err)
		}
		c.close()
		return c.raw
	}
	if !kind() {
		t.Error("with the default ping_group_range the socket is a ping socket, want raw")
	}
	if err := tgt.Do(func() error {
		return os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 0"), 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	if kind() {
		t.Error("with ping_group_range admitting root the socket is raw, want a ping socket")
	}
}
