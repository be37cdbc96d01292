//go:build !vmtest

package netns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/netplan"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/configurators/dhcp"
	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/items/lease4"
)

// adoptDHCPIntent: up0 from DHCP, its routes at networkd's metric under
// netplan (100).
const adoptDHCPIntent = `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "dhcp4": {"routeMetric": 100}}]}`

// adoptDHCPLease leaves on up0 the lease another client (networkd) holds:
// dnsmasq grants it to the MAC of up0 (a client of the test's own, as
// networkd's exchange would), and the address and routes go into the
// kernel as networkd puts them (its lease's lifetimes, the address's
// prefix route at the DHCP metric, proto dhcp, the host routes to the
// gateway and the DNS server, the default route from the address). With
// addr valid, that address is put there instead of the leased one (a
// lease the server does not know).
func adoptDHCPLease(t *testing.T, e *cliEnv, addr netip.Prefix) netip.Prefix {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := &dhcp.Client{X: &dhcp.NetnsExchanger{Target: e.tgt}}
	l, err := c.Acquire(ctx, "up0", dhcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !addr.IsValid() {
		addr = l.Address
	}
	lft := fmt.Sprint(int(l.LeaseTime.Seconds()))
	src, gw, dns := addr.Addr().String(), l.Router.String(), l.DNS[0].String()
	e.ip("addr", "add", addr.String(), "dev", "up0", "valid_lft", lft, "preferred_lft", lft, "metric", "100")
	e.ip("route", "add", gw, "dev", "up0", "proto", "dhcp", "scope", "link", "src", src, "metric", "100")
	e.ip("route", "add", dns, "dev", "up0", "proto", "dhcp", "scope", "link", "src", src, "metric", "100")
	e.ip("route", "add", "default", "via", gw, "dev", "up0", "proto", "dhcp", "src", src, "metric", "100")
	return addr
}

// adoptDHCPApplied is what the test reads of apply --json.
type adoptDHCPApplied struct {
	Converged  bool `json:"converged"`
	Operations []struct {
		Op, Item, Adopt string
	} `json:"operations"`
	Leases []struct{ Interface, Address, Server, Obtained string } `json:"leases"`
}

// TestAdoptDHCPLease: a host whose uplink up0 holds a lease of another
// client (networkd's, as it leaves it: dnsmasq in a peer namespace granted
// it) switches to netagent with apply --adopt and no blip: plan --adopt
// lists only adoptions of the leased address and its routes, and the
// lease item's modify (asking again); apply --adopt asks the server for
// the same address (INIT-REBOOT: a REQUEST, no DISCOVER), takes over the
// address, the host route to the gateway and the default route in place (ip monitor: no deletion), while
// a ping every 10 ms from the server's namespace to the leased address
// loses nothing; the address and its routes are then netagent's (proto
// 211; the host route to the DNS server too, adopted once the server's
// answer names it), the lease is netagent's own, kept in the state
// directory, and the daemon started on it (run, without --adopt) renews
// it at T1 with no DISCOVER and no deletion.
func TestAdoptDHCPLease(t *testing.T) {
	e := cliNewEnv(t)
	srv := dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{Renew: lease4.MinRenew})
	addr := adoptDHCPLease(t, e, netip.Prefix{})
	file := e.writeFile("dhcp.json", adoptDHCPIntent)
	path := takeoverPath{from: srv.Peer, target: addr.Addr(), how: "from the DHCP server to the leased address"}
	path.check(t)
	mon := takeoverStartMonitor(t, e)
	discovers := strings.Count(srv.Log(), "DHCPDISCOVER")

	plan := e.mustRun(0, "plan", "--adopt", "--json", file)
	var adopted []string
	for _, o := range takeoverOps(t, plan.stdout) {
		switch {
		case o.Adopt == "mark only":
			adopted = append(adopted, o.Item)
		case o.Op == "modify" && o.Item == "dhcp4-lease/up0":
		default:
			t.Errorf("plan --adopt: %+v, want only adoptions (mark only) and the lease asked again:\n%s", o, plan.stdout)
		}
	}
	if want := []string{"address/up0/" + addr.String(), "route/main 10.77.0.1/32 metric 100", "route/main 0.0.0.0/0 metric 100"}; !slices.Equal(adopted, want) {
		t.Errorf("plan --adopt adopts %v, want %v:\n%s", adopted, want, plan.stdout)
	}
	if events := mon.until(); len(events) > 0 {
		t.Errorf("plan --adopt changed the kernel:\n%s", strings.Join(events, "\n"))
	}

	ping := path.start(t)
	time.Sleep(300 * time.Millisecond)
	res := e.mustRun(0, "apply", "--adopt", "--json", "--wait", "30s", file)
	adoptDHCPNoBlip(t, ping, mon, "apply --adopt", res.String())
	var doc adoptDHCPApplied
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, res)
	}
	if len(doc.Leases) != 1 || doc.Leases[0].Address != addr.String() || doc.Leases[0].Obtained != dhcp.ObtainedReboot {
		t.Errorf("lease after apply --adopt: %+v, want %v by INIT-REBOOT\n%s", doc.Leases, addr, res)
	}
	if n := strings.Count(srv.Log(), "DHCPDISCOVER"); n != discovers {
		t.Errorf("apply --adopt sent a DISCOVER:\n%s", srv.Log())
	}
	adoptDHCPOwned(t, e, addr, file)
	if r := e.ip("-4", "route", "show", "dev", "up0", "proto", "211"); !strings.Contains(r, "10.77.0.53 scope link src "+addr.Addr().String()+" metric 100") {
		t.Errorf("the host route to the DNS server (known once the server answered) is not adopted:\n%s", r)
	}
	e.mustRun(0, "check", file)

	// The daemon takes the adopted lease over from the state directory
	// (docs/migrating.md, step 5) and renews it at T1 (10 s).
	d := &daemonEnv{t: t, tgt: e.tgt, bin: e.bin, intentDir: t.TempDir(), stateDir: e.stateDir,
		socket: filepath.Join(t.TempDir(), "netagent.sock"), logs: &daemonLog{}}
	d.writeIntent("dhcp.json", adoptDHCPIntent)
	d.start()
	d.waitForLog("the adopted lease renewed", map[string]string{"msg": "dhcp4: lease renewed"}, daemonWait)
	if st, err := d.status(); err != nil || len(st.Leases) != 1 || st.Leases[0].Address != addr.String() || st.Leases[0].Obtained != "renew" {
		t.Errorf("the daemon's lease %+v (%v), want %v renewed", st.Leases, err, addr)
	}
	if dels := slices.DeleteFunc(takeoverDeletions(mon.until()), takeoverKernelOwn); len(dels) > 0 {
		t.Errorf("the daemon's start and renewal deleted %v", dels)
	}
	if n := strings.Count(srv.Log(), "DHCPDISCOVER"); n != discovers {
		t.Errorf("the daemon sent a DISCOVER:\n%s", srv.Log())
	}
}

// TestAdoptDHCPLeaseDaemon: the daemon started with run --adopt on a host
// whose uplink holds another client's lease (networkd's, as
// TestAdoptDHCPLease leaves it) takes it over as apply --adopt does: no
// deletion, no ping lost (every 10 ms, from the server to the leased
// address), the same address by INIT-REBOOT, the lease's routes
// netagent's (the DNS server's host route too, adopted after the server's
// answer: the adoption lasts until the found lease is settled), ready,
// and the lease renewed at T1, all without a DISCOVER.
func TestAdoptDHCPLeaseDaemon(t *testing.T) {
	e := cliNewEnv(t)
	srv := dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{Renew: lease4.MinRenew})
	addr := adoptDHCPLease(t, e, netip.Prefix{})
	path := takeoverPath{from: srv.Peer, target: addr.Addr(), how: "from the DHCP server to the leased address"}
	path.check(t)
	mon := takeoverStartMonitor(t, e)
	discovers := strings.Count(srv.Log(), "DHCPDISCOVER")
	d := &daemonEnv{t: t, tgt: e.tgt, bin: e.bin, intentDir: t.TempDir(), stateDir: e.stateDir,
		socket: filepath.Join(t.TempDir(), "netagent.sock"), logs: &daemonLog{}}
	d.writeIntent("dhcp.json", adoptDHCPIntent)

	ping := path.start(t)
	d.start("--adopt")
	d.waitFor("the found lease confirmed and its routes netagent's", func() (bool, string) {
		st, err := d.status()
		if err != nil || len(st.Leases) != 1 || st.Leases[0].Obtained != dhcp.ObtainedReboot || !st.Ready {
			return false, fmt.Sprintf("%+v %v", st, err)
		}
		r := e.ip("-4", "route", "show", "dev", "up0", "proto", "211")
		return strings.Count(r, "\n") == 3, r
	})
	d.waitForLog("the adoption over", map[string]string{"msg": "dhcp4: the leases of other clients are settled; the adoption is over"}, daemonWait)
	adoptDHCPNoBlip(t, ping, mon, "run --adopt", "")
	if st, _ := d.status(); len(st.Leases) != 1 || st.Leases[0].Address != addr.String() {
		t.Errorf("the daemon's lease %+v, want %v", st.Leases, addr)
	}
	d.waitForLog("the adopted lease renewed", map[string]string{"msg": "dhcp4: lease renewed"}, daemonWait)
	if n := strings.Count(srv.Log(), "DHCPDISCOVER"); n != discovers {
		t.Errorf("the daemon sent a DISCOVER:\n%s", srv.Log())
	}
	if dels := slices.DeleteFunc(takeoverDeletions(mon.until()), takeoverKernelOwn); len(dels) > 0 {
		t.Errorf("the renewal deleted %v", dels)
	}
}

// adoptDHCPNoBlip stops ping a moment after the takeover (what) and
// checks that it lost nothing and that mon saw no deletion of an object
// (the kernel's own aside); out is the takeover's output, for a failure.
func adoptDHCPNoBlip(t *testing.T, ping *takeoverPing, mon *takeoverMonitor, what, out string) (sent, lost, deletions int) {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
	sent, lost = ping.stop(t)
	events := mon.until()
	dels := slices.DeleteFunc(takeoverDeletions(events), takeoverKernelOwn)
	t.Logf("%s of a found lease: %d deletions seen, %d of %d pings lost", what, len(dels), lost, sent)
	if len(dels) > 0 || lost > 0 || sent < 20 {
		t.Errorf("%s: deletions %v, %d of %d pings lost; all events:\n%s\n%s", what, dels, lost, sent, strings.Join(events, "\n"), out)
	}
	return sent, lost, len(dels)
}

// adoptDHCPOwned checks that the leased address and the default route on
// up0 are netagent's: the route carries the mark (this host's ip shows no
// address's), and a plan without --adopt, which refuses someone else's
// object at an intended place, has nothing to do.
func adoptDHCPOwned(t *testing.T, e *cliEnv, addr netip.Prefix, file string) {
	t.Helper()
	if a := e.ip("-4", "addr", "show", "dev", "up0"); !strings.Contains(a, addr.String()) {
		t.Errorf("the leased address %v is not on up0:\n%s", addr, a)
	}
	if r := e.ip("-4", "route", "show", "default", "dev", "up0"); !strings.Contains(r, "proto 211") {
		t.Errorf("the default route is not netagent's:\n%s", r)
	}
	if ops := takeoverOps(t, e.mustRun(0, "plan", "--json", file).stdout); len(ops) > 0 {
		t.Errorf("plan without --adopt after the adoption: %+v, want nothing to do", ops)
	}
}

// TestAdoptDHCPLeaseMoved: a found lease whose address the server does not
// grant (it is outside its range: a NAK to the INIT-REBOOT) is replaced,
// make before break: the new lease's address is in the kernel before the
// found one goes, and the default route is changed in place (no
// deletion).
func TestAdoptDHCPLeaseMoved(t *testing.T) {
	e := cliNewEnv(t)
	srv := dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{LeaseTime: 10 * time.Minute})
	old := adoptDHCPLease(t, e, netip.MustParsePrefix("10.77.0.200/24"))
	file := e.writeFile("dhcp.json", adoptDHCPIntent)
	mon := takeoverStartMonitor(t, e)

	res := e.mustRun(0, "apply", "--adopt", "--json", "--wait", "30s", file)
	var doc adoptDHCPApplied
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, res)
	}
	if len(doc.Leases) != 1 || doc.Leases[0].Address == old.String() || doc.Leases[0].Obtained != dhcp.ObtainedDiscover {
		t.Fatalf("lease after apply --adopt: %+v, want a new one (discover)\n%s\n%s", doc.Leases, res, srv.Log())
	}
	moved := netip.MustParsePrefix(doc.Leases[0].Address)
	events := mon.until()
	added := slices.IndexFunc(events, func(l string) bool { return strings.Contains(l, " inet "+moved.String()+" ") })
	gone := slices.IndexFunc(events, func(l string) bool {
		return strings.HasPrefix(l, "Deleted ") && strings.Contains(l, " inet "+old.String()+" ")
	})
	if added < 0 || gone < 0 || gone < added {
		t.Errorf("the new address %v (event %d) must come before the found one %v goes (event %d):\n%s", moved, added, old, gone, strings.Join(events, "\n"))
	}
	for _, l := range takeoverDeletions(events) {
		if strings.HasPrefix(l, "Deleted default ") {
			t.Errorf("the default route was deleted: %s\n%s", l, strings.Join(events, "\n"))
		}
	}
	adoptDHCPOwned(t, e, moved, file)
	if a := e.ip("-4", "addr", "show", "dev", "up0"); strings.Contains(a, old.String()) {
		t.Errorf("the found address stays:\n%s", a)
	}
	e.mustRun(0, "check", file)
}

// TestAdoptDHCPNetworkd takes over, for each of netplan.io's DHCP examples
// this host can hold, the leases systemd-networkd itself acquired (from a
// dnsmasq at the far end of each NIC's veth, as TestNetplanOracle runs
// them; networkd is then killed, as a running one would leave the
// kernel): the import's plan --adopt lists only adoptions (mark only) and
// the lease items asked again (a modify; on the bridge netagent takes
// over, a create); apply --adopt, under ip monitor and a ping
// every 10 ms from the first NIC's server to the first leased address,
// deletes nothing, loses no ping, and gets every leased address again by
// INIT-REBOOT; a plan without --adopt then has nothing to do.
func TestAdoptDHCPNetworkd(t *testing.T) {
	var table []string
	for _, name := range []string{"dhcp.yaml", "route_metric.yaml", "windows_dhcp_server.yaml", "bridge.yaml"} {
		var f takeoverFigures
		ok := t.Run(name, func(t *testing.T) {
			f = adoptDHCPNetworkd(t, filepath.Join(filepath.Dir(netplanExamples), name))
		})
		table = append(table, fmt.Sprintf("%-26s %-4s adopted %d, deletions seen %d, pings lost %d of %d", name,
			map[bool]string{true: "ok", false: "FAIL"}[ok], f.adopted, f.deletions, f.lost, f.sent))
	}
	t.Logf("DHCP switch-over from systemd-networkd:\n%s", strings.Join(table, "\n"))
}

// adoptDHCPNetworkd is the switch-over of one example.
func adoptDHCPNetworkd(t *testing.T, file string) (f takeoverFigures) {
	res, err := netplan.Import([]string{file}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := cliNewEnv(t)
	var first *dnsmasqtest.Server
	for _, ifc := range res.Intent.Interfaces {
		if ifc.Type == intent.LinkPhysical {
			if s := dnsmasqtest.Start(t, e.tgt, ifc.Name, dnsmasqtest.Options{}); first == nil {
				first = s
			}
		}
	}
	runNetworkd(t, e, netplanGenerate(t, file))
	leased := map[string]netip.Prefix{}
	for _, ifc := range res.Intent.Interfaces {
		if ifc.DHCP4.Enabled() {
			leased[ifc.Name] = e.leasedAddrOn(ifc.Name)
		}
	}
	data, err := importer.Encode(res.Intent)
	if err != nil {
		t.Fatal(err)
	}
	path := e.writeFile("imported.json", string(data))
	mon := takeoverStartMonitor(t, e)
	f.adopted = adoptDHCPPlanOnlyAdoptions(t, e, path)

	target := leased[res.Intent.Interfaces[slices.IndexFunc(res.Intent.Interfaces, func(i intent.Interface) bool { return i.DHCP4.Enabled() })].Name]
	ping := takeoverPath{from: first.Peer, target: target.Addr(), how: "from the DHCP server to the leased address"}.start(t)
	time.Sleep(300 * time.Millisecond)
	out := e.mustRun(0, "apply", "--adopt", "--json", "--wait", "30s", path)
	f.sent, f.lost, f.deletions = adoptDHCPNoBlip(t, ping, mon, "apply --adopt", out.String())
	var doc adoptDHCPApplied
	if err := json.Unmarshal([]byte(out.stdout), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	for _, l := range doc.Leases {
		if l.Address != leased[l.Interface].String() || l.Obtained != dhcp.ObtainedReboot {
			t.Errorf("lease %+v, want networkd's %v by INIT-REBOOT", l, leased[l.Interface])
		}
	}
	if len(doc.Leases) != len(leased) {
		t.Errorf("leases %+v, want one on each of %v", doc.Leases, leased)
	}
	if ops := takeoverOps(t, e.mustRun(0, "plan", "--json", path).stdout); len(ops) > 0 {
		t.Errorf("plan without --adopt after the adoption: %+v, want nothing to do", ops)
	}
	return f
}

// adoptDHCPPlanOnlyAdoptions checks that plan --adopt of file lists only
// adoptions (mark only) and the lease items' modify (asked again), and
// returns how many adoptions.
func adoptDHCPPlanOnlyAdoptions(t *testing.T, e *cliEnv, file string) (adopted int) {
	t.Helper()
	plan := e.mustRun(0, "plan", "--adopt", "--json", file)
	for _, o := range takeoverOps(t, plan.stdout) {
		switch {
		case o.Adopt == "mark only":
			adopted++
		case o.Op == "modify" && strings.HasPrefix(o.Item, "dhcp4-lease/"):
		case o.Op == "create" && o.Item == "dhcp4-lease/br0": // on a bridge: created with it, asking the same
		default:
			t.Errorf("plan --adopt: %+v, want only adoptions (mark only) and the leases asked again:\n%s", o, plan.stdout)
		}
	}
	return adopted
}
