package agent

import (
	"net"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
)

// hotMAC is the permanent address of the NIC the match tests plug in late.
const hotMAC = "52:54:00:00:01:20"

// hotDocs: lan0 is the NIC with hotMAC, renamed, with an address, a route
// through it and a VLAN on it.
func hotDocs() map[string]string {
	return map[string]string{"10-lan.json": `{"version": 1, "interfaces": [
		{"name": "lan0", "type": "physical", "match": {"permanentMac": "` + hotMAC + `"}, "addresses": ["192.0.2.10/24"]},
		{"name": "lan0.10", "type": "vlan", "vlan": {"parent": "lan0", "id": 10}}],
		"routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "lan0", "metric": 10}]}`}
}

// A physical interface matched by permanent MAC whose NIC is not there:
// it fails with "no NIC matches", the address, route and VLAN on it are
// blocked on it, and the agent does not spin (its retries back off: a
// handful of reconciles in a minute). The NIC plugged in later is picked
// up by its link event, long before the next retry is due: renamed lan0,
// with the address, the route and the VLAN in the fakes.
func TestMatchedNICPluggedLaterIsPickedUpByItsLinkEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := configurators.NewFake(nil)
		r := newRig(t, hotDocs(), onFakeNamespace(t, f)).start()
		time.Sleep(time.Minute)
		synctest.Wait()
		st := r.status()
		t.Logf("after a minute with no NIC: %d reconciles, next retry in %v", st.Reconciles, time.Until(st.NextRetry))
		wantNoMatchBlocked(t, st)
		if st.Reconciles > 12 {
			t.Errorf("%d reconciles in a minute while no NIC matches: the retries do not back off", st.Reconciles)
		}
		if time.Until(st.NextRetry) < 10*time.Second {
			t.Fatalf("the next retry is due in %v: the test cannot tell the link event's reconcile from it", time.Until(st.NextRetry))
		}
		eth := f.Links.AddMatchableNIC("eth5", mustMAC(t, hotMAC), "e1000", "pci-0000:00:08.0")
		r.linkEvent("eth5")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if time.Now().After(st.NextRetry) {
			t.Fatal("the retry came before the check")
		}
		wantHotNICConfigured(t, f, eth.Attrs().Index)
		if st := r.status(); !st.Ready {
			t.Errorf("status after the NIC came: %+v", st.Items)
		}
		if !slices.Contains(r.reasons(), reasonLink) {
			t.Errorf("reconciles: %v, none for the link event", r.reasons())
		}
	})
}

func mustMAC(t *testing.T, s string) net.HardwareAddr {
	t.Helper()
	mac, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return mac
}

// wantNoMatchBlocked checks that status shows lan0 failed for no NIC and
// what is on it blocked on it.
func wantNoMatchBlocked(t *testing.T, st status.Status) {
	t.Helper()
	byRef := map[string]status.ItemStatus{}
	for _, it := range st.Items {
		byRef[it.Item] = it
	}
	if lan := byRef["interface/lan0"]; lan.State != "failed" || !strings.Contains(lan.LastError, "no NIC matches permanentMac "+hotMAC) {
		t.Errorf("lan0 with no NIC: %+v", lan)
	}
	for _, ref := range []string{"address/lan0/192.0.2.10/24", "interface/lan0.10", "route/main 198.51.100.0/24 metric 10"} {
		if it := byRef[ref]; it.State != "blocked" || !strings.Contains(it.BlockedOn, "interface/lan0") {
			t.Errorf("%s with no NIC for lan0: %+v (want blocked on interface/lan0)", ref, it)
		}
	}
}

// wantHotNICConfigured checks the fakes: the NIC with ifindex index is
// lan0, with the VLAN on it, the address and the route.
func wantHotNICConfigured(t *testing.T, f *configurators.Fake, index int) {
	t.Helper()
	lan, err := f.Links.LinkByName("lan0")
	if err != nil || lan.Attrs().Index != index {
		t.Fatalf("lan0: %v %v, want the NIC with ifindex %d renamed", lan, err, index)
	}
	if vlan, err := f.Links.LinkByName("lan0.10"); err != nil || vlan.Attrs().ParentIndex != index {
		t.Errorf("lan0.10: %v %v, want a VLAN on ifindex %d", vlan, err, index)
	}
	list, err := f.L3.ReadBack(nil)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, it := range list {
		refs = append(refs, dg.Ref(it).String())
	}
	for _, want := range []string{"address/lan0/192.0.2.10/24", "route/main 198.51.100.0/24 metric 10"} {
		if !slices.Contains(refs, want) {
			t.Errorf("the l3 fake holds %v, want %s", refs, want)
		}
	}
}

// The daemon's status says that a NIC does not exist on this host as
// apply does (host.MissingNICReason), not only that items wait for its
// link: for a physical interface found by its name (eth9) and for the
// items on a matched one whose match found no NIC (lan0).
func TestStatusSaysTheNICDoesNotExist(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		docs := hotDocs()
		docs["20-eth9.json"] = `{"version": 1, "interfaces": [{"name": "eth9", "type": "physical", "addresses": ["198.51.100.9/24"]}]}`
		r := newRig(t, docs, onFakeNamespace(t, configurators.NewFake(nil))).start()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		byRef := map[string]status.ItemStatus{}
		for _, it := range r.status().Items {
			byRef[it.Item] = it
		}
		for ref, want := range map[string]string{
			"interface/eth9":               "NIC eth9 does not exist on this host (a physical interface, found by the name eth9; nothing in the intent creates it)",
			"address/eth9/198.51.100.9/24": "(NIC eth9 does not exist on this host)",
			"address/lan0/192.0.2.10/24":   "(NIC lan0 does not exist on this host)",
			"interface/lan0.10":            "(NIC lan0 does not exist on this host)",
		} {
			if it := byRef[ref]; it.State != "blocked" || !strings.Contains(it.BlockedOn, want) {
				t.Errorf("%s: %+v, want blocked with %q", ref, it, want)
			}
		}
	})
}
