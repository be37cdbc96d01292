package link

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// TestLargeBatchFromOneDump: batches of minDumpBatch operations or more
// list the links once; a create whose name the dump lacks but that is
// taken by then (both ends of a veth declared), an owned link to adopt, a
// foreign link of a wanted name, VXLANs over a parent and ports of
// bridges all end as the one-by-one path ends them: everything made, the
// foreign link refused and left alone, and the second apply writes
// nothing. The batches look up no name the dump answers.
func TestLargeBatchFromOneDump(t *testing.T) {
	e := newFakeEnv(t)
	e.f.AddNIC("eth0", 1500)
	if err := e.f.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "brx"}}); err != nil {
		t.Fatal(err)
	}
	pairs := minDumpBatch + 2
	var want []dg.Item
	for i := range pairs {
		br, vx := fmt.Sprintf("br%d", i), fmt.Sprintf("vx%d", i)
		want = append(want,
			&items.Interface{IfName: br, Kind: items.KindBridge, AdminUp: true, Alias: "lan"},
			&items.Interface{IfName: vx, Kind: items.KindVxlan, AdminUp: true, Attrs: &items.VxlanAttrs{
				VNI: uint32(i + 1), Remote: netip.MustParseAddr("192.0.2.20"), Parent: "eth0"}},
			&items.Port{IfName: vx, Master: br, MasterKind: items.KindBridge})
	}
	want = append(want,
		&items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v1"}},
		&items.Interface{IfName: "v1", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v0"}},
		&items.Interface{IfName: "eth0", Kind: items.KindPhysical})
	// br0 exists already, netagent's, down: the batch adopts it.
	if st := e.apply(want[0]); st.Err != nil {
		t.Fatal(st.Err)
	}
	if err := e.f.LinkSetDown(e.link("br0")); err != nil {
		t.Fatal(err)
	}
	foreign := &items.Interface{IfName: "brx", Kind: items.KindBridge, AdminUp: true}
	e.f.Take()
	e.f.lookups = 0
	st := e.apply(append(want, foreign)...)
	lookups := e.f.lookups
	if st.Err == nil || !errors.Is(st.Err, ErrNotOwned) || !strings.Contains(st.Err.Error(), "brx") {
		t.Errorf("apply with a foreign brx: %v, want ErrNotOwned naming brx", st.Err)
	}
	if a := e.link("brx").Attrs(); a.Alias != "" || a.Flags&netUp != 0 {
		t.Errorf("foreign brx touched: alias %q flags %v", a.Alias, a.Flags)
	}
	for _, w := range e.f.Take() {
		if strings.HasSuffix(w, " brx") {
			t.Errorf("write to the foreign brx: %s", w)
		}
	}
	// Names the dump answers: the vxlans' parent and the ports' links
	// are not looked up one by one; br0 (existing, adopted), brx (foreign)
	// and v1 (taken by v0's create after the dump) are.
	if lookups > 6 {
		t.Errorf("%d lookups by name for %d pairs in two large batches, want a handful", lookups, pairs)
	}
	e.converge(want...)
}
