package link

import (
	"errors"
	"testing"
	"time"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// countingInfo counts the link info reads of a rawNL: one by one, and
// whole dumps.
type countingInfo struct {
	rawNL
	single, dumps int
}

func (c *countingInfo) linkInfo(index int) (infoAttrs, error) {
	c.single++
	return c.rawNL.linkInfo(index)
}

func (c *countingInfo) linkMsgs() (map[int][]byte, error) {
	c.dumps++
	return c.rawNL.linkMsgs()
}

// TestReadBackDumpsLinkInfo: read-back reads the bridges' options and the
// bridge ports' cost and priority from one dump of every link's info, not
// one request per link, and reads them as the kernel holds them.
func TestReadBackDumpsLinkInfo(t *testing.T) {
	e := stateEnv{t: t, tgt: testns.New(t), dir: t.TempDir()}
	for _, br := range []string{"br0", "br1", "br2"} {
		e.ip("link", "add", br, "type", "bridge", "stp_state", "1", "forward_delay", "400")
		e.ip("link", "set", br, "alias", "netagent")
	}
	e.ip("link", "add", "p0", "type", "veth", "peer", "name", "p1")
	e.ip("link", "set", "p0", "master", "br1")
	e.ip("link", "set", "dev", "p0", "type", "bridge_slave", "cost", "7", "priority", "9")
	k := e.kernel()
	counting := &countingInfo{rawNL: k.raw.(rawNL)}
	k.raw = counting
	got, err := k.readBack(nil)
	if err != nil {
		t.Fatal(err)
	}
	bridges, ports := 0, 0
	for _, it := range got {
		switch x := it.(type) {
		case *items.Interface:
			if x.Kind != items.KindBridge {
				continue
			}
			bridges++
			if a := items.AttrsOf[*items.BridgeAttrs](x); a == nil || !a.STP || a.ForwardDelay != 4*time.Second {
				t.Errorf("%s read back with %+v", x.IfName, a)
			}
		case *items.Port:
			ports++
			if x.Cost != 7 || x.Priority == nil || *x.Priority != 9 {
				t.Errorf("port %s read back with cost %d priority %v", x.IfName, x.Cost, x.Priority)
			}
		}
	}
	if bridges != 3 || ports != 1 {
		t.Errorf("read back %d bridges and %d ports, want 3 and 1: %v", bridges, ports, got)
	}
	if counting.dumps != 1 || counting.single != 0 {
		t.Errorf("read-back made %d info dumps and %d single reads, want 1 and 0", counting.dumps, counting.single)
	}
}

// TestRawConnKept: a configurator's raw requests share one socket, kept
// over the kernel's refusals, and every answer is its own request's (the
// ack the kernel sends after a single link's message, left unread, is not
// taken for the next request's answer).
func TestRawConnKept(t *testing.T) {
	e := stateEnv{t: t, tgt: testns.New(t), dir: t.TempDir()}
	e.ip("link", "add", "br0", "type", "bridge", "stp_state", "1")
	e.ip("link", "add", "br1", "type", "bridge", "stp_state", "0")
	r := persistentRaw(e.tgt.NsHandle())
	idx := map[string]int{"br0": e.link("br0").Attrs().Index, "br1": e.link("br1").Attrs().Index}
	var first *nl.SocketHandle
	for round := range 3 {
		for name, want := range map[string]uint32{"br0": 1, "br1": 0} {
			info, err := r.linkInfo(idx[name])
			if err != nil {
				t.Fatalf("round %d: %s: %v", round, name, err)
			}
			if stp, ok := info.dataU32(nl.IFLA_BR_STP_STATE); !ok || stp != want {
				t.Errorf("round %d: %s stp_state %d (%v), want %d", round, name, stp, ok, want)
			}
		}
		if _, err := r.linkInfo(9999); !errors.Is(err, unix.ENODEV) {
			t.Errorf("round %d: a missing link: %v, want ENODEV", round, err)
		}
		if err := r.setInfoData(idx["br0"], "bridge", []attr{u32Attr(nl.IFLA_BR_FORWARD_DELAY, 1)}); err == nil {
			t.Errorf("round %d: a forward delay the kernel refuses was set", round)
		}
		if first == nil {
			first = r.conn.sh
		} else if r.conn.sh != first {
			t.Errorf("round %d: the socket was replaced after the kernel's refusals", round)
		}
	}
}
