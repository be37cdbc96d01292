package host

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// The rule for a change the kernel did not keep: written again at once the
// first time in a row, held from the second (not converging), still held
// at a read-back that follows no write, forgotten once found kept; someone
// else's change is never counted; a new intended value starts over.
func TestVerifierRule(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	mtu := &items.Sysctl{Key: "net/ipv6/conf/eth0/mtu", Value: "9000"}
	fwd := &items.Sysctl{Key: "net/ipv4/ip_forward", Value: "1"}
	ref, fwdRef := dg.Ref(mtu), dg.Ref(fwd)
	intended := dg.New("intended", mtu, fwd)
	current := dg.New("current", mtu, fwd)
	clamped := dg.New("kernel", &items.Sysctl{Key: mtu.Key, Value: "1500"}, &items.Sysctl{Key: fwd.Key, Value: "0"})
	written := map[dg.ItemRef]bool{ref: true}
	v := NewVerifier()

	found, _ := v.Verify(current, clamped, intended, written, now)
	if len(found) != 2 || found[1].Ref != ref || found[1].Held() || found[1].Unkept.Count != 1 || !found[1].Again {
		t.Fatalf("first read-back: %+v", found)
	}
	if found[0].Ref != fwdRef || found[0].Unkept != nil {
		t.Fatalf("someone else's change counted: %+v", found[0])
	}
	found, _ = v.Verify(current, clamped, intended, written, now.Add(time.Second))
	if !found[1].Held() || v.NotConverging() != 1 || found[1].Unkept.Since != now ||
		found[1].Unkept.Reason != "the kernel did not keep the change: "+ref.String()+" was written as "+mtu.String()+", the kernel holds "+(&items.Sysctl{Key: mtu.Key, Value: "1500"}).String() {
		t.Fatalf("second read-back: %+v", found[1].Unkept)
	}
	found, _ = v.Verify(current, clamped, intended, nil, now.Add(2*time.Second))
	if !found[1].Held() || found[1].Again || found[1].Unkept.Count != 2 {
		t.Fatalf("a read-back with no write: %+v", found[1])
	}
	found, kept := v.Verify(current, dg.New("kernel", mtu, fwd), intended, written, now.Add(3*time.Second))
	if len(found) != 0 || kept[ref] != 2 || v.Unkept(ref) != nil {
		t.Fatalf("kept: found %+v kept %v", found, kept)
	}

	v.Verify(current, clamped, intended, written, now)
	intended.Put(&items.Sysctl{Key: mtu.Key, Value: "1500"})
	if got := v.Prune(intended); len(got) != 1 || got[0] != ref || v.Unkept(ref) != nil {
		t.Fatalf("prune %v", got)
	}
}

// A change whose two texts are the same says what differs: a route's
// dependency on the address it goes from, written but not read back.
func TestDriftDescribeHiddenDifference(t *testing.T) {
	addr := dg.ItemRef{Type: items.TypeAddress, Name: "eth0/10.0.0.2/24"}
	mk := func(deps ...dg.ItemRef) *items.Route {
		return &items.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("10.0.0.1"), Dev: "eth0", Deps: deps}
	}
	old, cur := mk(addr), mk()
	if old.String() != cur.String() {
		t.Skipf("the route's text shows its dependencies: %s", old)
	}
	got := Drift{Ref: dg.ItemRef{Type: old.Type(), Name: old.Name()}, Old: old, New: cur}.Describe()
	if !strings.Contains(got, "dependencies") || !strings.Contains(got, addr.String()) {
		t.Errorf("Describe: %s, want the dependency on %s named", got, addr)
	}
}
