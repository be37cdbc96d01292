package agent

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// The intents of the loop tests: an uplink with an address and a route
// through it (the route depends on the uplink's carrier), and more routes.
const (
	uplinkDoc = `{"version": 1,
		"interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]}]}`
	routeDoc = `{"version": 1,
		"routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`
	twoRoutesDoc = `{"version": 1,
		"routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "uplink0"},
		           {"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`
	brokenDoc = `{"version": 1, "routes": [{"to": "198.51.100.0/33", "via": "192.0.2.1", "dev": "uplink0"}]}`
)

var (
	routeRef  = dg.ItemRef{Type: items.TypeRoute, Name: "main 198.51.100.0/24 metric 0"}
	route2Ref = dg.ItemRef{Type: items.TypeRoute, Name: "main 203.0.113.0/24 metric 0"}
	addrRef   = dg.ItemRef{Type: items.TypeAddress, Name: "uplink0/192.0.2.2/24"}
)

func baseDocs() map[string]string {
	return map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": routeDoc}
}

func TestStartReconcilesAndIsReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		if !r.k.has(routeRef) || !r.k.has(addrRef) {
			t.Fatalf("kernel after start: ops %v", r.k.takeOps())
		}
		if got := r.reasons(); !slices.Equal(got, []string{reasonStart}) {
			t.Errorf("reconcile reasons %v, want [start]", got)
		}
		if r.notify.count("ready") != 1 {
			t.Errorf("READY sent %d times, want 1", r.notify.count("ready"))
		}
		st := r.status()
		if !st.Ready {
			t.Fatalf("not ready: %+v", st)
		}
		for _, f := range st.Files {
			if c := f.Conditions; !c[0].Status || !c[1].Status || c[2].Status || !c[3].Status {
				t.Errorf("file %s conditions %+v", f.Name, c)
			}
		}
	})
}

func TestIntentChangeReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.k.takeOps()
		r.src.set("20-routes.json", twoRoutesDoc)
		time.Sleep(DefaultIntentDebounce + time.Millisecond)
		synctest.Wait()
		if ops := r.k.takeOps(); !slices.Equal(ops, []string{"create " + route2Ref.String()}) {
			t.Errorf("ops after the change: %v", ops)
		}
		if got := r.reasons(); !slices.Equal(got, []string{reasonStart, reasonIntent}) {
			t.Errorf("reasons %v", got)
		}
		r.src.set("20-routes.json", "")
		time.Sleep(DefaultIntentDebounce + time.Millisecond)
		synctest.Wait()
		ops := r.k.takeOps()
		slices.Sort(ops)
		if want := []string{"delete " + routeRef.String(), "delete " + route2Ref.String()}; !slices.Equal(ops, want) {
			t.Errorf("ops after removing the file: %v, want %v", ops, want)
		}
	})
}

func TestBurstIsDebouncedIntoOneReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		loads, runs := r.src.loadCount(), r.k.reconciles()
		for i := range 10 {
			doc := routeDoc
			if i%2 == 1 {
				doc = twoRoutesDoc
			}
			r.src.set("20-routes.json", doc)
			time.Sleep(DefaultIntentDebounce / 2) // inside the quiet period
		}
		synctest.Wait()
		if r.k.reconciles() != runs {
			t.Fatalf("reconciled during the burst")
		}
		time.Sleep(DefaultIntentDebounce)
		synctest.Wait()
		if got := r.src.loadCount() - loads; got != 1 {
			t.Errorf("source loaded %d times for the burst, want 1", got)
		}
		if got := r.k.reconciles() - runs; got != 1 {
			t.Errorf("%d reconciles for the burst, want 1", got)
		}
		if !r.k.has(route2Ref) {
			t.Error("the burst's last version (two routes) is not what was applied")
		}
	})
}

func TestSteadyStreamIsHandledWithinMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		start := time.Now()
		r.src.set("20-routes.json", twoRoutesDoc)
		for !r.k.has(route2Ref) {
			time.Sleep(DefaultIntentDebounce / 2)
			r.src.set("20-routes.json", twoRoutesDoc) // never quiet
			synctest.Wait()
		}
		if waited := time.Since(start); waited > 10*DefaultIntentDebounce+DefaultIntentDebounce {
			t.Errorf("applied after %v of constant changes, want at most ~%v", waited, 10*DefaultIntentDebounce)
		}
	})
}

func TestInvalidFileKeepsLastGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.k.takeOps()
		r.src.set("20-routes.json", brokenDoc)
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("an invalid file changed the kernel: %v", ops)
		}
		if !r.k.has(routeRef) {
			t.Fatal("the last good version was withdrawn")
		}
		st := r.status()
		f := fileNamed(t, st, "20-routes.json")
		if f.Conditions[0].Status || f.Conditions[0].Reason != "Rejected" || len(f.Errors) == 0 {
			t.Errorf("Valid condition %+v, errors %v", f.Conditions[0], f.Errors)
		}
		if !strings.Contains(f.Errors[0], "20-routes.json") || !strings.Contains(f.Errors[0], "routes[0].to") {
			t.Errorf("error %q does not name the file and path", f.Errors[0])
		}
		if !strings.Contains(f.Conditions[0].Message, "keeping the version accepted at") {
			t.Errorf("Valid message %q does not say the last good version stays", f.Conditions[0].Message)
		}
		if st.Ready || f.Conditions[3].Status {
			t.Error("Ready with an invalid file")
		}
		if !f.Conditions[1].Status {
			t.Error("the last good version should still be converged")
		}
		if !loggedProblem(r, "20-routes.json") {
			t.Error("the problem was not logged with the file")
		}
		// Fixing the file applies it.
		r.src.set("20-routes.json", twoRoutesDoc)
		time.Sleep(time.Second)
		synctest.Wait()
		if !r.k.has(route2Ref) || !r.status().Ready {
			t.Error("the fixed file was not applied")
		}
	})
}

func TestRemovingAReferencedFileIsRejected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.k.takeOps()
		r.src.set("10-uplink.json", "") // 20-routes.json routes via uplink0
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("removing a referenced file changed the kernel: %v", ops)
		}
		f := fileNamed(t, r.status(), "10-uplink.json")
		if f.Conditions[0].Status || f.Conditions[0].Reason != "RemovalRejected" {
			t.Errorf("Valid condition %+v", f.Conditions[0])
		}
		// Removing the file that refers to it too is fine.
		r.src.set("20-routes.json", "")
		time.Sleep(time.Second)
		synctest.Wait()
		if r.k.has(routeRef) || r.k.has(addrRef) {
			t.Error("removing both files did not withdraw their objects")
		}
		if st := r.status(); len(st.Files) != 0 || !st.Ready {
			t.Errorf("status after removing both: %+v", st)
		}
	})
}

func TestLinkDownAndUpWithdrawsAndRestores(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.k.takeOps()
		r.k.setLink(uplink(2, false))
		r.linkEvent("uplink0")
		time.Sleep(time.Second)
		synctest.Wait()
		if r.k.has(routeRef) {
			t.Fatal("the route stayed while the uplink has no carrier")
		}
		if !r.k.has(addrRef) {
			t.Error("the address went with the carrier; only the route depends on it")
		}
		is := itemNamed(t, r.status(), routeRef)
		if is.State != status.StateBlocked || !strings.Contains(is.BlockedOn, "carrier") {
			t.Errorf("route status %+v", is)
		}
		f := fileNamed(t, r.status(), "20-routes.json")
		if !f.Conditions[2].Status || f.Conditions[2].Reason != "ItemsBlocked" || f.Conditions[1].Status {
			t.Errorf("conditions while blocked: %+v", f.Conditions)
		}
		r.k.setLink(uplink(2, true))
		r.linkEvent("uplink0")
		time.Sleep(time.Second)
		synctest.Wait()
		if !r.k.has(routeRef) {
			t.Fatal("the route did not come back with the carrier")
		}
		if got := r.reasons(); !slices.Contains(got, reasonLink) {
			t.Errorf("reasons %v lack %q", got, reasonLink)
		}
		if !r.status().Ready {
			t.Error("not ready after the carrier came back")
		}
	})
}

func TestLinkGoneAndBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.k.dropLink("uplink0")
		r.linkEvent("uplink0")
		time.Sleep(time.Second)
		synctest.Wait()
		if r.k.has(routeRef) || r.k.has(addrRef) {
			t.Fatal("objects on a vanished link were not withdrawn")
		}
		r.k.setLink(uplink(7, true))
		r.linkEvent("uplink0")
		time.Sleep(time.Second)
		synctest.Wait()
		if !r.k.has(routeRef) || !r.k.has(addrRef) {
			t.Fatal("objects did not come back with the link")
		}
	})
}

func TestLinkReplacedWithinOneBurstIsRecreated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.k.takeOps()
		// Deleted and created again before the loop looked: a new ifindex.
		// The kernel dropped what was on it.
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) {
			delete(objs, routeRef)
			delete(objs, addrRef)
		})
		r.k.setLink(uplink(9, true))
		r.linkEvent("uplink0")
		time.Sleep(time.Second)
		synctest.Wait()
		if !r.k.has(routeRef) || !r.k.has(addrRef) {
			t.Fatalf("objects on a replaced link were not recreated; ops %v", r.k.takeOps())
		}
	})
}

func TestResyncWithoutChangeDoesNotReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		runs := r.k.reconciles()
		r.links.events <- LinkEvent{Resync: true}
		r.linkEvent("veth-foreign", "uplink0")
		time.Sleep(time.Second)
		synctest.Wait()
		if r.k.reconciles() != runs {
			t.Error("link events without a change of an external link caused a reconcile")
		}
	})
}

func fileNamed(t *testing.T, st status.Status, name string) status.FileStatus {
	t.Helper()
	for _, f := range st.Files {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no file %s in status %+v", name, st.Files)
	return status.FileStatus{}
}

func itemNamed(t *testing.T, st status.Status, ref dg.ItemRef) status.ItemStatus {
	t.Helper()
	for _, is := range st.Items {
		if is.Item == ref.String() {
			return is
		}
	}
	t.Fatalf("no item %s in status", ref)
	return status.ItemStatus{}
}

func loggedProblem(r *rig, file string) bool {
	for _, e := range r.hook.AllEntries() {
		if e.Data["file"] == file && e.Data["problem"] != nil {
			return true
		}
	}
	return false
}

// TestAsynchronousOperationResumes: a create that goes on in the
// background leaves its item in transition (and its dependants waiting);
// when it finishes, ReadyToResume wakes the loop, which reconciles again.
func TestAsynchronousOperationResumes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		r := newRig(t, baseDocs())
		r.k.slow[addrRef] = release // the route waits for the address (its gateway is on-link through it)
		r.start()
		if r.k.has(routeRef) {
			t.Fatal("the route was created before the address it depends on")
		}
		if is := itemNamed(t, r.status(), addrRef); is.State != "creating" {
			t.Errorf("address state %q, want creating", is.State)
		}
		close(release)
		synctest.Wait()
		if !r.k.has(addrRef) || !r.k.has(routeRef) {
			t.Fatalf("not resumed: ops %v", r.k.takeOps())
		}
		if got := r.reasons(); !slices.Contains(got, reasonResume) {
			t.Errorf("reasons %v lack %q", got, reasonResume)
		}
		if !r.status().Ready {
			t.Error("not ready after the background operation")
		}
	})
}
