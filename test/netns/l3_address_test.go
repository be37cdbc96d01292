package netns_test

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
)

// l3AddrInfo returns the addr_info entries of `ip -j addr show dev <dev>`.
func (e *l3Env) l3AddrInfo(dev string) []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for _, link := range e.ipJSON("addr", "show", "dev", dev) {
		list, _ := link["addr_info"].([]any)
		for _, a := range list {
			if m, ok := a.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

func (e *l3Env) mustAddr(dev string, kv ...string) map[string]any {
	e.t.Helper()
	got := l3Find(e.l3AddrInfo(dev), kv...)
	if len(got) != 1 {
		e.t.Fatalf("ip addr show dev %s: %d addresses with %v, want 1", dev, len(got), kv)
	}
	return got[0]
}

func (e *l3Env) mustNoAddr(dev string, kv ...string) {
	e.t.Helper()
	if got := l3Find(e.l3AddrInfo(dev), kv...); len(got) != 0 {
		e.t.Errorf("ip addr show dev %s: %v still there", dev, got)
	}
}

func l3AddressSamples() []*items.Address {
	return []*items.Address{
		{Dev: "up0", Prefix: l3Prefix("192.0.2.10/24"), Label: "up0:web"},
		{Dev: "up0", Prefix: l3Prefix("192.0.2.11/24")},
		{Dev: "up0", Prefix: l3Prefix("169.254.10.1/16"), Scope: items.ScopeLink},
		{Dev: "up0", Prefix: l3Prefix("198.51.100.1/32"), Scope: items.ScopeHost},
		{Dev: "up0", Prefix: l3Prefix("2001:db8:1::10/64")},
		{Dev: "peer0", Prefix: l3Prefix("2001:db8:1::11/64")},
	}
}

func TestL3AddressCreateRecreateDelete(t *testing.T) {
	e := l3NewEnv(t)
	linkLocal := e.l3WaitLinkLocal("up0")
	addrs := l3AddressSamples()
	for _, a := range addrs {
		e.create(a)
	}
	e.mustAddr("up0", "local", "192.0.2.10", "prefixlen", "24", "label", "up0:web", "scope", "global", "broadcast", "192.0.2.255")
	e.mustAddr("up0", "local", "192.0.2.11", "prefixlen", "24", "label", "up0", "scope", "global")
	e.mustAddr("up0", "local", "169.254.10.1", "prefixlen", "16", "scope", "link")
	e.mustAddr("up0", "local", "198.51.100.1", "prefixlen", "32", "scope", "host")
	v6 := e.mustAddr("up0", "local", "2001:db8:1::10", "prefixlen", "64", "scope", "global")
	if v6["tentative"] != nil || v6["nodad"] != true {
		t.Errorf("IPv6 address is not added with nodad (usable at once): %v", v6)
	}
	e.mustAddr("peer0", "local", "2001:db8:1::11", "prefixlen", "64")
	e.mustReadBack(l3Items(addrs)...)

	// Do it twice: nothing is written.
	events := e.l3WatchAddrs()
	for _, a := range addrs {
		e.create(a)
	}
	events.mustBeQuiet(t, "creating existing addresses again")

	// A new label or scope is a recreate (the kernel would keep the old
	// one on a replace): Modify refuses, delete and create do it.
	relabel := &items.Address{Dev: "up0", Prefix: l3Prefix("192.0.2.10/24"), Label: "up0:api"}
	if !e.cfg(relabel).NeedsRecreate(addrs[0], relabel) {
		t.Fatal("NeedsRecreate is false for a new label")
	}
	if err := e.cfg(relabel).Modify(e.ctx, addrs[0], relabel); !errors.Is(err, l3.ErrNeedsRecreate) {
		t.Errorf("Modify with a new label: got %v, want ErrNeedsRecreate", err)
	}
	e.delete(addrs[0])
	e.create(relabel)
	addrs[0] = relabel
	e.mustAddr("up0", "local", "192.0.2.10", "label", "up0:api")
	e.mustReadBack(l3Items(addrs)...)
	// Create over our own address with another label replaces it (a
	// restarted agent whose intent changed meanwhile).
	rescope := &items.Address{Dev: "up0", Prefix: l3Prefix("198.51.100.1/32"), Scope: items.ScopeLink}
	e.create(rescope)
	addrs[3] = rescope
	e.mustAddr("up0", "local", "198.51.100.1", "scope", "link")
	e.mustReadBack(l3Items(addrs)...)

	for _, a := range addrs {
		e.delete(a)
		e.delete(a) // twice
	}
	e.mustReadBackNone(items.TypeAddress)
	for _, a := range addrs {
		e.mustNoAddr(a.Dev, "local", a.Prefix.Addr().String())
	}
	// The kernel's link-local address was never ours.
	e.mustAddr("up0", "local", linkLocal, "scope", "link")
}

func TestL3AddressForeignUntouched(t *testing.T) {
	e := l3NewEnv(t)
	e.ip("addr", "add", "192.0.2.50/24", "dev", "up0")
	e.ip("addr", "add", "2001:db8:2::50/64", "dev", "up0", "nodad")
	linkLocal := e.l3WaitLinkLocal("up0")
	before := fmt.Sprint(e.l3AddrInfo("up0"))

	clashes := []*items.Address{
		{Dev: "up0", Prefix: l3Prefix("192.0.2.50/24")},
		{Dev: "up0", Prefix: l3Prefix("192.0.2.50/24"), Label: "up0:x"},
		{Dev: "up0", Prefix: l3Prefix("2001:db8:2::50/64")},
		{Dev: "up0", Prefix: l3Prefix("2001:db8:2::50/48")}, // IPv6: the address alone is the key
		{Dev: "up0", Prefix: l3PrefixOf(linkLocal, 64)},
	}
	for _, a := range clashes {
		l3MustNotOwn(t, "create "+a.Name(), e.cfg(a).Create(e.ctx, a))
		l3MustNotOwn(t, "delete "+a.Name(), e.cfg(a).Delete(e.ctx, a))
	}
	// Ours beside them: the same IPv4 address with another prefix length
	// is another kernel object.
	ours := []*items.Address{
		{Dev: "up0", Prefix: l3Prefix("192.0.2.50/25")},
		{Dev: "up0", Prefix: l3Prefix("2001:db8:2::51/64")},
	}
	for _, a := range ours {
		e.create(a)
	}
	e.mustReadBack(l3Items(ours)...)
	for _, a := range ours {
		e.delete(a)
	}
	e.mustReadBackNone(items.TypeAddress)
	if after := fmt.Sprint(e.l3AddrInfo("up0")); after != before {
		t.Errorf("foreign addresses changed:\nbefore %s\nafter  %s", before, after)
	}
}

// Deleting the primary IPv4 address of a subnet makes the kernel delete its
// secondaries too, unless promote_secondaries is on: the configurator turns
// it on for the delete (and back off), so that ours and foreign ones alike
// are promoted and stay, and routes through the interface with them.
func TestL3AddressPrimaryWithSecondaries(t *testing.T) {
	e := l3NewEnv(t)
	primary := &items.Address{Dev: "up0", Prefix: l3Prefix("192.0.2.10/24")}
	secondary := &items.Address{Dev: "up0", Prefix: l3Prefix("192.0.2.11/24"), Label: "up0:b"}
	e.create(primary)
	e.create(secondary)
	e.mustAddr("up0", "local", "192.0.2.11", "secondary", "true")
	e.delete(primary)
	e.mustReadBack(secondary)
	e.mustAddr("up0", "local", "192.0.2.11", "label", "up0:b")
	e.delete(secondary)

	promote := func() string {
		return strings.TrimSpace(testns.Exec(t, e.tgt, "sysctl", "-n", "net.ipv4.conf.up0.promote_secondaries"))
	}
	e.create(primary)
	e.ip("addr", "add", "192.0.2.21/24", "dev", "up0") // a foreign secondary
	e.ip("route", "add", "198.51.100.0/24", "via", "192.0.2.1", "dev", "up0")
	e.delete(primary)
	e.mustNoAddr("up0", "local", "192.0.2.10")
	e.mustAddr("up0", "local", "192.0.2.21")
	if got := l3Find(e.l3Routes(), "dst", "198.51.100.0/24"); len(got) != 1 {
		t.Errorf("the route through up0 went with the primary address: %v", got)
	}
	if got := promote(); got != "0" {
		t.Errorf("promote_secondaries left at %s", got)
	}
	e.mustReadBackNone(items.TypeAddress)

	e.ip("addr", "del", "192.0.2.21/24", "dev", "up0")
	testns.Exec(t, e.tgt, "sysctl", "-qw", "net.ipv4.conf.up0.promote_secondaries=1")
	e.create(primary)
	e.create(secondary)
	e.delete(primary)
	e.mustAddr("up0", "local", "192.0.2.11", "label", "up0:b")
	if got := promote(); got != "1" {
		t.Errorf("promote_secondaries set on by the operator is now %s", got)
	}
}

// The kernel flushes every IPv4 route through an interface when its last
// IPv4 address goes: a foreign route there blocks the delete of our last
// address, and stays.
func TestL3AddressLastKeepsForeignRoutes(t *testing.T) {
	e := l3NewEnv(t)
	a := &items.Address{Dev: "up0", Prefix: l3Prefix("192.0.2.10/24")}
	b := &items.Address{Dev: "up0", Prefix: l3Prefix("198.51.100.10/24")}
	e.create(a)
	e.create(b)
	e.ip("route", "add", "203.0.113.0/24", "via", "192.0.2.1", "table", "7")
	e.delete(a) // not the last one
	l3MustNotOwn(t, "deleting the last address", e.cfg(b).Delete(e.ctx, b))
	e.mustAddr("up0", "local", "198.51.100.10")
	if got := l3Find(e.l3Routes(), "dst", "203.0.113.0/24", "gateway", "192.0.2.1"); len(got) != 1 {
		t.Errorf("foreign route gone: %v", got)
	}
	e.ip("route", "del", "203.0.113.0/24", "table", "7")
	e.delete(b)
	e.mustReadBackNone(items.TypeAddress)
}

func TestL3AddressMissingDevice(t *testing.T) {
	e := l3NewEnv(t)
	a := &items.Address{Dev: "nosuch0", Prefix: l3Prefix("192.0.2.1/24")}
	if err := e.cfg(a).Create(e.ctx, a); !errors.Is(err, l3.ErrNoDevice) {
		t.Errorf("create on a missing device: got %v, want ErrNoDevice", err)
	}
	e.delete(a) // its device is gone, so is it
}

// l3WaitLinkLocal waits for the kernel's fe80:: address on dev and returns it.
func (e *l3Env) l3WaitLinkLocal(dev string) string {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if got := l3Find(e.l3AddrInfo(dev), "family", "inet6", "scope", "link"); len(got) > 0 {
			return l3Str(got[0]["local"])
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("no link-local address on %s", dev)
	return ""
}

func l3PrefixOf(addr string, bits int) netip.Prefix {
	return netip.PrefixFrom(l3Addr(addr), bits)
}

// l3AddrEvents watches the namespace's address notifications.
type l3AddrEvents struct {
	ch   chan netlink.AddrUpdate
	done chan struct{}
}

func (e *l3Env) l3WatchAddrs() *l3AddrEvents {
	e.t.Helper()
	ev := &l3AddrEvents{ch: make(chan netlink.AddrUpdate, 256), done: make(chan struct{})}
	ns := e.tgt.NsHandle()
	if err := netlink.AddrSubscribeWithOptions(ev.ch, ev.done, netlink.AddrSubscribeOptions{Namespace: &ns}); err != nil {
		e.t.Fatalf("subscribing to addresses: %v", err)
	}
	e.t.Cleanup(func() { l3Close(ev.done) })
	return ev
}

func (ev *l3AddrEvents) mustBeQuiet(t *testing.T, what string) {
	t.Helper()
	select {
	case u := <-ev.ch:
		t.Errorf("%s: the kernel reported an address change: %v new=%v", what, u.LinkAddress, u.NewAddr)
	case <-time.After(200 * time.Millisecond):
	}
	l3Close(ev.done)
}

func l3Close(done chan struct{}) {
	select {
	case <-done:
	default:
		close(done)
	}
}
