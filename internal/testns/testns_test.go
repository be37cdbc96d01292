package testns_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/testns"
	"github.com/vishvananda/netlink"
)

func TestNewNamespaceIsIsolatedAndRemoved(t *testing.T) {
	var name string
	t.Run("inner", func(t *testing.T) {
		tgt := testns.New(t)
		name = tgt.Name
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "tns0"}, PeerName: "tns1"}
		if err := tgt.NL.LinkAdd(veth); err != nil {
			t.Fatal(err)
		}
		out := testns.Exec(t, tgt, "ip", "-br", "link")
		if !strings.Contains(out, "tns0") || !strings.Contains(out, "lo ") {
			t.Fatalf("namespace links:\n%s", out)
		}
		if _, err := netlink.LinkByName("tns0"); err == nil {
			t.Fatal("the veth leaked into the test's own namespace")
		}
	})
	if out, _ := exec.Command("ip", "netns", "list").CombinedOutput(); strings.Contains(string(out), name) {
		t.Fatalf("namespace %s not removed", name)
	}
}
