package link

import (
	"net"
	"testing"
)

// PermanentMACs names every link with its permanent MAC: the link
// dump's, or ethtool's permaddr on a kernel whose dump lacks it; nil for
// a link without one (the fake has a loopback too).
func TestPermanentMACs(t *testing.T) {
	f := NewFakeKernel()
	a, b := net.HardwareAddr{2, 0, 0, 0, 0, 1}, net.HardwareAddr{2, 0, 0, 0, 0, 2}
	f.AddMatchableNIC("eth0", a, "e1000", "")
	f.AddMatchableNIC("eth1", b, "e1000", "")
	f.OlderKernelPermAddr("eth1")
	f.AddNIC("eth2", 1500)
	got, err := f.PermanentMACs()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got["lo"] != nil || got["eth0"].String() != a.String() || got["eth1"].String() != b.String() || got["eth2"] != nil {
		t.Errorf("PermanentMACs: %v", got)
	}
}
