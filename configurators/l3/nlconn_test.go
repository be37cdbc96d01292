package l3

import (
	"errors"
	"net/netip"
	"syscall"
	"testing"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The conn's own reads, in a namespace: a dump of many datagrams comes
// whole through dumpEach and dump (whose payloads outlive the reads that
// reuse the buffer), echoes survive the reads after them, and a request
// the kernel refuses returns its errno and leaves the conn usable.
func TestConnReads(t *testing.T) {
	tgt := testns.New(t)
	if err := tgt.NL.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "up0"}, PeerName: "peer0"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"up0", "peer0"} {
		l, err := tgt.NL.LinkByName(name)
		if err == nil {
			err = tgt.NL.LinkSetUp(l)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	up0, err := tgt.NL.LinkByName("up0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := openConn(tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	const n = 3000 // about a dozen datagrams of dump
	devs := routeDevs{"up0": up0.Attrs().Index}
	var reqs []*nlRequest
	for i := range n {
		r := &items.Route{Dst: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24), Dev: "up0", Scope: items.ScopeLink}
		reqs = append(reqs, routeRequest(unix.RTM_NEWROUTE, unix.NLM_F_CREATE|unix.NLM_F_EXCL, r, devs))
	}
	for i, rep := range c.exchange(reqs) {
		if rep.err != nil {
			t.Fatalf("route %d: %v", i, rep.err)
		}
	}
	var each int
	if err := c.dumpEach(routeDumpRequest(unix.AF_INET), unix.RTM_NEWROUTE, func(b []byte) {
		if m, err := parseRouteMsg(b); err == nil && m.Protocol == items.RouteProtocol {
			each++
		}
	}); err != nil || each != n {
		t.Fatalf("dumpEach: %d routes of ours, %v; want %d", each, err, n)
	}
	msgs, err := c.dump(routeDumpRequest(unix.AF_INET), unix.RTM_NEWROUTE)
	seen := map[netip.Addr]bool{}
	for _, b := range msgs {
		if m, err := parseRouteMsg(b); err == nil && m.Protocol == items.RouteProtocol {
			seen[m.Dst] = true
		}
	}
	if err != nil || len(seen) != n {
		t.Fatalf("dump: %d distinct routes of ours, %v; want %d", len(seen), err, n)
	}

	// an echo, then more reads
	del := &items.Route{Dst: netip.MustParsePrefix("10.0.5.0/24"), Scope: items.ScopeLink}
	reps := c.exchange([]*nlRequest{routeRequest(unix.RTM_DELROUTE, unix.NLM_F_ECHO, del, nil)})
	if _, err := c.dump(routeDumpRequest(unix.AF_INET), unix.RTM_NEWROUTE); err != nil {
		t.Fatal(err)
	}
	if reps[0].err != nil || len(reps[0].echo) != 1 {
		t.Fatalf("delete with echo: %v, %d echoes", reps[0].err, len(reps[0].echo))
	}
	if m, err := parseRouteMsg(reps[0].echo[0]); err != nil || m.Dst != del.Dst.Addr() {
		t.Errorf("echo after later reads: %+v, %v; want the route deleted", m, err)
	}

	// refused: the route is gone now
	reps = c.exchange([]*nlRequest{routeRequest(unix.RTM_DELROUTE, 0, del, nil)})
	if !isErrno(reps[0].err, unix.ESRCH) {
		t.Errorf("deleting a route that is gone: %v, want ESRCH", reps[0].err)
	}
	if c.broken {
		t.Fatal("a refusal broke the conn")
	}
	if got, err := c.dump(routeDumpRequest(unix.AF_INET), unix.RTM_NEWROUTE); err != nil || len(got) < n-1 {
		t.Errorf("dump after the refusals: %d, %v", len(got), err)
	}
}

// How a dump ends: NLMSG_DONE, with or without an errno; an NLMSG_ERROR;
// a single message without NLM_F_MULTI; and NLM_F_DUMP_INTR on any
// message makes the dump interrupted unless it failed.
func TestDumpState(t *testing.T) {
	msg := func(typ, flags uint16, errno int32) syscall.NetlinkMessage {
		m := syscall.NetlinkMessage{Header: syscall.NlMsghdr{Type: typ, Flags: flags}}
		if typ == unix.NLMSG_DONE || typ == unix.NLMSG_ERROR {
			m.Data = make([]byte, 4+unix.SizeofNlMsghdr)
			m.Data[0], m.Data[1], m.Data[2], m.Data[3] = byte(errno), byte(errno>>8), byte(errno>>16), byte(errno>>24)
		}
		return m
	}
	multi := uint16(unix.NLM_F_MULTI)
	for name, c := range map[string]struct {
		msgs  []syscall.NetlinkMessage
		taken int
		want  error
	}{
		"done":        {[]syscall.NetlinkMessage{msg(unix.RTM_NEWROUTE, multi, 0), msg(unix.RTM_NEWROUTE, multi, 0), msg(unix.NLMSG_DONE, multi, 0)}, 2, nil},
		"done errno":  {[]syscall.NetlinkMessage{msg(unix.RTM_NEWROUTE, multi, 0), msg(unix.NLMSG_DONE, multi, -int32(unix.ENOBUFS))}, 1, unix.ENOBUFS},
		"error":       {[]syscall.NetlinkMessage{msg(unix.NLMSG_ERROR, 0, -int32(unix.EOPNOTSUPP))}, 0, unix.EOPNOTSUPP},
		"single":      {[]syscall.NetlinkMessage{msg(unix.RTM_NEWROUTE, 0, 0)}, 1, nil},
		"interrupted": {[]syscall.NetlinkMessage{msg(unix.RTM_NEWROUTE, multi|unix.NLM_F_DUMP_INTR, 0), msg(unix.NLMSG_DONE, multi, 0)}, 1, netlink.ErrDumpInterrupted},
		"other types": {[]syscall.NetlinkMessage{msg(unix.RTM_NEWADDR, multi, 0), msg(unix.NLMSG_DONE, multi, 0)}, 0, nil},
	} {
		var d dumpState
		taken := 0
		for _, m := range c.msgs {
			if d.done {
				t.Fatalf("%s: done before the last message", name)
			}
			if d.take(m, unix.RTM_NEWROUTE) {
				taken++
			}
		}
		if !d.done || taken != c.taken || !errors.Is(d.err, c.want) || (c.want == nil) != (d.err == nil) {
			t.Errorf("%s: done %v, %d taken, err %v; want %d, %v", name, d.done, taken, d.err, c.taken, c.want)
		}
	}
}
