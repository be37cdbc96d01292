package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/api"
	dg "github.com/netagent/netagent/depgraph"
)

func TestAPIApplyReplacesTheAPIDocument(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, map[string]string{"10-uplink.json": uplinkDoc}).start()
		r.k.takeOps()
		resp := r.call(api.Request{Command: api.CmdApply, Intent: json.RawMessage(twoRoutesDoc)})
		if resp.Error != "" || resp.Status == nil {
			t.Fatalf("apply: %+v", resp)
		}
		if len(resp.Operations) != 2 || resp.Operations[0].Op != "create" {
			t.Errorf("operations %+v", resp.Operations)
		}
		if !r.k.has(routeRef) || !r.k.has(route2Ref) {
			t.Fatal("apply did not reach the kernel")
		}
		if f := fileNamed(t, *resp.Status, apiDocName); f.Source != "api" || !f.Conditions[3].Status {
			t.Errorf("api document status %+v", f)
		}
		if got := r.reasons(); got[len(got)-1] != reasonAPI {
			t.Errorf("reasons %v", got)
		}
		// The next apply replaces the document: one route goes.
		resp = r.call(api.Request{Command: api.CmdApply, Intent: json.RawMessage(routeDoc)})
		if r.k.has(route2Ref) || !r.k.has(routeRef) {
			t.Errorf("second apply did not replace the first: %+v", resp.Operations)
		}
	})
}

func TestAPIApplyRejectsAndChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.call(api.Request{Command: api.CmdApply, Intent: json.RawMessage(
			`{"version": 1, "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`)})
		r.k.takeOps()
		for name, doc := range map[string]string{
			"invalid":  brokenDoc,
			"conflict": routeDoc, // 20-routes.json defines that route already
			"syntax":   `{"version": 1, "routes": [}`,
		} {
			resp := r.call(api.Request{Command: api.CmdApply, Intent: json.RawMessage(doc)})
			if resp.Error != "intent rejected" || len(resp.Problems) == 0 {
				t.Errorf("%s: response %+v", name, resp)
			}
			if ops := r.k.takeOps(); len(ops) != 0 {
				t.Errorf("%s: a rejected apply changed the kernel: %v", name, ops)
			}
		}
		st := r.status()
		if !r.k.has(route2Ref) || !st.Ready {
			t.Error("a rejected apply disturbed the running API document")
		}
		if f := fileNamed(t, st, "20-routes.json"); !f.Conditions[0].Status {
			t.Errorf("a rejected apply marked a file invalid: %+v", f.Conditions[0])
		}
		if resp := r.call(api.Request{Command: api.CmdApply}); resp.Error == "" {
			t.Error("apply without an intent was accepted")
		}
	})
}

func TestAPIPlanCheckShow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, map[string]string{"10-uplink.json": uplinkDoc}).start()
		r.k.takeOps()
		resp := r.call(api.Request{Command: api.CmdPlan, Intent: json.RawMessage(twoRoutesDoc)})
		if resp.Error != "" || len(resp.Operations) != 2 {
			t.Fatalf("plan: %+v", resp)
		}
		if ops := r.k.takeOps(); len(ops) != 0 || r.k.has(routeRef) {
			t.Errorf("plan changed the kernel: %v", ops)
		}
		if resp := r.call(api.Request{Command: api.CmdPlan}); len(resp.Operations) != 0 {
			t.Errorf("plan of the running intent: %+v", resp.Operations)
		}
		if resp := r.call(api.Request{Command: api.CmdCheck}); len(resp.Operations) != 0 || resp.Error != "" {
			t.Errorf("check of a converged kernel: %+v", resp)
		}
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) { delete(objs, addrRef) })
		resp = r.call(api.Request{Command: api.CmdCheck})
		if len(resp.Operations) != 1 || resp.Operations[0].Item != addrRef.String() {
			t.Errorf("check after someone deleted the address: %+v", resp.Operations)
		}
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("check changed the kernel: %v", ops)
		}
		shown := r.call(api.Request{Command: api.CmdShow}).Items
		if !slices.ContainsFunc(shown, func(s api.ShownItem) bool { return s.Item == "link/uplink0" && s.External }) ||
			!slices.ContainsFunc(shown, func(s api.ShownItem) bool { return s.Item == addrRef.String() && s.File == "10-uplink.json" }) {
			t.Errorf("show: %+v", shown)
		}
		if resp := r.call(api.Request{Command: "frobnicate"}); !strings.Contains(resp.Error, "unknown command") {
			t.Errorf("unknown command: %+v", resp)
		}
	})
}

func TestReloadReadsEverySource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.src.mu.Lock()
		r.src.docs["20-routes.json"] = []byte(twoRoutesDoc) // no event: a missed change
		r.src.mu.Unlock()
		r.a.Reload()
		synctest.Wait()
		if !r.k.has(route2Ref) {
			t.Fatal("reload did not pick up the change")
		}
		if r.notify.count("reloading") != 1 || r.notify.count("ready") != 2 {
			t.Errorf("notifications %v", r.notify.counts)
		}
		if got := r.reasons(); !slices.Contains(got, reasonReload) {
			t.Errorf("reasons %v", got)
		}
	})
}

func TestUnreadableSourceKeepsItsDocuments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.src.mu.Lock()
		r.src.failing = os.ErrPermission
		r.src.mu.Unlock()
		r.src.set("20-routes.json", "")
		time.Sleep(time.Second)
		synctest.Wait()
		if !r.k.has(routeRef) {
			t.Fatal("a source that cannot be read was taken as empty")
		}
		st := r.status()
		if st.Ready || len(st.Errors) != 1 || !strings.Contains(st.Errors[0], "dir:test") {
			t.Errorf("status: ready %v, errors %v", st.Ready, st.Errors)
		}
	})
}

// TestRestartAppliesLastGoodVersion: an agent restarted with a broken
// file applies the version it accepted before, from the state directory,
// and restores the socket API's document.
func TestRestartAppliesLastGoodVersion(t *testing.T) {
	dir := t.TempDir()
	withState := func(c *Config) { c.StateDir = dir }
	r := newRig(t, baseDocs(), withState).start()
	r.call(api.Request{Command: api.CmdApply, Intent: json.RawMessage(
		`{"version": 1, "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`)})
	r.stop()
	if _, err := os.Stat(filepath.Join(dir, "accepted", "20-routes.json")); err != nil {
		t.Fatalf("accepted version not stored: %v", err)
	}

	docs := baseDocs()
	docs["20-routes.json"] = brokenDoc
	r2 := newRig(t, docs, withState)
	r2.k = r.k // the same kernel
	r2.a.cfg.Kernel = r.k
	r2.start()
	r.k.takeOps()
	if !r.k.has(routeRef) || !r.k.has(route2Ref) {
		t.Fatal("the restarted agent withdrew the last good version or the API document")
	}
	f := fileNamed(t, r2.status(), "20-routes.json")
	if f.Conditions[0].Status || f.AcceptedAt.IsZero() {
		t.Errorf("status of the broken file after restart: %+v", f)
	}
	if fileNamed(t, r2.status(), apiDocName).Source != "api" {
		t.Error("the API document did not come back as the api source's")
	}
}

// TestRestartWithAnUnreadableSourceKeepsItsDocuments: the stored versions
// of a source that cannot be read at start stay applied; once it can be
// read, what it no longer holds goes.
func TestRestartWithAnUnreadableSourceKeepsItsDocuments(t *testing.T) {
	dir := t.TempDir()
	withState := func(c *Config) { c.StateDir = dir }
	r := newRig(t, baseDocs(), withState).start()
	r.stop()

	r2 := newRig(t, map[string]string{"10-uplink.json": uplinkDoc}, withState)
	r2.src.failing = os.ErrPermission
	r2.k = r.k
	r2.a.cfg.Kernel = r.k
	r2.start()
	if !r.k.has(routeRef) {
		t.Fatal("the documents of an unreadable source were withdrawn at start")
	}
	r2.src.mu.Lock()
	r2.src.failing = nil
	r2.src.mu.Unlock()
	ready := r2.notify.count("ready")
	r2.a.Reload()
	// The loop's select may take a call before the pending reload: turn
	// it until the reload is done (it ends with READY).
	for r2.notify.count("ready") == ready {
		r2.call(api.Request{Command: api.CmdStatus})
	}
	if r.k.has(routeRef) {
		t.Error("a file gone while the agent was down was kept after its source could be read")
	}
}
