package agent

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestAnObjectInTwoFilesIsAppliedFromNeither: a file that defines a route
// another file defines already makes both files report the conflict, each
// naming the other; the route is applied from neither (it is deleted), and
// the rest of both files is applied. Removing the second file brings the
// route back.
func TestAnObjectInTwoFilesIsAppliedFromNeither(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.k.takeOps()
		r.src.set("30-more.json", `{"version": 1, "routes": [
			{"to": "198.51.100.0/24", "via": "192.0.2.254", "dev": "uplink0"},
			{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`)
		time.Sleep(DefaultIntentDebounce + time.Millisecond)
		synctest.Wait()
		ops := r.k.takeOps()
		slices.Sort(ops)
		if want := []string{"create " + route2Ref.String(), "delete " + routeRef.String()}; !slices.Equal(ops, want) {
			t.Errorf("ops after the conflicting file: %v, want %v", ops, want)
		}
		st := r.status()
		for file, other := range map[string]string{"20-routes.json": "30-more.json", "30-more.json": "20-routes.json"} {
			f := fileNamed(t, st, file)
			valid := f.Conditions[0]
			if valid.Status || valid.Reason != "Conflict" || !strings.Contains(valid.Message, "applied from neither") ||
				len(f.Errors) != 1 || !strings.Contains(f.Errors[0], "is also defined at routes[0] in "+other) {
				t.Errorf("%s: valid %+v, errors %q", file, valid, f.Errors)
			}
		}
		if st.Ready {
			t.Error("ready with a conflict")
		}
		if !r.k.has(addrRef) {
			t.Error("the rest of the files was withdrawn")
		}

		r.src.set("30-more.json", "")
		time.Sleep(DefaultIntentDebounce + time.Millisecond)
		synctest.Wait()
		ops = r.k.takeOps()
		slices.Sort(ops)
		if want := []string{"create " + routeRef.String(), "delete " + route2Ref.String()}; !slices.Equal(ops, want) {
			t.Errorf("ops after removing the conflicting file: %v, want %v", ops, want)
		}
		if st := r.status(); !st.Ready {
			t.Errorf("not ready once the conflict is gone: %+v", st.Files)
		}
	})
}

// TestAConflictThatWouldBreakAFileIsRejected: leaving out an interface two
// files define would leave the routes over it without their device; then
// the new file is rejected whole (with the conflict among its problems) and
// what ran before stays.
func TestAConflictThatWouldBreakAFileIsRejected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.k.takeOps()
		r.src.set("30-more.json", `{"version": 1,
			"interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1400}],
			"routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`)
		time.Sleep(DefaultIntentDebounce + time.Millisecond)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("ops after a conflict that breaks a file: %v", ops)
		}
		st := r.status()
		f := fileNamed(t, st, "30-more.json")
		if f.Conditions[0].Status || len(f.Errors) == 0 || !strings.Contains(f.Errors[0], `interface "uplink0" is also defined at interfaces[0] in 10-uplink.json`) {
			t.Errorf("30-more.json: %+v", f)
		}
		for _, name := range []string{"10-uplink.json", "20-routes.json"} {
			if f := fileNamed(t, st, name); !f.Conditions[0].Status {
				t.Errorf("%s is not valid: %+v", name, f)
			}
		}
	})
}
