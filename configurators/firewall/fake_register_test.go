package firewall

import (
	"context"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Fake runs the real configurators: a chain and a sysctl are applied,
// read back as applied, and a second apply (fresh configurators, as a
// restarted agent has) runs nothing.
func TestFakeRegisterAndReadBack(t *testing.T) {
	const path = "/proc/sys/net/ipv4/ip_forward"
	f := NewFake(map[string]string{path: "0"})
	dir := t.TempDir()
	fwd := &items.Sysctl{Key: "net.ipv4.ip_forward", Value: "1"}
	chain := &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-FWD",
		JumpFrom: "FORWARD", Position: 1, Rules: [][]string{{"-s", "192.0.2.1", "-j", "ACCEPT"}}}
	if err := f.IPTables[items.FamilyIPv4].restore(context.Background(), []byte("*filter\n:FORWARD ACCEPT [0:0]\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	intended := dg.New("intended", fwd, chain)
	apply := func() reconciler.Status {
		t.Helper()
		reg := &reconciler.TypeRegistry{}
		if err := f.Register(reg, dir); err != nil {
			t.Fatal(err)
		}
		cur, err := f.ReadBack(dir, intended)
		if err != nil {
			t.Fatal(err)
		}
		return reconciler.New(reg).Reconcile(context.Background(), dg.New("current", cur...), intended)
	}
	if st := apply(); st.Err != nil || len(st.OperationLog) != 2 {
		t.Fatalf("apply: %v\n%s", st.Err, st.OperationLog)
	}
	if f.ProcSys.files[path] != "1" {
		t.Errorf("ip_forward %q, want 1", f.ProcSys.files[path])
	}
	if st := apply(); st.Err != nil || len(st.OperationLog) != 0 {
		t.Errorf("second apply: %v\n%s", st.Err, st.OperationLog)
	}
}
