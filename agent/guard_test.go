package agent

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/host"
	dg "github.com/netagent/netagent/depgraph"
)

// refuseWithdrawal is a Guard that refuses any intent that leaves out the
// route of routeDoc while the kernel holds it, as protecting uplink0 does.
func refuseWithdrawal(_ context.Context, current, intended *dg.Graph) (*dg.Graph, map[dg.ItemRef]string, []host.Refusal, error) {
	if current == nil {
		return intended, nil, nil, nil
	}
	_, has := current.Get(routeRef)
	_, wants := intended.Get(routeRef)
	if has && !wants {
		return nil, nil, []host.Refusal{{Ref: routeRef, Why: "route 198.51.100.0/24 via 192.0.2.1 dev uplink0 would be withdrawn: uplink0 is protected"}}, nil
	}
	return intended, nil, nil, nil
}

// keepOrphan is a Guard that keeps that route, as the kernel holds it,
// when the intent leaves it out: an orphan.
func keepOrphan(_ context.Context, current, intended *dg.Graph) (*dg.Graph, map[dg.ItemRef]string, []host.Refusal, error) {
	if current == nil {
		return intended, nil, nil, nil
	}
	have, has := current.Get(routeRef)
	if _, wants := intended.Get(routeRef); !has || wants {
		return intended, nil, nil, nil
	}
	kept := intended.Clone()
	kept.Put(have)
	return kept, map[dg.ItemRef]string{routeRef: "no longer in the intent; deleting it would withdraw it: uplink0 is protected"}, nil, nil
}

// guardFunc is a Guard from its Judge.
type guardFunc func(ctx context.Context, current, intended *dg.Graph) (*dg.Graph, map[dg.ItemRef]string, []host.Refusal, error)

func (f guardFunc) Judge(ctx context.Context, current, intended *dg.Graph, _ []string) (*host.Guarded, error) {
	g, orphans, refused, err := f(ctx, current, intended)
	j := &host.Guarded{Intended: g, Refused: refused}
	for ref, why := range orphans {
		j.Orphans = append(j.Orphans, host.Orphan{Ref: ref, Reason: why})
	}
	return j, err
}

func (guardFunc) Adopted(*dg.Graph, *host.Guarded) {}

func withGuard(g guardFunc) rigOption { return func(c *Config) { c.Guard = g } }

// An intent change the Guard refuses changes nothing: the previous
// version stays applied, and the document's status says why.
func TestGuardRefusalKeepsThePreviousIntent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs(), withGuard(refuseWithdrawal)).start()
		r.k.takeOps()
		r.src.set("20-routes.json", "")
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("a refused change reached the kernel: %v", ops)
		}
		if !r.k.has(routeRef) {
			t.Fatal("the route was withdrawn")
		}
		f := fileNamed(t, r.status(), "20-routes.json")
		if f.Conditions[0].Status || len(f.Errors) == 0 || !strings.Contains(f.Errors[0], "uplink0 is protected") {
			t.Errorf("Valid %+v, errors %v: the refusal is not in status", f.Conditions[0], f.Errors)
		}
		if !strings.HasPrefix(f.Errors[0], "20-routes.json: refused: ") {
			t.Errorf("the refusal does not name its file: %q", f.Errors[0])
		}
		// Another file's change is adopted while the refused one waits.
		r.src.set("10-uplink.json", `{"version": 1,
			"interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1400, "addresses": ["192.0.2.2/24"]}]}`)
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 1 || !strings.HasPrefix(ops[0], "modify interface/uplink0") {
			t.Errorf("the other file's change: %v", ops)
		}
		// A change that keeps the route is adopted.
		r.src.set("20-routes.json", twoRoutesDoc)
		time.Sleep(time.Second)
		synctest.Wait()
		if !r.k.has(route2Ref) {
			t.Error("an allowed change was not applied")
		}
	})
}

// What the Guard keeps as an orphan stays in the kernel, shows in status
// as orphaned with why, and a document that declares it again adopts it
// with no operation.
func TestGuardOrphansAreKeptAndReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs(), withGuard(keepOrphan)).start()
		r.k.takeOps()
		r.src.set("20-routes.json", "")
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 || !r.k.has(routeRef) {
			t.Fatalf("the orphan was not kept: ops %v", ops)
		}
		st := r.status()
		var found bool
		for _, it := range st.Items {
			if it.Item == routeRef.String() {
				found = true
				if it.State != StateOrphaned || !strings.Contains(it.Orphaned, "uplink0 is protected") || it.Intended {
					t.Errorf("orphan status %+v", it)
				}
			}
		}
		if !found {
			t.Fatalf("the orphan is not in status: %+v", st.Items)
		}
		r.src.set("20-routes.json", routeDoc)
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("adopting the orphan ran %v", ops)
		}
		for _, it := range r.status().Items {
			if it.Item == routeRef.String() && it.State != "created" {
				t.Errorf("adopted item %+v", it)
			}
		}
	})
}

// A rollback is judged by the Guard before it is recorded: refused, it is
// an error and no version, and the kernel keeps what it has; what the
// Guard keeps as an orphan stays.
func TestGuardJudgesRollback(t *testing.T) {
	for _, tc := range []struct {
		name  string
		guard guardFunc
	}{{"refused", refuseWithdrawal}, {"orphan", keepOrphan}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				withState := func(c *Config) { c.StateDir = dir }
				r := newRig(t, map[string]string{"10-uplink.json": uplinkDoc}, withState, withGuard(tc.guard)).start()
				r.src.set("20-routes.json", routeDoc)
				time.Sleep(DefaultIntentDebounce + time.Millisecond)
				synctest.Wait()
				if st := r.status(); st.Version != 2 || !r.k.has(routeRef) {
					t.Fatalf("after adding the route: version %d", st.Version)
				}
				r.k.takeOps()
				resp := r.call(Request{Command: CmdRollback})
				if tc.name == "refused" {
					if !strings.Contains(resp.Error, "would be withdrawn: uplink0 is protected") {
						t.Fatalf("rollback: %+v", resp)
					}
					if st := r.status(); st.Version != 2 || st.Override != "" {
						t.Fatalf("the refused rollback: version %d override %q", st.Version, st.Override)
					}
				} else if resp.Error != "" || resp.Status.Version != 3 || resp.Status.Override == "" {
					t.Fatalf("rollback: %+v", resp)
				}
				if ops := r.k.takeOps(); len(ops) != 0 || !r.k.has(routeRef) {
					t.Fatalf("the route was withdrawn (ops %v)", ops)
				}
			})
		})
	}
}
