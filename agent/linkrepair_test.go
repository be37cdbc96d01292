package agent

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

var uplinkRef = dg.ItemRef{Type: items.TypeInterface, Name: "uplink0"}

// withMTU is the kernel's uplink0 with another MTU, as `ip link set mtu`
// leaves it.
func withMTU(objects map[dg.ItemRef]dg.Item, mtu int) {
	i := *objects[uplinkRef].(*items.Interface)
	i.MTU = mtu
	objects[uplinkRef] = &i
}

// A link event that names a link the agent owns reads the links back
// and repairs a hand change at once, minutes before the drift check; the
// events of a link it does not own read nothing back.
func TestLinkEventRepairsAnOwnedLink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, map[string]string{"10-uplink.json": `{"version": 1,
			"interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1500, "addresses": ["192.0.2.2/24"]}]}`}).start()
		time.Sleep(2 * time.Second) // the verification read-back after the start
		synctest.Wait()
		r.k.takeOps()
		r.k.setLink(&items.Link{IfName: "eth9", Index: 9, Kind: "veth", AdminUp: true, OperUp: true, Carrier: true})
		r.linkEvent("eth9")
		time.Sleep(time.Second)
		synctest.Wait()
		if r.k.linkReadCount() != 0 || len(r.k.takeOps()) != 0 {
			t.Fatalf("a foreign link's event: %d link read-backs", r.k.linkReadCount())
		}
		r.k.tamper(func(o map[dg.ItemRef]dg.Item) { withMTU(o, 1300) })
		r.linkEvent("uplink0")
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); !slices.Contains(ops, "modify "+uplinkRef.String()) || r.k.linkReadCount() != 1 {
			t.Fatalf("the owned link's change: ops %v, %d link read-backs", ops, r.k.linkReadCount())
		}
		if !slices.Contains(r.reasons(), reasonDrift) {
			t.Errorf("the repair's reconcile: reasons %v", r.reasons())
		}
	})
}

// A reload (SIGHUP) reads the kernel back and repairs what drifted, with
// the next drift check minutes away.
func TestReloadRepairsDrift(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		r.k.takeOps()
		r.k.tamper(func(o map[dg.ItemRef]dg.Item) { delete(o, routeRef) })
		r.a.Reload()
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if ops := r.k.takeOps(); !slices.Contains(ops, "create "+routeRef.String()) {
			t.Fatalf("after the reload: ops %v", ops)
		}
	})
}

// A bridge of the agent's with nothing of its on it (no address, no
// route: nothing whose notification the owned watcher gets), deleted by
// hand: its link event alone puts it back within a second, by the drift
// check the owned objects' events run, minutes before the periodic one;
// under drift policy report it is only reported.
func TestLinkEventRepairsAnOwnedLinkDeleted(t *testing.T) {
	for _, policy := range []string{"repair", "report"} {
		t.Run(policy, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, map[string]string{"10-br.json": `{"version": 1,
					"interfaces": [{"name": "br9", "type": "bridge", "bridge": {"stp": false}, "drift": "` + policy + `"}]}`},
					func(c *Config) { c.DriftInterval = time.Hour }).start()
				time.Sleep(2 * time.Second) // the verification read-back after the start
				synctest.Wait()
				r.k.takeOps()
				br := items.InterfaceRef("br9")
				r.k.tamper(func(o map[dg.ItemRef]dg.Item) { delete(o, br) })
				r.linkEvent("br9")
				time.Sleep(time.Second)
				synctest.Wait()
				ops := r.k.takeOps()
				if repaired := slices.Contains(ops, "create "+br.String()); repaired != (policy == "repair") {
					t.Fatalf("br9 deleted by hand, policy %s: ops %v a second after its link event", policy, ops)
				}
			})
		})
	}
}
