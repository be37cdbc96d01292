//go:build vmtest

package netns_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// TestInVMBridgeVLANTrunk: a trunk port of all 4094 VLANs (1 as pvid and
// untagged, 2-4094 tagged) is applied as one request of one range
// (captured on an nlmon device), reads back equal with `bridge -j -c vlan
// show`, and a second apply writes nothing; a VLAN in the middle of the
// range changing its flags, or going, is one request of that VLAN alone.
// The applies' times are logged (figures, not assertions: the VM runs
// under TCG).
func TestInVMBridgeVLANTrunk(t *testing.T) {
	tgt := linkVMNamespace(t)
	env := newLinkEnv(t, tgt)
	linkDummies(t, tgt, "eth0")
	nic := linkNICs("eth0")[0]
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, Attrs: &items.BridgeAttrs{VLANFiltering: true}}
	p0 := &items.Port{IfName: "eth0", Master: "br0", MasterKind: items.KindBridge}
	env.applyTwice(nic, br, p0)
	capt := newVLANCapture(t, tgt)

	rng := func(from, to uint16, untagged bool) items.VLANRange {
		return items.VLANRange{From: from, To: to, Untagged: untagged}
	}
	pvid1 := items.VLANRange{From: 1, To: 1, PVID: true, Untagged: true}
	steps := []struct {
		name string
		set  items.VLANSet
		want []string // the VLAN requests, as vlanCapture writes them
	}{
		{"the trunk", items.VLANSet{pvid1, rng(2, 4094, false)}, []string{"add 2-4094"}},
		{"2000 untagged", items.VLANSet{pvid1, rng(2, 1999, false), rng(2000, 2000, true), rng(2001, 4094, false)}, []string{"add 2000 untagged"}},
		{"2000 goes", items.VLANSet{pvid1, rng(2, 1999, false), rng(2001, 4094, false)}, []string{"del 2000"}},
		{"2000 back", items.VLANSet{pvid1, rng(2, 4094, false)}, []string{"add 2000"}},
	}
	for _, st := range steps {
		trunk := &items.BridgeVLANs{IfName: "eth0", Bridge: "br0", VLANs: st.set}
		capt.take()
		start := time.Now()
		log := env.apply(nic, br, p0, trunk)
		took := time.Since(start)
		// A modify even for the first: the intent's item reads back as
		// the port's default membership.
		linkWantOps(t, log, "modify bridge-vlans/eth0")
		if got := capt.take(); !slices.Equal(got, st.want) {
			t.Errorf("%s: vlan requests %q, want %q", st.name, got, st.want)
		}
		again := time.Now()
		if log := env.apply(nic, br, p0, trunk); len(log) != 0 {
			t.Errorf("%s: second apply ran operations:\n%s", st.name, log)
		}
		tookAgain := time.Since(again)
		if got := capt.take(); len(got) != 0 {
			t.Errorf("%s: the second apply wrote vlans %q", st.name, got)
		}
		env.checkReadBack(nic, br, p0, trunk)
		if got := bridgeVLANShow(t, tgt, "eth0"); !slices.Equal(got, st.set) {
			t.Errorf("%s: bridge vlan show: %s, want %s", st.name, got, st.set)
		}
		t.Logf("vm-figure bridge-vlan-trunk %q: apply %v, no-op apply %v", st.name, took.Round(time.Millisecond), tookAgain.Round(time.Millisecond))
	}
}

// bridgeVLANShow reads a member's VLANs with `bridge -j -c vlan show dev`,
// canonical.
func bridgeVLANShow(t *testing.T, tgt *netnsx.Target, dev string) items.VLANSet {
	t.Helper()
	var members []struct {
		IfName string `json:"ifname"`
		VLANs  []struct {
			VLAN    uint16   `json:"vlan"`
			VLANEnd uint16   `json:"vlanEnd"`
			Flags   []string `json:"flags"`
		} `json:"vlans"`
	}
	out := linkExec(t, tgt, "bridge", "-j", "-c", "vlan", "show", "dev", dev)
	if err := json.Unmarshal([]byte(out), &members); err != nil {
		t.Fatalf("bridge -j vlan show: %v\n%s", err, out)
	}
	var set items.VLANSet
	for _, m := range members {
		if m.IfName != dev {
			continue
		}
		for _, v := range m.VLANs {
			r := items.VLANRange{From: v.VLAN, To: max(v.VLAN, v.VLANEnd)}
			r.PVID, r.Untagged = slices.Contains(v.Flags, "PVID"), slices.Contains(v.Flags, "Egress Untagged")
			set = append(set, r)
		}
	}
	return set.Canonical()
}

// vlanCapture reads the namespace's netlink traffic on an nlmon device
// and keeps its AF_BRIDGE RTM_SETLINK and RTM_DELLINK requests' VLAN
// entries, one string per request: "add 2-4094", "del 2000".
type vlanCapture struct {
	t  *testing.T
	fd int
}

func newVLANCapture(t *testing.T, tgt *netnsx.Target) *vlanCapture {
	t.Helper()
	if err := tgt.NL.LinkAdd(&netlink.GenericLink{LinkAttrs: netlink.LinkAttrs{Name: "nlmon0"}, LinkType: "nlmon"}); err != nil {
		t.Fatalf("adding nlmon0: %v", err)
	}
	mon := linkNL(t, tgt, "nlmon0")
	if err := tgt.NL.LinkSetUp(mon); err != nil {
		t.Fatal(err)
	}
	c := &vlanCapture{t: t, fd: -1}
	proto := int(htons(unix.ETH_P_ALL))
	err := tgt.Do(func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, proto)
		if err != nil {
			return err
		}
		c.fd = fd
		// Room for the read-backs' dumps between two takes.
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20); err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: mon.Attrs().Index})
	})
	if c.fd >= 0 {
		t.Cleanup(func() { unix.Close(c.fd) })
	}
	if err != nil {
		t.Fatalf("packet socket on nlmon0: %v", err)
	}
	return c
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// take returns the VLAN requests captured since the last take.
func (c *vlanCapture) take() []string {
	c.t.Helper()
	var out []string
	buf := make([]byte, 1<<20)
	for {
		n, _, err := unix.Recvfrom(c.fd, buf, 0)
		if errors.Is(err, unix.EAGAIN) {
			return out
		}
		if err != nil {
			c.t.Fatalf("reading nlmon0: %v", err)
		}
		if s := vlanRequest(buf[:n]); s != "" {
			out = append(out, s)
		}
	}
}

// vlanRequest describes an AF_BRIDGE RTM_SETLINK or RTM_DELLINK with
// VLAN entries; "" for any other message.
func vlanRequest(b []byte) string {
	if len(b) < unix.SizeofNlMsghdr+unix.SizeofIfInfomsg {
		return ""
	}
	typ := binary.NativeEndian.Uint16(b[4:6])
	if typ != unix.RTM_SETLINK && typ != unix.RTM_DELLINK {
		return ""
	}
	body := b[unix.SizeofNlMsghdr:min(len(b), int(binary.NativeEndian.Uint32(b[0:4])))]
	if nl.DeserializeIfInfomsg(body).Family != unix.AF_BRIDGE {
		return ""
	}
	attrs, err := nl.ParseRouteAttr(body[unix.SizeofIfInfomsg:])
	if err != nil {
		return fmt.Sprintf("unparsable request: %v", err)
	}
	var set items.VLANSet
	var begin uint16
	for _, a := range attrs {
		if a.Attr.Type&^unix.NLA_F_NESTED != unix.IFLA_AF_SPEC {
			continue
		}
		spec, err := nl.ParseRouteAttr(a.Value)
		if err != nil {
			return fmt.Sprintf("unparsable af_spec: %v", err)
		}
		for _, e := range spec {
			if e.Attr.Type != nl.IFLA_BRIDGE_VLAN_INFO || len(e.Value) < 4 {
				continue
			}
			info := nl.DeserializeBridgeVlanInfo(e.Value)
			r := items.VLANRange{From: info.Vid, To: info.Vid, PVID: info.PortVID(), Untagged: info.EngressUntag()}
			switch {
			case info.Flags&nl.BRIDGE_VLAN_INFO_RANGE_BEGIN != 0:
				begin = info.Vid
				continue
			case info.Flags&nl.BRIDGE_VLAN_INFO_RANGE_END != 0:
				r.From = begin
			}
			set = append(set, r)
		}
	}
	if len(set) == 0 {
		return ""
	}
	op := "add"
	if typ == unix.RTM_DELLINK {
		op = "del"
	}
	return op + " " + set.String()
}
