package ethtool

import (
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/testns"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// -record rewrites testdata/*.hex with the kernel's answers on a veth.
var record = flag.Bool("record", false, "record the kernel's ethtool answers into testdata")

// vethIn makes a veth pair in a test namespace and returns the
// connection and the first end's ifindex.
func vethIn(t *testing.T) (*Conn, int, func(string, ...string) string) {
	testns.RequireRoot(t)
	tgt := testns.New(t)
	la := netlink.NewLinkAttrs()
	la.Name = "et0"
	if err := tgt.NL.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "et1"}); err != nil {
		t.Fatal(err)
	}
	l, err := tgt.NL.LinkByName("et0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(int(tgt.NsHandle()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	run := func(name string, args ...string) string { return testns.Exec(t, tgt, name, args...) }
	return c, l.Attrs().Index, run
}

// recordAnswer stores (with -record) or loads a recorded answer.
func recordAnswer(t *testing.T, name string, got []byte) []byte {
	path := filepath.Join("testdata", name+".hex")
	if *record {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(hex.EncodeToString(got)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecordVeth asks a veth's features and channels over the real
// kernel and, with -record, stores the answers for the codec tests.
func TestRecordVeth(t *testing.T) {
	if !*record {
		t.Skip("run with -record to capture the kernel's answers")
	}
	c, idx, _ := vethIn(t)
	for _, q := range []struct {
		name string
		cmd  uint8
		enc  func() ([]byte, error)
	}{
		{"veth_features", unix.ETHTOOL_MSG_FEATURES_GET, func() ([]byte, error) { return EncodeFeaturesGet(idx) }},
		{"veth_channels", Channels.Get, func() ([]byte, error) { return EncodeGet(Channels, idx) }},
	} {
		req, err := q.enc()
		if err != nil {
			t.Fatal(err)
		}
		reply, err := c.ask(q.cmd, req)
		if err != nil {
			t.Fatal(err)
		}
		recordAnswer(t, q.name, reply)
	}
}
