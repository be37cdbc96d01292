//go:build vmtest

package netns_test

import (
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/test/vm"
)

// TestInVMImportKernelMatchE1000: import kernel --ethtool of a namespace
// holding an e1000 NIC whose rx ring someone set with ethtool -G gives the
// NIC a match by its permanent MAC (the card's) and its rings at their
// current values (pause autonegotiation, not the flow control it
// resolved); a plan with adopt of that intent lists only adoptions
// (the NIC: a mark only, no disruption), the apply converges, and a second
// plan has nothing to do; the NIC renamed by hand is then found by its
// permanent MAC and named back.
func TestInVMImportKernelMatchE1000(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	nic := bootNIC(t, "nic0")
	ns := testns.New(t).Name
	nicHome(t, nic)
	dev := vm.MoveNIC(t, nic, ns)
	rx := regexp.MustCompile(`(?s)Current hardware settings:\s+RX:\s+(\d+)`).FindStringSubmatch(vm.GuestRun(t, ns, "ethtool", "-g", dev))
	if rx == nil {
		t.Fatalf("ethtool -g %s: no current RX ring", dev)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "exec", ns, "ethtool", "-G", dev, "rx", rx[1]).Run() }) // best effort: named so again at the end
	vm.GuestRun(t, ns, "ethtool", "-G", dev, "rx", "512")
	vm.GuestRun(t, ns, "ip", "link", "set", "dev", dev, "up")
	state := t.TempDir()
	ctx := context.Background()
	res, err := oneshot.ImportKernel(ctx, &oneshot.Options{Netns: ns, StateDir: state}, oneshot.KernelImport{Ethtool: true})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.MarshalIndent(res.Intent, "", "  ")
	t.Logf("import kernel --ethtool:\n%s\nwarnings: %v", doc, res.Warnings)
	if len(res.Intent.Interfaces) != 1 {
		t.Fatalf("import: interfaces %+v, want the NIC alone", res.Intent.Interfaces)
	}
	ifc := res.Intent.Interfaces[0]
	if ifc.Name != dev || ifc.Match == nil || !strings.EqualFold(ifc.Match.PermanentMAC, nic.MAC) || ifc.Ethtool == nil || ifc.Ethtool.Rings == nil ||
		ifc.Ethtool.Rings.RX == nil || *ifc.Ethtool.Rings.RX != 512 {
		t.Fatalf("import of %s: %+v, want a match by permanent MAC %s and rings.rx 512", dev, ifc, nic.MAC)
	}
	if p := ifc.Ethtool.Pause; p == nil || p.Autoneg == nil || !*p.Autoneg || p.RX != nil || p.TX != nil {
		t.Errorf("import of %s: pause %+v, want autoneg true alone (rx and tx are what it negotiated)", dev, p)
	}
	intended, err := render.Load(map[string][]byte{"imported.json": doc})
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	rt, err := host.OpenWith(ns, state, log, host.Options{Adopt: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	plan, err := rt.Plan(ctx, intended)
	if err != nil || len(plan.Problems) > 0 || len(plan.Ops) == 0 {
		t.Fatalf("plan --adopt: %v %v %v", err, plan.Problems, plan.Ops)
	}
	for i, e := range plan.Ops {
		if a, ok := host.AdoptionOf(e, plan.Adoptions); !ok || !a.MarkOnly || plan.Disruptions[i].Effect != disrupt.None {
			t.Errorf("plan --adopt: %s (%+v), want a mark only", host.OpText(e, plan.Adoptions), plan.Disruptions[i])
		}
	}
	if applied, err := rt.Apply(ctx, intended, host.ApplyOptions{}); err != nil || !applied.Converged() {
		t.Fatalf("apply --adopt: %v %v", err, applied.Problems)
	}
	if again, err := rt.Plan(ctx, intended); err != nil || len(again.Ops) > 0 {
		t.Errorf("plan after the adoption: %v %v, want nothing to do", err, again.Ops)
	}
	vm.GuestRun(t, ns, "ip", "link", "set", "dev", dev, "down")
	vm.GuestRun(t, ns, "ip", "link", "set", "dev", dev, "name", "renamed0")
	if again, err := rt.Apply(ctx, intended, host.ApplyOptions{}); err != nil || !again.Converged() {
		t.Fatalf("apply after the rename: %v %v", err, again.Problems)
	}
	wantNamed(t, ns, dev, nic)
}

// nicHome waits (10 s at most) for the NIC to be in the VM's initial
// namespace: an earlier test's namespace gives its NIC back when the
// kernel cleans the namespace up, a moment after the test.
func nicHome(t *testing.T, n vm.NIC) {
	t.Helper()
	for range 100 {
		if name, err := vm.LinkWithMAC(n.MAC); err == nil && name != "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("NIC %s (%s) did not come back to the initial namespace in 10s", n.ID, n.MAC)
}
