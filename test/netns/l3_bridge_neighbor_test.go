package netns_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/reconciler"
)

// Issue 7: a neighbour on a bridge was created before the bridge's ports;
// enslaving the first port gives the bridge the port's MAC, and the kernel
// flushes the bridge's neighbours, permanent ones too, while status said
// Ready. One reconcile pass from nothing, with no read-back pass after it,
// must leave the neighbour in the kernel: it now waits for the ports.
func TestL3NeighborOnBridgeSurvivesPorts(t *testing.T) {
	tgt := testns.New(t)
	// uplink0 plays a NIC. The bridge's only port is a VXLAN over it: the
	// port is two dependencies deeper than the neighbour, so without a
	// dependency between them the neighbour comes first.
	testns.Exec(t, tgt, "ip", "link", "add", "uplink0", "type", "veth", "peer", "name", "uplink0-peer")
	testns.Exec(t, tgt, "ip", "link", "set", "uplink0-peer", "up")
	st := l3ReconcileOnce(t, tgt, "lan.json", `{"version": 1,
		"interfaces": [
			{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]},
			{"name": "br-lan", "type": "bridge", "addresses": ["192.168.50.1/24", "2001:db8:50::1/64"]},
			{"name": "vx100", "type": "vxlan", "vxlan": {"vni": 100, "local": "192.0.2.10", "remote": "192.0.2.20", "parent": "uplink0"},
			 "master": "br-lan"}
		],
		"neighbors": [
			{"dev": "br-lan", "ip": "192.168.50.20", "mac": "02:00:00:00:00:20"},
			{"dev": "br-lan", "ip": "2001:db8:50::20", "mac": "02:00:00:00:00:21"}
		]}`)
	var neighs []struct {
		Dst    string   `json:"dst"`
		LLAddr string   `json:"lladdr"`
		State  []string `json:"state"`
	}
	out := testns.Exec(t, tgt, "ip", "-j", "neigh", "show", "dev", "br-lan")
	if err := json.Unmarshal([]byte(out), &neighs); err != nil {
		t.Fatalf("ip -j neigh: %v\n%s", err, out)
	}
	want := map[string]string{"192.168.50.20": "02:00:00:00:00:20", "2001:db8:50::20": "02:00:00:00:00:21"}
	for _, n := range neighs {
		if want[n.Dst] == n.LLAddr && len(n.State) == 1 && n.State[0] == "PERMANENT" {
			delete(want, n.Dst)
		}
	}
	if len(want) > 0 {
		t.Errorf("neighbours missing after one pass: %v\nip -j neigh: %s\n%s", want, out, st.OperationLog)
	}
}

// l3ReconcileOnce renders the intent file content (named name), reads the
// namespace back with the link and l3 configurators and reconciles once:
// one pass from what the kernel holds, with no read-back pass after it. It
// fails the test unless everything converged in that pass.
func l3ReconcileOnce(t *testing.T, tgt *netnsx.Target, name, content string) reconciler.Status {
	t.Helper()
	reg := &reconciler.TypeRegistry{}
	stateDir := t.TempDir()
	if err := link.Register(reg, tgt, stateDir); err != nil {
		t.Fatal(err)
	}
	if err := l3.Register(reg, tgt); err != nil {
		t.Fatal(err)
	}
	intended, err := render.Load(map[string][]byte{name: []byte(content)})
	if err != nil {
		t.Fatal(err)
	}
	cur, err := link.ReadBack(tgt, stateDir, intended)
	if err != nil {
		t.Fatal(err)
	}
	l3cur, err := l3.ReadBack(tgt, "", intended)
	if err != nil {
		t.Fatal(err)
	}
	st := reconciler.New(reg).Reconcile(context.Background(), dg.New("current", append(cur, l3cur...)...), intended)
	if st.Err != nil || len(st.Blocked) > 0 {
		t.Fatalf("reconcile: %v, blocked %v\n%s", st.Err, st.Blocked, st.OperationLog)
	}
	return st
}
