//go:build !vmtest

package netns_test

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
)

// mbbEvent is one IPv4 address or main-table default route the kernel
// added or deleted, as it told its listeners.
type mbbEvent struct {
	new  bool
	kind string // "route", "addr" or "sentinel"
	key  string // "default metric 100", "192.0.2.10/24"
}

func (ev mbbEvent) String() string {
	op := "del"
	if ev.new {
		op = "new"
	}
	return op + " " + ev.kind + " " + ev.key
}

// mbbWatcher listens, on one netlink socket in the namespace, to IPv4
// address and route notifications, so that they arrive in the order the
// kernel made the changes.
type mbbWatcher struct {
	t      *testing.T
	ip     func(args ...string) string
	events chan mbbEvent
}

func (e *cliEnv) mbbWatch() *mbbWatcher { return mbbWatch(e.t, e.tgt, e.ip) }

func mbbWatch(t *testing.T, tgt *netnsx.Target, ip func(args ...string) string) *mbbWatcher {
	t.Helper()
	s, err := nl.SubscribeAt(tgt.NsHandle(), netns.None(), unix.NETLINK_ROUTE,
		unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV4_ROUTE)
	if err != nil {
		t.Fatalf("subscribing to netlink: %v", err)
	}
	w := &mbbWatcher{t: t, ip: ip, events: make(chan mbbEvent, 4096)}
	go func() {
		defer close(w.events)
		for {
			msgs, _, err := s.Receive()
			if err != nil {
				return // closed at the end of the test
			}
			for _, m := range msgs {
				if ev, ok := mbbParse(m.Header.Type, m.Data); ok {
					w.events <- ev
				}
			}
		}
	}()
	t.Cleanup(s.Close)
	return w
}

func mbbParse(typ uint16, data []byte) (mbbEvent, bool) {
	switch typ {
	case unix.RTM_NEWROUTE, unix.RTM_DELROUTE:
		msg := nl.DeserializeRtMsg(data)
		attrs, err := nl.ParseRouteAttr(data[msg.Len():])
		if err != nil || msg.Family != unix.AF_INET {
			return mbbEvent{}, false
		}
		table, metric := uint32(msg.Table), uint32(0)
		for _, a := range attrs {
			switch a.Attr.Type {
			case unix.RTA_TABLE:
				table = native.Uint32(a.Value)
			case unix.RTA_PRIORITY:
				metric = native.Uint32(a.Value)
			}
		}
		ev := mbbEvent{new: typ == unix.RTM_NEWROUTE}
		switch {
		case table == 250:
			ev.kind, ev.key = "sentinel", "table 250"
		case table == unix.RT_TABLE_MAIN && msg.Dst_len == 0 && msg.Type == unix.RTN_UNICAST:
			ev.kind, ev.key = "route", fmt.Sprintf("default metric %d", metric)
		default:
			return mbbEvent{}, false
		}
		return ev, true
	case unix.RTM_NEWADDR, unix.RTM_DELADDR:
		msg := nl.DeserializeIfAddrmsg(data)
		attrs, err := nl.ParseRouteAttr(data[msg.Len():])
		if err != nil || msg.Family != unix.AF_INET {
			return mbbEvent{}, false
		}
		for _, a := range attrs {
			if a.Attr.Type == unix.IFA_LOCAL {
				return mbbEvent{new: typ == unix.RTM_NEWADDR, kind: "addr",
					key: fmt.Sprintf("%s/%d", net.IP(a.Value), msg.Prefixlen)}, true
			}
		}
	}
	return mbbEvent{}, false
}

var native = nl.NativeEndian()

// apply runs `netagent apply file` and returns every change the kernel
// notified while it ran.
func (w *mbbWatcher) apply(e *cliEnv, file string) []mbbEvent {
	w.t.Helper()
	e.mustRun(0, "apply", file)
	return w.flush()
}

// flush returns the changes notified so far: a sentinel route added now
// marks the end (notifications of one socket come in order), so nothing
// is timed.
func (w *mbbWatcher) flush() []mbbEvent {
	w.t.Helper()
	w.ip("route", "add", "blackhole", "192.0.2.123/32", "table", "250")
	defer w.ip("route", "del", "blackhole", "192.0.2.123/32", "table", "250")
	return w.until(func(ev mbbEvent) bool { return ev.kind == "sentinel" && ev.new })
}

// until returns the changes notified up to the one done accepts (not
// included if it is the sentinel's).
func (w *mbbWatcher) until(done func(mbbEvent) bool) []mbbEvent {
	w.t.Helper()
	var got []mbbEvent
	deadline := time.After(30 * time.Second) // a bound, not a timing assumption
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				w.t.Fatalf("netlink subscription closed; got %v", got)
			}
			if ev.kind != "sentinel" {
				got = append(got, ev)
			}
			if done(ev) {
				return got
			}
		case <-deadline:
			w.t.Fatalf("the awaited change was never notified; got %v", got)
		}
	}
}

// mbbUplink is an intent with the uplink's address and default route.
func (e *cliEnv) mbbUplink(addr string, metric int) string {
	return e.writeFile("uplink.json", fmt.Sprintf(`{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": [%q]}],
  "routes": [{"to": "default", "via": "192.0.2.1", "dev": "uplink0", "metric": %d}]}`, addr, metric))
}

// mbbOrder returns the position of the first op of plan (or log) lines
// containing all of parts, failing when there is none.
func mbbOrder(t *testing.T, ops []string, parts ...string) int {
	t.Helper()
	i := slices.IndexFunc(ops, func(op string) bool {
		for _, p := range parts {
			if !strings.Contains(op, p) {
				return false
			}
		}
		return true
	})
	if i < 0 {
		t.Fatalf("no operation with %q in %q", parts, ops)
	}
	return i
}

// Make before break on the uplink: a new metric for the default route adds
// the new route before it deletes the old one, and a new uplink address is
// added before the old one goes, the default route staying untouched. The
// kernel's notifications, watched during each apply, show the default
// route never absent; plan shows the same order.
func TestAgentCLIMakeBeforeBreakUplink(t *testing.T) {
	e := cliNewEnv(t)
	e.mustRun(0, "apply", e.mbbUplink("192.0.2.10/24", 100))
	e.mbbMustRoute("default", "metric 100")
	w := e.mbbWatch()
	w.flush()

	// A new metric: another kernel object (the kernel keys routes by metric).
	metric200 := e.mbbUplink("192.0.2.10/24", 200)
	plan := e.planOps(metric200)
	if mbbOrder(t, plan, "create", "0.0.0.0/0 metric 200") > mbbOrder(t, plan, "delete", "0.0.0.0/0 metric 100") {
		t.Errorf("plan deletes the old default route before it creates the new one: %q", plan)
	}
	evs := w.apply(e, metric200)
	mbbNeverWithoutDefault(t, evs, "default metric 100")
	if !slices.Equal(mbbKinds(evs, "route"), []string{"new route default metric 200", "del route default metric 100"}) {
		t.Errorf("metric change: kernel notified %v", evs)
	}
	e.mbbMustRoute("default", "metric 200")

	// A new address in the same subnet: added first, the old one deleted
	// after, and the default route neither deleted nor added again.
	addr11 := e.mbbUplink("192.0.2.11/24", 200)
	plan = e.planOps(addr11)
	if mbbOrder(t, plan, "create", "192.0.2.11/24") > mbbOrder(t, plan, "delete", "192.0.2.10/24") {
		t.Errorf("plan deletes the old address before it adds the new one: %q", plan)
	}
	if slices.ContainsFunc(plan, func(op string) bool { return strings.Contains(op, "route/") && !strings.HasPrefix(op, "modify ") }) {
		t.Errorf("plan deletes or creates the default route for an address change: %q", plan)
	}
	evs = w.apply(e, addr11)
	mbbNeverWithoutDefault(t, evs, "default metric 200")
	if got := mbbKinds(evs, "route"); len(got) != 0 {
		t.Errorf("address change touched the default route: %v", got)
	}
	// (The kernel notifies the promotion of 192.0.2.11 to primary as a
	// second RTM_NEWADDR.)
	if got := mbbKinds(evs, "addr"); len(got) < 2 || !slices.Equal(got[:2], []string{"new addr 192.0.2.11/24", "del addr 192.0.2.10/24"}) ||
		slices.Contains(got, "del addr 192.0.2.11/24") {
		t.Errorf("address change: kernel notified %v", got)
	}
	e.mbbMustRoute("default", "metric 200")
	if got := e.ip("-4", "addr", "show", "dev", "uplink0"); !strings.Contains(got, "192.0.2.11/24") || strings.Contains(got, "192.0.2.10/") {
		t.Errorf("uplink addresses:\n%s", got)
	}
	if got := strings.TrimSpace(e.exec("sysctl", "-n", "net.ipv4.conf.uplink0.promote_secondaries")); got != "0" {
		t.Errorf("promote_secondaries of uplink0 left at %s", got)
	}
	e.mustRun(0, "check", addr11)

	// A new gateway: the same kernel object (table, destination, metric),
	// replaced in place (NLM_F_REPLACE): one RTM_NEWROUTE, no delete.
	gw := e.writeFile("uplink.json", `{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.11/24"]}],
  "routes": [{"to": "default", "via": "192.0.2.254", "dev": "uplink0", "metric": 200}]}`)
	if plan := e.planOps(gw); !slices.Equal(plan, []string{"modify route/main 0.0.0.0/0 metric 200"}) {
		t.Errorf("plan for a new gateway: %q", plan)
	}
	evs = w.apply(e, gw)
	if got := mbbKinds(evs, "route"); !slices.Equal(got, []string{"new route default metric 200"}) {
		t.Errorf("gateway change: the default route was not replaced in place: %v", got)
	}
	e.mbbMustRoute("default", "via 192.0.2.254")

	// The default route takes the uplink's address as its source: a new
	// address replaces the route in place (a new src) once it exists, and
	// the old address goes last.
	src11 := e.mbbUplinkSrc("192.0.2.11/24", "192.0.2.11")
	e.mustRun(0, "apply", src11)
	w.flush()
	src12 := e.mbbUplinkSrc("192.0.2.12/24", "192.0.2.12")
	plan = e.planOps(src12)
	want := []string{"create address/uplink0/192.0.2.12/24", "modify route/main 0.0.0.0/0 metric 200", "delete address/uplink0/192.0.2.11/24"}
	if !slices.Equal(plan, want) {
		t.Errorf("plan for a new source address:\n got  %q\n want %q", plan, want)
	}
	evs = w.apply(e, src12)
	mbbNeverWithoutDefault(t, evs, "default metric 200")
	if got := mbbKinds(evs, "route"); !slices.Equal(got, []string{"new route default metric 200"}) {
		t.Errorf("source change: the default route was not replaced in place: %v", got)
	}
	e.mbbMustRoute("default", "src 192.0.2.12")
	e.mustRun(0, "check", src12)
}

// mbbUplinkSrc is mbbUplink with the address as the route's source.
func (e *cliEnv) mbbUplinkSrc(addr, src string) string {
	return e.writeFile("uplink.json", fmt.Sprintf(`{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": [%q]}],
  "routes": [{"to": "default", "via": "192.0.2.1", "dev": "uplink0", "metric": 200, "src": %q}]}`, addr, src))
}

// An IPv6 address under another prefix length is the same kernel object
// (the kernel keys it by the address alone): the old one is deleted first,
// and one apply converges.
func TestAgentCLIConflictingAddressDeletedFirst(t *testing.T) {
	e := cliNewEnv(t)
	v6 := func(prefix string) string {
		return e.writeFile("v6.json", fmt.Sprintf(`{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": [%q]}]}`, prefix))
	}
	e.mustRun(0, "apply", v6("2001:db8::10/64"))
	next := v6("2001:db8::10/56")
	plan := e.planOps(next)
	want := []string{"delete address/uplink0/2001:db8::10/64", "create address/uplink0/2001:db8::10/56"}
	if !slices.Equal(plan, want) {
		t.Errorf("plan:\n got  %q\n want %q", plan, want)
	}
	e.mustRun(0, "apply", next)
	if got := e.ip("-6", "addr", "show", "dev", "uplink0", "scope", "global"); !strings.Contains(got, "2001:db8::10/56") {
		t.Errorf("uplink0 addresses:\n%s", got)
	}
	e.mustRun(0, "check", next)
}

// mbbNeverWithoutDefault replays the notifications from a kernel holding
// the default route start, and fails if there was a moment without any.
func mbbNeverWithoutDefault(t *testing.T, evs []mbbEvent, start string) {
	t.Helper()
	have := map[string]bool{start: true}
	for i, ev := range evs {
		if ev.kind != "route" {
			continue
		}
		if ev.new {
			have[ev.key] = true
		} else {
			delete(have, ev.key)
		}
		if len(have) == 0 {
			t.Errorf("no default route after %v (notifications %v)", ev, evs[:i+1])
			return
		}
	}
}

func mbbKinds(evs []mbbEvent, kind string) []string {
	var out []string
	for _, ev := range evs {
		if ev.kind == kind {
			out = append(out, ev.String())
		}
	}
	return out
}

// mbbMustRoute fails unless `ip route show <dst>` in main lists a netagent
// route with want in its line.
func (e *cliEnv) mbbMustRoute(dst, want string) {
	e.t.Helper()
	if got := e.ip("route", "show", dst); !strings.Contains(got, want) || !strings.Contains(got, "proto 211") && !strings.Contains(got, "proto netagent") {
		e.t.Errorf("route %s: want %q in\n%s", dst, want, got)
	}
}

// A renamed VXLAN keeps its VNI and port: the kernel refuses a second
// tunnel with them (EEXIST), so the old one goes first and one apply
// converges.
func TestAgentCLIRenamedVxlanDeletedFirst(t *testing.T) {
	e := cliNewEnv(t)
	vx := func(name string) string {
		return e.writeFile("vx.json", fmt.Sprintf(`{"version": 1,
  "interfaces": [
    {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]},
    {"name": %q, "type": "vxlan", "vxlan": {"vni": 100, "local": "192.0.2.10", "remote": "192.0.2.20", "port": 4789, "parent": "uplink0"}}
  ]}`, name))
	}
	e.mustRun(0, "apply", vx("vx100"))
	next := vx("vxlan100")
	plan := e.planOps(next)
	if mbbOrder(t, plan, "delete interface/vx100") > mbbOrder(t, plan, "create interface/vxlan100") {
		t.Errorf("plan creates the new tunnel beside the old one: %q", plan)
	}
	e.mustRun(0, "apply", next)
	if got := e.ip("-d", "link", "show", "vxlan100"); !strings.Contains(got, "vxlan id 100") {
		t.Errorf("vxlan100:\n%s", got)
	}
	if got := e.ip("-br", "link", "show"); strings.Contains(got, "vx100") {
		t.Errorf("vx100 is still there:\n%s", got)
	}
	e.mustRun(0, "check", next)
}

// A renamed veth that keeps its peer's name: the peer's name is taken
// until the old pair goes, so the old pair goes first and one apply
// converges.
func TestAgentCLIRenamedVethDeletedFirst(t *testing.T) {
	e := cliNewEnv(t)
	veth := func(name string) string {
		return e.writeFile("veth.json", fmt.Sprintf(`{"version": 1,
  "interfaces": [{"name": %q, "type": "veth", "veth": {"peer": "lan-peer"}, "addresses": ["192.168.50.1/24"]}]}`, name))
	}
	e.mustRun(0, "apply", veth("lan0"))
	next := veth("lan1")
	plan := e.planOps(next)
	if mbbOrder(t, plan, "delete interface/lan0") > mbbOrder(t, plan, "create interface/lan1") {
		t.Errorf("plan creates the new pair beside the old one: %q", plan)
	}
	e.mustRun(0, "apply", next)
	if got := e.ip("-br", "link", "show"); !strings.Contains(got, "lan1@lan-peer") || strings.Contains(got, "lan0") {
		t.Errorf("links:\n%s", got)
	}
	e.mustRun(0, "check", next)
}
