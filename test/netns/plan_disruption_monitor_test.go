package netns_test

// A netlink monitor of a namespace, to check what the kernel does during an
// apply against what the plan predicted (TestPlanDisruptionMatchesKernel;
// TestInVMPlanDisruptionBondVLAN in the VM).

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
)

// mainIPv4Routes lists the destinations of the IPv4 routes of the main
// table.
func mainIPv4Routes(t testing.TB, tgt *netnsx.Target) []string {
	t.Helper()
	routes, err := tgt.NL.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range routes {
		if r.Dst == nil {
			out = append(out, "0.0.0.0/0")
		} else {
			out = append(out, r.Dst.String())
		}
	}
	return out
}

// linkIndexes maps every link's name to its index.
func linkIndexes(t testing.TB, tgt *netnsx.Target) map[string]int {
	t.Helper()
	links, err := tgt.NL.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, l := range links {
		out[l.Attrs().Name] = l.Attrs().Index
	}
	return out
}

// kernelMonitor records the link and route notifications of the namespace
// (netlink.LinkSubscribeAt, netlink.RouteSubscribeAt).
type kernelMonitor struct {
	links  chan netlink.LinkUpdate
	routes chan netlink.RouteUpdate
	done   chan struct{}
	// up is the running state (IFF_UP and IFF_LOWER_UP) of each ifindex
	// before the monitor started.
	up   map[int32]bool
	name map[int32]string
}

// kernelSeen is what the kernel did: the links that went down (lost
// IFF_UP or IFF_LOWER_UP) or were deleted, and the IPv4 destinations of
// the main table deleted.
type kernelSeen struct {
	down          map[string]bool
	routesDeleted []string
}

const (
	sentinelLink  = "zz-sentinel"
	sentinelRoute = "198.18.0.0/15"
)

func monitorKernel(t testing.TB, tgt *netnsx.Target) *kernelMonitor {
	t.Helper()
	m := &kernelMonitor{links: make(chan netlink.LinkUpdate, 4096), routes: make(chan netlink.RouteUpdate, 4096),
		done: make(chan struct{}), up: map[int32]bool{}, name: map[int32]string{}}
	t.Cleanup(func() { close(m.done) })
	ns := tgt.NsHandle()
	if err := netlink.LinkSubscribeAt(ns, m.links, m.done); err != nil {
		t.Fatalf("subscribing to links: %v", err)
	}
	if err := netlink.RouteSubscribeAt(ns, m.routes, m.done); err != nil {
		t.Fatalf("subscribing to routes: %v", err)
	}
	links, err := tgt.NL.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		a := l.Attrs()
		m.up[int32(a.Index)] = running(a.RawFlags)
		m.name[int32(a.Index)] = a.Name
	}
	return m
}

func running(flags uint32) bool { return flags&unix.IFF_UP != 0 && flags&unix.IFF_LOWER_UP != 0 }

// until makes a sentinel link and route after the apply, and reads the
// notifications up to them: the kernel sends each stream in order, so
// everything the apply caused is read by then.
func (m *kernelMonitor) until(t testing.TB, tgt *netnsx.Target) kernelSeen {
	t.Helper()
	if err := tgt.NL.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: sentinelLink}}); err != nil {
		t.Fatalf("adding the sentinel link: %v", err)
	}
	dst, _ := netlink.ParseIPNet(sentinelRoute)
	if err := tgt.NL.RouteAdd(&netlink.Route{Dst: dst, Type: unix.RTN_BLACKHOLE}); err != nil {
		t.Fatalf("adding the sentinel route: %v", err)
	}
	seen := kernelSeen{down: map[string]bool{}}
	deadline := time.After(time.Minute) // a bound on a broken kernel, not a timing
	for gotLink, gotRoute := false, false; !gotLink || !gotRoute; {
		select {
		case u := <-m.links:
			a := u.Attrs()
			idx := u.Index
			switch {
			case a.Name == sentinelLink:
				gotLink = true
			case u.Family == unix.AF_BRIDGE:
				// A bridge port's view (RTM_DELLINK when it leaves the
				// bridge), not the link's.
			case u.Header.Type == unix.RTM_DELLINK:
				seen.down[a.Name] = true
			default:
				if was, known := m.up[idx]; known && was && !running(u.Flags) {
					seen.down[a.Name] = true
				}
				if _, known := m.up[idx]; known {
					m.up[idx] = running(u.Flags)
				}
			}
		case u := <-m.routes:
			dst := "0.0.0.0/0"
			if u.Route.Dst != nil {
				dst = u.Route.Dst.String()
			}
			switch {
			case dst == sentinelRoute:
				gotRoute = u.Type == unix.RTM_NEWROUTE || gotRoute
			case u.Type == unix.RTM_DELROUTE && u.Route.Table == unix.RT_TABLE_MAIN && u.Route.Family == unix.AF_INET:
				seen.routesDeleted = append(seen.routesDeleted, dst)
			}
		case <-deadline:
			t.Fatal("the sentinel notifications never came")
		}
	}
	return seen
}

// mainIPv4Dst is the destination of a withdrawn route of the main table,
// IPv4: "route/main 10.99.0.0/16 metric 0" (netagent's) or "10.9.0.0/24
// dev vx1" (the kernel's subnet route).
func mainIPv4Dst(route string) (string, bool) {
	f := strings.Fields(route)
	switch {
	case len(f) >= 2 && f[0] == "route/main" && !strings.Contains(f[1], ":"):
		return f[1], true
	case len(f) >= 1 && !strings.HasPrefix(f[0], "route/") && !strings.Contains(f[0], ":"):
		return f[0], true
	}
	return "", false
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
