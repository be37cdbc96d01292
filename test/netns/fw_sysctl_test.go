package netns_test

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// fwHostSysctls are read in the test's own (host) namespace before and
// after, to show that only the target namespace changed.
var fwHostSysctls = []string{"ipv4/ip_forward", "ipv4/conf/all/forwarding", "ipv4/ip_default_ttl"}

func fwReadHost(t *testing.T) map[string]string {
	t.Helper()
	m := make(map[string]string)
	for _, k := range fwHostSysctls {
		b, err := os.ReadFile("/proc/sys/net/" + k)
		if err != nil {
			t.Fatal(err)
		}
		m[k] = strings.TrimSpace(string(b))
	}
	return m
}

// sysctlN runs `sysctl -n key` in the namespace.
func (e *fwEnv) sysctlN(key string) string {
	e.t.Helper()
	return strings.TrimSpace(testns.Exec(e.t, e.tgt, "sysctl", "-n", key))
}

// fwSysctlGraph is the intent: the veth as a stand-in interface item
// (present in current and intended alike, so never operated on) and the
// given parameters.
func fwSysctlGraph(iface *items.Interface, kv ...string) *dg.Graph {
	g := fwGraph(iface)
	for i := 0; i+1 < len(kv); i += 2 {
		g.Put(&items.Sysctl{Key: kv[i], Value: kv[i+1]})
	}
	return g
}

func TestFwSysctlLifecycle(t *testing.T) {
	hostBefore := fwReadHost(t)
	e := fwNewEnv(t)
	testns.Exec(t, e.tgt, "ip", "link", "add", "fwv0", "type", "veth", "peer", "name", "fwv1")
	iface := &items.Interface{IfName: "fwv0", Kind: items.KindVeth, Attrs: &items.VethAttrs{Peer: "fwv1"}}
	const (
		fwdKey = "net.ipv4.ip_forward"
		ifKey  = "net.ipv4.conf.fwv0.forwarding"
		ttlKey = "net.ipv4.ip_default_ttl"
	)
	orig := map[string]string{fwdKey: e.sysctlN(fwdKey), ifKey: e.sysctlN(ifKey), ttlKey: e.sysctlN(ttlKey)}
	if orig[fwdKey] != "0" || orig[ifKey] != "0" || orig[ttlKey] != "64" {
		t.Fatalf("a new namespace starts with %v", orig)
	}

	// Create. Writing ip_forward=1 also turns on forwarding of every
	// interface, so the per-interface key goes first (the reconciler keeps
	// the graph's order) and its original is read before that.
	intended := fwSysctlGraph(iface, ifKey, "1", fwdKey, "1", ttlKey, "100")
	st := e.reconcile(fwGraph(iface), intended)
	if n := fwOps(st); n[reconciler.OpCreate] != 3 || len(st.OperationLog) != 3 {
		t.Fatalf("first apply ran:\n%s", st.OperationLog)
	}
	for k, want := range map[string]string{fwdKey: "1", ifKey: "1", ttlKey: "100"} {
		if got := e.sysctlN(k); got != want {
			t.Errorf("sysctl %s = %q, want %q", k, got, want)
		}
	}
	fwAssertSysctlReadBack(e, intended)
	if st2 := e.reconcile(st.NewCurrentState, intended); len(st2.OperationLog) != 0 {
		t.Errorf("second apply ran:\n%s", st2.OperationLog)
	}

	// Restart: fresh configurators, current state read back: nothing to do.
	e.reg = e.newRegistry()
	cur := e.readBack(intended)
	cur.Put(iface)
	if st3 := e.reconcile(cur, intended); len(st3.OperationLog) != 0 {
		t.Errorf("apply after restart ran:\n%s", st3.OperationLog)
	}

	// Modify: the first saved originals stay.
	intended2 := fwSysctlGraph(iface, ifKey, "0", fwdKey, "1", ttlKey, "80")
	st = e.reconcile(cur, intended2)
	if n := fwOps(st); n[reconciler.OpModify] != 2 || len(st.OperationLog) != 2 {
		t.Fatalf("modify ran:\n%s", st.OperationLog)
	}
	if got := e.sysctlN(ttlKey) + " " + e.sysctlN(ifKey); got != "80 0" {
		t.Errorf("after modify ttl, forwarding = %s", got)
	}
	fwAssertSysctlReadBack(e, intended2)
	if saved := fwSavedOriginals(t, e.stateDir); saved[ttlKey] != "64" || saved[fwdKey] != "0" || saved[ifKey] != "0" {
		t.Errorf("saved originals %v", saved)
	}

	// Restart again, then delete: every original is back.
	e.reg = e.newRegistry()
	cur = e.readBack(intended2)
	cur.Put(iface)
	st = e.reconcile(cur, fwGraph(iface))
	if n := fwOps(st); n[reconciler.OpDelete] != 3 {
		t.Fatalf("delete ran:\n%s", st.OperationLog)
	}
	for k, want := range orig {
		if got := e.sysctlN(k); got != want {
			t.Errorf("after delete sysctl %s = %q, want the original %q", k, got, want)
		}
	}
	if got := e.readBack(nil); got.Len() != 0 {
		t.Errorf("read back after delete: %v", got.Refs())
	}
	// Deleting again leaves the value alone.
	e.sysctlSet(ttlKey, "70")
	ttl := &items.Sysctl{Key: ttlKey, Value: "80"}
	if err := e.cfg(ttl).Delete(e.ctx, ttl); err != nil {
		t.Fatal(err)
	}
	if got := e.sysctlN(ttlKey); got != "70" {
		t.Errorf("delete without a saved original changed the value to %s", got)
	}

	if hostAfter := fwReadHost(t); !maps.Equal(hostAfter, hostBefore) {
		t.Errorf("host namespace changed: %v, was %v", hostAfter, hostBefore)
	}
}

// sysctlSet sets a parameter with sysctl(8), as an operator would.
func (e *fwEnv) sysctlSet(key, value string) {
	e.t.Helper()
	testns.Exec(e.t, e.tgt, "sysctl", "-q", "-w", key+"="+value)
}

func fwAssertSysctlReadBack(e *fwEnv, intended *dg.Graph) {
	e.t.Helper()
	cur := e.readBack(intended)
	n := 0
	for item := range intended.Items() {
		if item.Type() != items.TypeSysctl {
			continue
		}
		n++
		if got, ok := cur.Get(dg.Ref(item)); !ok || !got.Equal(item) {
			e.t.Errorf("read back %v, applied %v", got, item)
		}
	}
	if cur.Len() != n {
		e.t.Errorf("read back %d items, applied %d", cur.Len(), n)
	}
}

// fwSavedOriginals returns the originals saved in the state record, all
// namespaces merged.
func fwSavedOriginals(t *testing.T, stateDir string) map[string]string {
	t.Helper()
	var f struct {
		Namespaces []struct {
			Originals map[string]string `json:"originals"`
		} `json:"namespaces"`
	}
	if ok, err := statefile.LoadJSON(filepath.Join(stateDir, "sysctl.json"), &f); err != nil || !ok {
		t.Fatalf("sysctl originals: %v (there: %v)", err, ok)
	}
	m := map[string]string{}
	for _, ns := range f.Namespaces {
		for k, v := range ns.Originals {
			m[k] = v
		}
	}
	return m
}

// TestFwSysctlTwoNamespaces: one state directory serves two namespaces; each
// restores its own originals.
func TestFwSysctlTwoNamespaces(t *testing.T) {
	a := fwNewEnv(t)
	b := fwNewEnv(t)
	b.stateDir = a.stateDir
	b.reg = b.newRegistry()
	const key = "net.ipv4.ip_default_ttl"
	b.sysctlSet(key, "33")
	sa, sb := &items.Sysctl{Key: key, Value: "101"}, &items.Sysctl{Key: key, Value: "102"}
	for _, step := range []struct {
		e *fwEnv
		s *items.Sysctl
	}{{a, sa}, {b, sb}} {
		if err := step.e.cfg(step.s).Create(step.e.ctx, step.s); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.sysctlN(key) + " " + b.sysctlN(key); got != "101 102" {
		t.Errorf("values %s", got)
	}
	if err := b.cfg(sb).Delete(b.ctx, sb); err != nil {
		t.Fatal(err)
	}
	if err := a.cfg(sa).Delete(a.ctx, sa); err != nil {
		t.Fatal(err)
	}
	if got := a.sysctlN(key) + " " + b.sysctlN(key); got != "64 33" {
		t.Errorf("restored values %s, want 64 33", got)
	}
}
