package nftables

import (
	"testing"
	"time"

	gnft "github.com/google/nftables"

	"github.com/netagent/netagent/items"
)

// A set's timeout is encoded as the kernel's flag and default, read back
// in the model's spelling, and a timeout set's elements that carry a
// timeout (added at runtime) are left out of the read-back.
func TestSetTimeoutCodec(t *testing.T) {
	tab := &gnft.Table{Name: "t", Family: gnft.TableFamilyINet}
	s, err := encodeSet(tab, items.NftSet{Name: "s", Type: "ipv4_addr", Timeout: "90s"})
	if err != nil || !s.HasTimeout || s.Timeout != 90*time.Second {
		t.Fatalf("encodeSet: %+v, %v", s, err)
	}
	if got := setTimeout(s); got != "1m30s" {
		t.Errorf("setTimeout = %q, want 1m30s", got)
	}
	if got := setTimeout(&gnft.Set{}); got != "" {
		t.Errorf("setTimeout of a set without the flag = %q", got)
	}
	elems := []gnft.SetElement{{Key: []byte{10, 0, 0, 1}}, {Key: []byte{10, 0, 0, 2}, Timeout: time.Minute, Expires: time.Second},
		{Key: []byte{10, 0, 0, 3}, Expires: time.Second}}
	if got := staticElements(&gnft.Set{}, elems); len(got) != 3 {
		t.Errorf("staticElements of a set without timeouts: %v", got)
	}
	if got := staticElements(&gnft.Set{HasTimeout: true}, elems); len(got) != 1 || got[0].Key[3] != 1 {
		t.Errorf("staticElements of a timeout set: %v", got)
	}
	if _, err := encodeSet(tab, items.NftSet{Name: "s", Type: "ipv4_addr", Timeout: "x"}); err == nil {
		t.Error("encodeSet of a bad timeout: no error")
	}
}
