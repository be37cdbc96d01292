//go:build vmtest

package netns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/test/vm"
)

// vmDaemonWait bounds each wait for the daemon in the VM (TCG is slow).
const vmDaemonWait = 2 * time.Minute

// vmDaemon is `netagent run` (the real binary, vm.GuestBinary) serving a
// test namespace of the VM, with its intent and state directories, its
// socket and its JSON log.
type vmDaemon struct {
	t         *testing.T
	ns        string
	intentDir string
	socket    string
	logs      *daemonLog
	cmd       *exec.Cmd
	exited    chan struct{}
}

// startVMDaemon writes the intent file and starts the daemon on ns; it
// does not wait for it to be ready. t.Cleanup stops it with SIGTERM and
// checks that it exits 0.
func startVMDaemon(t *testing.T, ns, intent string) *vmDaemon {
	t.Helper()
	dir := t.TempDir()
	d := &vmDaemon{t: t, ns: ns, intentDir: filepath.Join(dir, "intents"), socket: filepath.Join(dir, "netagent.sock"),
		logs: &daemonLog{}, exited: make(chan struct{})}
	if err := os.Mkdir(d.intentDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.intentDir, "10-lan.json"), []byte(intent), 0o600); err != nil {
		t.Fatal(err)
	}
	d.cmd = exec.Command(vm.GuestBinary("netagent"), "--netns", ns, "--state-dir", filepath.Join(dir, "state"),
		"--log-format", "json", "--log-level", "debug", "run", "--intent-dir", d.intentDir, "--socket", d.socket)
	d.cmd.Stdout, d.cmd.Stderr = d.logs, d.logs
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		d.cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(d.stop)
	return d
}

func (d *vmDaemon) stop() { stopDaemon(d.t, d.cmd, d.exited, d.logs, 30*time.Second) }

// status asks the daemon over its socket.
func (d *vmDaemon) status() (status.Status, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := api.Call(ctx, d.socket, api.Request{Command: api.CmdStatus})
	switch {
	case err != nil:
		return status.Status{}, err
	case resp.Status == nil:
		return status.Status{}, fmt.Errorf("status: %s", resp.Error)
	}
	return *resp.Status, nil
}

// waitFor polls cond every 200 ms until it holds, for at most
// vmDaemonWait; cond says what it saw, for the failure.
func (d *vmDaemon) waitFor(what string, cond func() (bool, string)) {
	d.t.Helper()
	pollDaemon(d.t, vmDaemonWait, 200*time.Millisecond, d.exited, d.logs, what, cond)
}

// hotPlugRefs are the items the daemon test's intent puts on plug0.
var hotPlugRefs = []string{"address/plug0/192.0.2.10/24", "interface/plug0.10", "route/main 198.51.100.0/24 metric 10"}

// TestInVMDaemonMatchHotPlug: `netagent run` serves a namespace whose
// intent has plug0 matched by the permanent MAC of a NIC that is not there
// (hot1), with an address, a route through it and a VLAN on it. Status,
// over the socket, lists plug0 failed with "no NIC matches" and the three
// blocked on it, and the daemon backs off (a bounded count of reconciles,
// its next retry seconds away, none in 3 s). Then qemu's monitor plugs the card in
// (vm.HotAdd) and it is moved into the namespace: without a restart, and
// before that retry was due (the link event did it), the daemon renames
// it plug0 (ip -d -j link: the moved link's ifindex; ethtool: the card's
// driver and PCI address), and ip reads back the address, the route and
// the VLAN on it; status lists plug0 and the three as no longer failed or
// blocked. (plug0, not lan0: TestVM compares the "vm-match lan0" lines
// of TestInVMMatchNICs between boots.)
func TestInVMDaemonMatchHotPlug(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	hot := hotNIC(t, "hot1")
	ns := testns.New(t).Name
	d := startVMDaemon(t, ns, `{"version": 1, "interfaces": [
  {"name": "plug0", "type": "physical", "match": {"permanentMac": "`+hot.MAC+`"}, "addresses": ["192.0.2.10/24"]},
  {"name": "plug0.10", "type": "vlan", "vlan": {"parent": "plug0", "id": 10}}],
  "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "plug0", "metric": 10}]}`)
	started := time.Now()
	var before status.Status
	d.waitFor("plug0 failing with its dependants blocked, the next retry over 12 s away", func() (bool, string) {
		st, err := d.status()
		if err != nil {
			return false, err.Error()
		}
		before = st
		return noMatchBlocked(st, hot.MAC) == nil && time.Until(st.NextRetry) > 12*time.Second, fmt.Sprintf("%v %+v", noMatchBlocked(st, hot.MAC), st.Items)
	})
	lan, _ := daemonItem(before, "interface/plug0")
	t.Logf("no NIC for %v: %d reconciles, plug0 failed %d times, next retry in %v", time.Since(started).Round(time.Second),
		before.Reconciles, lan.Failures, time.Until(before.NextRetry).Round(time.Millisecond))
	if before.Reconciles > 20 || lan.Failures > 15 {
		t.Errorf("%d reconciles, %d failures of plug0 in %v while no NIC matches: the daemon spins",
			before.Reconciles, lan.Failures, time.Since(started))
	}
	time.Sleep(3 * time.Second) // no retry is due: nothing reconciles
	if st, err := d.status(); err != nil || st.Reconciles > before.Reconciles+1 {
		t.Errorf("3 s with no NIC and no retry due: %d reconciles, %d before (%v)", st.Reconciles, before.Reconciles, err)
	}

	vm.HotAdd(t, hot.ID)
	vm.MoveNIC(t, hot, ns)
	index := vmNICIndex(t, ns, hot)
	d.waitFor("the hot-plugged NIC renamed plug0 with its address, route and VLAN", func() (bool, string) {
		err := hotPlugConfigured(t, ns, index)
		return err == nil, fmt.Sprint(err)
	})
	if time.Now().After(before.NextRetry) {
		t.Errorf("picked up after the retry was due (%v): not by the link event", before.NextRetry)
	}
	wantNamed(t, ns, "plug0", hot)
	d.waitFor("status: plug0 and what is on it neither failed nor blocked", func() (bool, string) {
		st, err := d.status()
		if err != nil {
			return false, err.Error()
		}
		for _, ref := range append([]string{"interface/plug0"}, hotPlugRefs...) {
			if it, ok := daemonItem(st, ref); !ok || it.State == "failed" || it.State == "blocked" {
				return false, fmt.Sprintf("%s: %+v", ref, it)
			}
		}
		return true, ""
	})
	if len(d.logs.entries(map[string]string{"msg": "reconciling", "reason": "link"})) == 0 {
		t.Error("no reconcile logged with reason link")
	}
}

// noMatchBlocked says what is wrong with st if plug0 is not failing with
// no NIC matching mac, or its dependants are not blocked on it.
func noMatchBlocked(st status.Status, mac string) error {
	lan, _ := daemonItem(st, "interface/plug0")
	if lan.State != "failed" || !strings.Contains(lan.LastError, "no NIC matches permanentMac "+mac) {
		return fmt.Errorf("plug0: %+v", lan)
	}
	for _, ref := range hotPlugRefs {
		if it, _ := daemonItem(st, ref); it.State != "blocked" || !strings.Contains(it.BlockedOn, "interface/plug0") {
			return fmt.Errorf("%s: %+v, want blocked on interface/plug0", ref, it)
		}
	}
	return nil
}

// vmNICIndex is the ifindex of the NIC n's link in ns, found by its PCI
// address (a VLAN on it has its MAC too).
func vmNICIndex(t *testing.T, ns string, n vm.NIC) int {
	t.Helper()
	links := vm.IPLinks(t, ns)
	for _, l := range links {
		if l.ParentBus == "pci" && l.ParentDev == n.PCIAddress() {
			t.Logf("NIC %s is %s, ifindex %d, in %s", n.ID, l.Ifname, l.Ifindex, ns)
			return l.Ifindex
		}
	}
	t.Fatalf("no link of NIC %s (%s) in %s: %+v", n.ID, n.PCIAddress(), ns, links)
	return 0
}

// hotPlugConfigured reads ns back with ip: plug0 is the link with ifindex
// index, with 192.0.2.10/24 (ip -j addr), a VLAN plug0.10 of id 10 on it
// (ip -d -j link), and the route to 198.51.100.0/24 via 192.0.2.1
// through it (ip -j route).
func hotPlugConfigured(t *testing.T, ns string, index int) error {
	links := vm.IPLinks(t, ns)
	names := map[string]int{}
	for _, l := range links {
		names[l.Ifname] = l.Ifindex
	}
	if names["plug0"] != index || names["plug0.10"] == 0 {
		return fmt.Errorf("no plug0 with ifindex %d and plug0.10 yet: %+v", index, links)
	}
	addrs := vm.GuestRun(t, ns, "ip", "-j", "-4", "addr", "show", "dev", "plug0")
	vlan := vm.GuestRun(t, ns, "ip", "-d", "-j", "link", "show", "dev", "plug0.10")
	routes := vm.GuestRun(t, ns, "ip", "-j", "route", "show", "198.51.100.0/24")
	var got struct {
		addrs []struct {
			AddrInfo []struct {
				Local     string `json:"local"`
				PrefixLen int    `json:"prefixlen"`
			} `json:"addr_info"`
		}
		vlan []struct {
			Link     string `json:"link"`
			LinkInfo struct {
				Kind string `json:"info_kind"`
				Data struct {
					ID int `json:"id"`
				} `json:"info_data"`
			} `json:"linkinfo"`
		}
		routes []struct {
			Gateway string `json:"gateway"`
			Dev     string `json:"dev"`
		}
	}
	for out, v := range map[string]any{addrs: &got.addrs, vlan: &got.vlan, routes: &got.routes} {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			return fmt.Errorf("%v in %s", err, out)
		}
	}
	addrOK := len(got.addrs) == 1 && len(got.addrs[0].AddrInfo) == 1 &&
		got.addrs[0].AddrInfo[0].Local == "192.0.2.10" && got.addrs[0].AddrInfo[0].PrefixLen == 24
	vlanOK := len(got.vlan) == 1 && got.vlan[0].Link == "plug0" && got.vlan[0].LinkInfo.Kind == "vlan" && got.vlan[0].LinkInfo.Data.ID == 10
	routeOK := len(got.routes) == 1 && got.routes[0].Gateway == "192.0.2.1" && got.routes[0].Dev == "plug0"
	if !addrOK || !vlanOK || !routeOK {
		return fmt.Errorf("plug0's address %t: %s\nthe VLAN on it %t: %s\nthe route %t: %s", addrOK, addrs, vlanOK, vlan, routeOK, routes)
	}
	return nil
}
