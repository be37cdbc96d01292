package ndisc

import (
	"bytes"
	"net"
	"testing"
)

// A solicitation is type 133 code 0 with 4 reserved bytes, and the source
// link-layer address option when the MAC is known (RFC 4861 4.1).
func TestMessage(t *testing.T) {
	hw := net.HardwareAddr{2, 0, 0, 0, 0, 7}
	want := []byte{133, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 7}
	if got := Message(hw); !bytes.Equal(got, want) {
		t.Errorf("Message(%s) = %v, want %v", hw, got, want)
	}
	if got := Message(nil); !bytes.Equal(got, want[:8]) {
		t.Errorf("Message(nil) = %v", got)
	}
}
