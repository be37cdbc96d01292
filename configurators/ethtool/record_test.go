package ethtool

import (
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// -record rewrites testdata/*.hex with the kernel's answers on a veth.
var record = flag.Bool("record", false, "record the kernel's ethtool answers into testdata")

// vethNS makes a test namespace with the veth pair et0/et1 and returns
// it and et0's ifindex.
func vethNS(t *testing.T) (*netnsx.Target, int) {
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
	return tgt, l.Attrs().Index
}

// vethIn makes a veth pair in a test namespace and returns the
// connection, et0's ifindex and a runner of programs in the namespace.
func vethIn(t *testing.T) (*Conn, int, func(string, ...string) string) {
	tgt, idx := vethNS(t)
	c, err := Dial(int(tgt.NsHandle()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	run := func(name string, args ...string) string { return testns.Exec(t, tgt, name, args...) }
	return c, idx, run
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

// TestLiveVethAnswers asks a veth's features and channels over the real
// kernel and checks them as the recorded ones are checked; with -record
// it stores them for the codec tests (testdata/).
func TestLiveVethAnswers(t *testing.T) {
	c, idx, _ := vethIn(t)
	for _, q := range []struct {
		name string
		cmd  uint8
		enc  func() ([]byte, error)
	}{
		{"veth_features", unix.ETHTOOL_MSG_FEATURES_GET, func() ([]byte, error) { return EncodeFeaturesGet(idx) }},
		{"veth_channels", Channels.Get, func() ([]byte, error) { return EncodeGet(Channels, idx) }},
		{"veth_linkmodes", unix.ETHTOOL_MSG_LINKMODES_GET, func() ([]byte, error) { return EncodeLinkModesGet(idx) }},
	} {
		req, err := q.enc()
		if err != nil {
			t.Fatal(err)
		}
		reply, err := c.ask(q.cmd, req)
		if err != nil {
			t.Fatal(err)
		}
		if *record {
			recordAnswer(t, q.name, reply)
		}
		checkVethAnswer[q.name](t, reply)
	}
}

// checkVethAnswer checks a veth's answer, by its testdata name.
var checkVethAnswer = map[string]func(*testing.T, []byte){
	"veth_features":  checkVethFeatures,
	"veth_channels":  checkVethChannels,
	"veth_linkmodes": checkVethLinkModes,
}
