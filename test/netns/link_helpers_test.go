package netns_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/reconciler"
)

// linkEnv is one namespace with the link configurators registered, and
// their state directory.
type linkEnv struct {
	t        testing.TB
	tgt      *netnsx.Target
	reg      *reconciler.TypeRegistry
	stateDir string
}

func newLinkEnv(t testing.TB, tgt *netnsx.Target) *linkEnv {
	t.Helper()
	return newLinkEnvAt(t, tgt, t.TempDir())
}

// newLinkEnvAt is newLinkEnv with the state directory given: a second env
// over the same directory is the agent restarted.
func newLinkEnvAt(t testing.TB, tgt *netnsx.Target, stateDir string) *linkEnv {
	t.Helper()
	reg := &reconciler.TypeRegistry{}
	if err := link.Register(reg, tgt, stateDir); err != nil {
		t.Fatalf("registering link configurators: %v", err)
	}
	return &linkEnv{t: t, tgt: tgt, reg: reg, stateDir: stateDir}
}

// ifaces returns a fresh interface configurator over the env's state.
func (e *linkEnv) ifaces() *link.InterfaceConfigurator {
	e.t.Helper()
	c, err := link.NewInterfaceConfigurator(e.tgt, e.stateDir)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// readBack reads the namespace into a current-state graph, with intended as
// the hint.
func (e *linkEnv) readBack(intended *dg.Graph) *dg.Graph {
	e.t.Helper()
	got, err := link.ReadBack(e.tgt, e.stateDir, intended)
	if err != nil {
		e.t.Fatalf("read-back: %v", err)
	}
	return dg.New("current", got...)
}

// apply reconciles the namespace (read back as a restarted agent would)
// towards the items, and returns the operation log. It fails the test on
// any error.
func (e *linkEnv) apply(want ...dg.Item) reconciler.OperationLog {
	e.t.Helper()
	st := e.tryApply(want...)
	if st.Err != nil {
		e.t.Fatalf("reconcile: %v\nlog:\n%s", st.Err, st.OperationLog)
	}
	if len(st.Blocked) > 0 {
		e.t.Fatalf("reconcile: blocked items: %v\nlog:\n%s", st.Blocked, st.OperationLog)
	}
	return st.OperationLog
}

// tryApply is apply that returns the status, errors included.
func (e *linkEnv) tryApply(want ...dg.Item) reconciler.Status {
	e.t.Helper()
	intended := dg.New("intended", want...)
	current := e.readBack(intended)
	return reconciler.New(e.reg).Reconcile(context.Background(), current, intended)
}

// applyTwice applies the items, then checks that applying them again plans
// and runs no operation, and that the read-back equals what was applied.
func (e *linkEnv) applyTwice(want ...dg.Item) reconciler.OperationLog {
	e.t.Helper()
	log := e.apply(want...)
	if again := e.apply(want...); len(again) != 0 {
		e.t.Errorf("second apply ran operations:\n%s", again)
	}
	e.checkReadBack(want...)
	return log
}

// checkReadBack checks that every wanted item is read back equal.
func (e *linkEnv) checkReadBack(want ...dg.Item) {
	e.t.Helper()
	current := e.readBack(dg.New("intended", want...))
	for _, w := range want {
		got, ok := current.Get(dg.Ref(w))
		switch {
		case !ok:
			e.t.Errorf("read-back lacks %s", dg.Ref(w))
		case !got.Equal(w):
			e.t.Errorf("read-back of %s:\n got  %s\n want %s", dg.Ref(w), got, w)
		}
	}
}

// ipLink is the part of `ip -j -d link show` the tests look at.
type ipLink struct {
	IfName   string   `json:"ifname"`
	Flags    []string `json:"flags"`
	MTU      int      `json:"mtu"`
	Address  string   `json:"address"`
	IfAlias  string   `json:"ifalias"`
	Master   string   `json:"master"`
	Link     string   `json:"link"`
	LinkInfo struct {
		InfoKind      string         `json:"info_kind"`
		InfoData      map[string]any `json:"info_data"`
		InfoSlaveKind string         `json:"info_slave_kind"`
		InfoSlaveData map[string]any `json:"info_slave_data"`
	} `json:"linkinfo"`
}

func (l ipLink) up() bool {
	for _, f := range l.Flags {
		if f == "UP" {
			return true
		}
	}
	return false
}

// linkIPShow runs `ip -j -d link show` in the namespace; ok is false when
// the link does not exist.
func linkIPShow(t testing.TB, tgt *netnsx.Target, name string) (ipLink, bool) {
	t.Helper()
	out := linkExec(t, tgt, "ip", "-j", "-d", "link", "show")
	var links []ipLink
	if err := json.Unmarshal([]byte(out), &links); err != nil {
		t.Fatalf("parsing ip -j link: %v\n%s", err, out)
	}
	for _, l := range links {
		if l.IfName == name {
			return l, true
		}
	}
	return ipLink{}, false
}

// linkMustShow is linkIPShow that fails the test when the link is missing.
func linkMustShow(t testing.TB, tgt *netnsx.Target, name string) ipLink {
	t.Helper()
	l, ok := linkIPShow(t, tgt, name)
	if !ok {
		t.Fatalf("ip link: %s does not exist", name)
	}
	return l
}

func linkMustBeGone(t testing.TB, tgt *netnsx.Target, name string) {
	t.Helper()
	if _, ok := linkIPShow(t, tgt, name); ok {
		t.Errorf("ip link: %s still exists", name)
	}
}

// linkExec runs a command in the namespace (ip netns exec).
func linkExec(t testing.TB, tgt *netnsx.Target, name string, args ...string) string {
	t.Helper()
	return testns.Exec(t, tgt, name, args...)
}

// linkOps counts the log's operations by "op type/name" strings, for
// compact assertions.
func linkOps(log reconciler.OperationLog) []string {
	var ops []string
	for _, e := range log {
		ops = append(ops, e.Op.String()+" "+e.Ref.String())
	}
	return ops
}

// linkWantOps checks that the log holds exactly these operations, in any
// order.
func linkWantOps(t testing.TB, log reconciler.OperationLog, want ...string) {
	t.Helper()
	got := map[string]int{}
	for _, op := range linkOps(log) {
		got[op]++
	}
	for _, w := range want {
		if got[w] == 0 {
			t.Errorf("operation %q not run; log:\n%s", w, log)
		}
		got[w]--
	}
	for op, n := range got {
		if n > 0 {
			t.Errorf("unexpected operation %q; log:\n%s", op, log)
		}
	}
}

// netlinkUp is the admin-up flag of netlink.LinkAttrs.Flags.
const netlinkUp = net.FlagUp

func linkMAC(s string) net.HardwareAddr {
	mac, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return mac
}

// linkNL returns the kernel's link through netlink (for the VM, which has
// no iproute2).
func linkNL(t testing.TB, tgt *netnsx.Target, name string) netlink.Link {
	t.Helper()
	l, err := tgt.NL.LinkByName(name)
	if err != nil {
		t.Fatalf("reading link %s: %v", name, err)
	}
	return l
}

func linkGone(t testing.TB, tgt *netnsx.Target, name string) bool {
	t.Helper()
	_, err := tgt.NL.LinkByName(name)
	var nf netlink.LinkNotFoundError
	if err != nil && !errors.As(err, &nf) {
		t.Fatalf("reading link %s: %v", name, err)
	}
	return err != nil
}
