package agent

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// A foreign route that comes and goes (the default route of router
// advertisements, proto ra, with ipv6.acceptRA) is no drift: drift checks
// log no repair, count nothing and reconcile nothing, and the route is
// left in the kernel.
func TestForeignRouteIsNoDrift(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, map[string]string{"10-uplink.json": uplinkDoc}, func(c *Config) { c.DriftInterval = time.Minute }).start()
		time.Sleep(2 * time.Second) // past the check that verifies the first reconcile
		synctest.Wait()
		r.k.takeOps()
		before := len(r.reasons())
		ra := &items.Foreign{Kind: items.TypeRoute, Desc: "main ::/0 metric 1024 via fe80::1 dev uplink0 proto 9"}
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) { objs[dg.Ref(ra)] = ra })
		time.Sleep(time.Minute)
		synctest.Wait()
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) { delete(objs, dg.Ref(ra)) })
		time.Sleep(time.Minute)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("ops %v after a foreign route came and went", ops)
		}
		if reasons := r.reasons()[before:]; slices.Contains(reasons, "drift") {
			t.Errorf("reconciles %v: a foreign route is no drift", reasons)
		}
		for _, e := range r.hook.AllEntries() {
			if strings.HasPrefix(e.Message, "drift:") {
				t.Errorf("logged %q for %v", e.Message, e.Data["item"])
			}
		}
		for k, v := range r.scrape() {
			if strings.HasPrefix(k, "netagent_drift_") && v != 0 {
				t.Errorf("metric %s = %v", k, v)
			}
		}
		r.stop()
	})
}
