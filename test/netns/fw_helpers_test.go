package netns_test

import (
	"context"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/configurators/firewall"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// fwEnv is a throwaway namespace with the firewall configurators
// registered for it and a state directory.
type fwEnv struct {
	t        testing.TB
	tgt      *netnsx.Target
	stateDir string
	reg      *reconciler.TypeRegistry
	ctx      context.Context
}

func fwNewEnv(t testing.TB) *fwEnv {
	t.Helper()
	tgt := testns.New(t)
	e := &fwEnv{t: t, tgt: tgt, stateDir: t.TempDir(), ctx: context.Background()}
	e.reg = e.newRegistry()
	return e
}

// newRegistry registers fresh configurators with the same state directory:
// what a restarted agent does.
func (e *fwEnv) newRegistry() *reconciler.TypeRegistry {
	e.t.Helper()
	reg := &reconciler.TypeRegistry{}
	if err := firewall.Register(reg, e.tgt, e.stateDir); err != nil {
		e.t.Fatal(err)
	}
	return reg
}

// cfg returns the configurator of item's type.
func (e *fwEnv) cfg(item dg.Item) reconciler.Configurator {
	return e.reg.Configurator(item)
}

// reconcile runs a real reconciler and fails the test on any error.
func (e *fwEnv) reconcile(current, intended *dg.Graph) reconciler.Status {
	e.t.Helper()
	st := reconciler.New(e.reg).Reconcile(e.ctx, current, intended)
	if st.Err != nil {
		e.t.Fatalf("reconcile: %v\n%s", st.Err, st.OperationLog)
	}
	return st
}

// readBack builds a current-state graph from the kernel, as a restarted
// agent does.
func (e *fwEnv) readBack(hint *dg.Graph) *dg.Graph {
	e.t.Helper()
	got, err := firewall.ReadBack(e.tgt, e.stateDir, hint)
	if err != nil {
		e.t.Fatal(err)
	}
	return dg.New("current", got...)
}

// ipt runs iptables or ip6tables in the namespace.
func (e *fwEnv) ipt(fam items.Family, args ...string) string {
	e.t.Helper()
	return testns.Exec(e.t, e.tgt, fwCmd(fam, "tables"), args...)
}

func fwCmd(fam items.Family, suffix string) string {
	if fam == items.FamilyIPv6 {
		return "ip6" + suffix
	}
	return "ip" + suffix
}

// rulesS returns the rule lines of `iptables -t table -S chain`, without
// the "-A <chain> " prefix.
func (e *fwEnv) rulesS(fam items.Family, table, chain string) []string {
	e.t.Helper()
	var rules []string
	for _, line := range strings.Split(e.ipt(fam, "-t", table, "-S", chain), "\n") {
		if r, ok := strings.CutPrefix(line, "-A "+chain+" "); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

// chainExists reports whether `iptables -t table -S` declares chain.
func (e *fwEnv) chainExists(fam items.Family, table, chain string) bool {
	e.t.Helper()
	return slices.Contains(strings.Split(e.ipt(fam, "-t", table, "-S"), "\n"), "-N "+chain)
}

// saveWithCounters returns iptables-save -c without its dated comments:
// any rewrite of a rule resets its counters, so equal snapshots around an
// apply prove it wrote nothing there.
func (e *fwEnv) saveWithCounters(fam items.Family) string {
	e.t.Helper()
	out := testns.Exec(e.t, e.tgt, fwCmd(fam, "tables-save"), "-c")
	var keep []string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "#") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// sendLoopback sends three 1-byte UDP datagrams over the namespace's
// loopback, so that the OUTPUT rules count packets (3 packets, 87 bytes).
func (e *fwEnv) sendLoopback() {
	e.t.Helper()
	err := e.tgt.Do(func() error {
		l, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer l.Close()
		c, err := net.Dial("udp4", l.LocalAddr().String())
		if err != nil {
			return err
		}
		defer c.Close()
		for range 3 {
			if _, err := c.Write([]byte("x")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// fwRunIn runs a command in the namespace without failing the test (for
// goroutines).
func fwRunIn(tgt *netnsx.Target, name string, args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", tgt.Name, name}, args...)...).CombinedOutput()
	return string(out), err
}

// fwOps counts the operations of a reconcile, by kind.
func fwOps(st reconciler.Status) map[reconciler.Operation]int {
	n := make(map[reconciler.Operation]int)
	for _, e := range st.OperationLog {
		n[e.Op]++
	}
	return n
}

// fwGraph returns an intended graph of items.
func fwGraph(its ...dg.Item) *dg.Graph { return dg.New("intent", its...) }

// fwChains returns the example intent's chains: the LAN forward rules
// jumped to from FORWARD at position 2 (after a foreign rule), the
// masquerade in nat, an IPv6 filter chain, and an OUTPUT chain that
// counts loopback traffic.
func fwChains() (fwd, nat, fwd6, out *items.IptablesChain) {
	fwd = &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-FWD",
		JumpFrom: "FORWARD", Position: 2, Rules: [][]string{
			{"-i", "br-lan", "-o", "uplink0", "-j", "ACCEPT"},
			{"-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"},
		}}
	nat = &items.IptablesChain{Family: items.FamilyIPv4, Table: "nat", Chain: "NA-NAT",
		JumpFrom: "POSTROUTING", Position: 1, Rules: [][]string{
			{"-s", "192.168.50.0/24", "-o", "uplink0", "-j", "MASQUERADE"},
		}}
	fwd6 = &items.IptablesChain{Family: items.FamilyIPv6, Table: "filter", Chain: "NA-FWD6",
		JumpFrom: "FORWARD", Position: 2, Rules: [][]string{
			{"-i", "br-lan", "-o", "uplink0", "-j", "ACCEPT"},
			{"-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"},
			{"-s", "fd00:50::1", "-p", "tcp", "--dport", "22", "-m", "comment", "--comment", "ssh from the \"admin\" host", "-j", "ACCEPT"},
		}}
	out = &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-OUT",
		JumpFrom: "OUTPUT", Rules: [][]string{
			{"-o", "lo", "-p", "udp", "-m", "comment", "--comment", "loopback udp", "-j", "ACCEPT"},
		}}
	return fwd, nat, fwd6, out
}
