package eni

import (
	"slices"
	"testing"
)

// TestPointopoint: the nth pointopoint is the nth address's peer, with
// its own prefix length (the host's without one), as ifupdown2's
// addr_add sends it; one without its address, of the other family, or
// with a broadcast of the same address is refused at its line.
func TestPointopoint(t *testing.T) {
	got := importOK(t, "auto ppp0\niface ppp0\n  address 10.9.0.1/32\n  pointopoint 10.9.0.2\n"+
		"  address 10.8.0.1\n  pointopoint 10.8.1.0/24\n  address 192.0.2.1/24\n")
	want := []string{"10.9.0.1 peer 10.9.0.2/32", "10.8.0.1 peer 10.8.1.0/24", "192.0.2.1/24"}
	if a := got["ppp0"].Addresses; !slices.Equal(a, want) {
		t.Errorf("addresses %q, want %q", a, want)
	}
	got = importOK(t, "auto tun0\niface tun0 inet6\n  address 2001:db8::1/128\n  pointopoint 2001:db8::2/128\n")
	if a := got["tun0"].Addresses; !slices.Equal(a, []string{"2001:db8::1 peer 2001:db8::2/128"}) {
		t.Errorf("IPv6 addresses %q", a)
	}
	refusedAt(t, "auto eth0\niface eth0\n  pointopoint 10.9.0.2\n", "f:3:3: iface eth0: pointopoint: pointopoint #1 is for an address the stanza has not", true)
	refusedAt(t, "auto eth0\niface eth0\n  address 10.9.0.1/32\n  pointopoint 2001:db8::2\n", "f:4:3: iface eth0: pointopoint: 2001:db8::2 is not of the family of 10.9.0.1/32", true)
	refusedAt(t, "auto eth0\niface eth0\n  address 10.9.0.1/24\n  broadcast 10.9.0.255\n  pointopoint 10.9.0.2\n", "f:5:3: iface eth0: pointopoint: a point-to-point address with a broadcast", true)
	refusedAt(t, "auto eth0\niface eth0\n  address 10.9.0.1/32\n  pointopoint x\n", "f:4:3: iface eth0: pointopoint: invalid pointopoint", false)
}
