package l3

import (
	"errors"
	"fmt"
	"slices"
	"syscall"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Someone else's objects that the kernel drops by itself when netagent
// changes a link: deleting or recreating a link takes every route through
// it and every neighbour entry on it; setting it down, moving it to
// another master or changing its MAC address flushes its IPv4 routes and
// its neighbour entries (permanent ones included); removing its last
// address takes the routes through it. netagent never operates on those
// objects, so nothing else records them: a trial (agent/host) saves the
// ones at risk with ForeignAtRisk before such a change, and its revert
// puts back the ones missing with RestoreForeign.
//
// An object is kept as the kernel described it (the RTM_NEWROUTE or
// RTM_NEWNEIGH payload of a dump), every attribute included, with the
// names of the interfaces its indexes name: a recreated link has a new
// index, so restoring writes the index the name has then. The kernel's
// own routes (protocol kernel) come back with their addresses and are left
// out, except an IPv6 link's multicast route (ff00::/8), which does not
// come back when the link is set up again without carrier, its address
// already there (restoring adds with NLM_F_EXCL: one that came back is
// left as it is, never duplicated). netagent's own routes (items, with
// before-images of their own), cached routes and the neighbour entries
// the kernel learned (only its cache) are left out.

// ForeignObject is someone else's route or neighbour entry as the kernel
// reported it.
type ForeignObject struct {
	// Kind is items.TypeRoute or items.TypeNeighbor.
	Kind string `json:"kind"`
	// Msg is the kernel's payload (rtmsg or ndmsg and attributes).
	Msg []byte `json:"msg"`
	// Devs names the interface indexes in Msg, in the order
	// foreignIndexes finds them.
	Devs []string `json:"devs"`
}

// filteredDumpMax is how many interfaces ForeignAtRisk dumps one by one
// (the kernel filters the dump by interface); for more, it dumps
// everything once and filters itself.
const filteredDumpMax = 8

// ForeignAtRisk returns the foreign routes (every table, both families)
// through the interfaces devs and the foreign permanent neighbour entries
// on them: what the kernel would drop if those links went. An interface of
// devs that does not exist holds nothing.
func ForeignAtRisk(t *netnsx.Target, devs []string) ([]ForeignObject, error) {
	if len(devs) == 0 {
		return nil, nil
	}
	c, err := openConn(t)
	if err != nil {
		return nil, fmt.Errorf("saving foreign objects: %w", err)
	}
	defer c.close()
	at := make(map[int]bool, len(devs))
	for _, d := range devs {
		i, err := c.ifIndex(d)
		if errors.Is(err, ErrNoDevice) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("saving foreign objects: %w", err)
		}
		at[i] = true
	}
	if len(at) == 0 {
		return nil, nil
	}
	// The kernel filters a dump by interface only on a socket that asks
	// for strict checking; without it, every object comes and the filter
	// below does the work.
	filtered := len(at) <= filteredDumpMax &&
		unix.SetsockoptInt(c.s.GetFd(), unix.SOL_NETLINK, unix.NETLINK_GET_STRICT_CHK, 1) == nil
	var msgs []ForeignObject
	dump := func(index int) error {
		for _, kind := range []string{items.TypeRoute, items.TypeNeighbor} {
			for _, af := range []int{unix.AF_INET, unix.AF_INET6} {
				got, err := dumpAtRisk(c, kind, af, index)
				if err != nil {
					return err
				}
				msgs = append(msgs, got...)
			}
		}
		return nil
	}
	if filtered {
		for i := range at {
			if err := dump(i); err != nil {
				return nil, fmt.Errorf("saving foreign objects: %w", err)
			}
		}
	} else if err := dump(0); err != nil {
		return nil, fmt.Errorf("saving foreign objects: %w", err)
	}
	var names map[int]string
	var out []ForeignObject
	for _, o := range msgs {
		idx := foreignIndexes(o.Kind, o.Msg)
		if !slices.ContainsFunc(idx, func(off int) bool { return at[indexAt(o.Msg, off)] }) {
			continue
		}
		if names == nil {
			if names, err = linkNames(c); err != nil {
				return nil, fmt.Errorf("saving foreign objects: %w", err)
			}
		}
		for _, off := range idx {
			o.Devs = append(o.Devs, names[indexAt(o.Msg, off)])
		}
		out = append(out, o)
	}
	return out, nil
}

// dumpAtRisk dumps the foreign routes or static neighbours of family af,
// asking the kernel for those of the interface index only (0: all).
func dumpAtRisk(c *conn, kind string, af, index int) ([]ForeignObject, error) {
	var req *nl.NetlinkRequest
	var resType uint16
	if kind == items.TypeRoute {
		req, resType = newDump(unix.RTM_GETROUTE), unix.RTM_NEWROUTE
		req.AddData(&nl.RtMsg{RtMsg: unix.RtMsg{Family: uint8(af)}})
		if index != 0 {
			req.AddData(nl.NewRtAttr(unix.RTA_OIF, nl.Uint32Attr(uint32(index))))
		}
	} else {
		req, resType = newDump(unix.RTM_GETNEIGH), unix.RTM_NEWNEIGH
		req.AddData(&netlink.Ndmsg{Family: uint8(af)})
		if index != 0 {
			req.AddData(nl.NewRtAttr(unix.NDA_IFINDEX, nl.Uint32Attr(uint32(index))))
		}
	}
	var out []ForeignObject
	err := retryDump(kind+"s", func() error {
		msgs, err := c.dump(req, resType)
		out = out[:0]
		for _, m := range msgs {
			if foreignLosable(kind, m) {
				out = append(out, ForeignObject{Kind: kind, Msg: slices.Clone(m)})
			}
		}
		return err
	})
	return out, err
}

// foreignLosable reports whether the payload m is someone else's route
// (not cached) or static neighbour entry.
func foreignLosable(kind string, m []byte) bool {
	if kind == items.TypeNeighbor {
		k, ok := parseNeigh(m)
		return ok && !k.owned() && k.state&(netlink.NUD_PERMANENT|netlink.NUD_NOARP) != 0
	}
	r, err := parseRouteMsg(m)
	if err != nil || r.Flags&unix.RTM_F_CLONED != 0 || r.Protocol == items.RouteProtocol {
		return false
	}
	// The kernel's routes come and go with their addresses (a subnet's
	// route names the address as its source), except an IPv6 link's
	// multicast route (ff00::/8), which the kernel adds when it configures
	// the link and does not add again when the link comes back up without
	// carrier.
	return r.Protocol != unix.RTPROT_KERNEL || r.Type == unix.RTN_MULTICAST
}

// foreignIndexes returns the offsets in m of the interface indexes it
// holds: a neighbour's ndm_ifindex; a route's RTA_OIF and each nexthop's
// rtnh_ifindex.
func foreignIndexes(kind string, m []byte) []int {
	if kind == items.TypeNeighbor {
		if len(m) < sizeofNdmsg {
			return nil
		}
		return []int{4}
	}
	var out []int
	routeAttrs(m, func(typ uint16, off, l int) {
		if typ == unix.RTA_OIF && l >= unix.SizeofRtAttr+4 {
			out = append(out, off+unix.SizeofRtAttr)
		}
	})
	for _, h := range nexthopOffsets(m) {
		out = append(out, h+4)
	}
	return out
}

// routeAttrs calls f with the type, offset and length of each attribute
// of the route payload m.
func routeAttrs(m []byte, f func(typ uint16, off, l int)) {
	for off := unix.SizeofRtMsg; off+unix.SizeofRtAttr <= len(m); {
		l := int(nl.NativeEndian().Uint16(m[off:]))
		if l < unix.SizeofRtAttr || off+l > len(m) {
			return
		}
		f(nl.NativeEndian().Uint16(m[off+2:]), off, l)
		off += nlaAlign(l)
	}
}

// nexthopOffsets returns the offsets of the struct rtnexthop of each
// nexthop in the RTA_MULTIPATH of the route payload m.
func nexthopOffsets(m []byte) []int {
	var out []int
	routeAttrs(m, func(typ uint16, off, l int) {
		if typ != unix.RTA_MULTIPATH {
			return
		}
		for h := off + unix.SizeofRtAttr; h+unix.SizeofRtNexthop <= off+l; {
			hl := int(nl.NativeEndian().Uint16(m[h:]))
			if hl < unix.SizeofRtNexthop {
				return
			}
			out = append(out, h)
			h += nlaAlign(hl)
		}
	})
	return out
}

func nlaAlign(n int) int { return (n + unix.NLA_ALIGNTO - 1) &^ (unix.NLA_ALIGNTO - 1) }

func indexAt(m []byte, off int) int { return int(int32(nl.NativeEndian().Uint32(m[off:]))) }

// RestoreForeign adds back the objects of objs that the kernel does not
// hold (an add that finds one of the same identity leaves it), each on
// the interface its names have now, routes after neighbours; an object
// that fails is tried again after the others (a route whose gateway
// another of them puts on-link), until a round adds nothing. It returns
// how many it added, and an error naming each object it could not add.
func RestoreForeign(t *netnsx.Target, objs []ForeignObject) (int, error) {
	if len(objs) == 0 {
		return 0, nil
	}
	c, err := openConn(t)
	if err != nil {
		return 0, fmt.Errorf("restoring foreign objects: %w", err)
	}
	defer c.close()
	pending := slices.Clone(objs)
	neighFirst := func(o ForeignObject) int {
		if o.Kind == items.TypeNeighbor {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(pending, func(a, b ForeignObject) int { return neighFirst(a) - neighFirst(b) })
	added := 0
	for {
		var failed []ForeignObject
		var errs []error
		for _, o := range pending {
			err := restoreOne(c, o)
			switch {
			case err == nil:
				added++
			case errors.Is(err, syscall.EEXIST):
			default:
				failed = append(failed, o)
				errs = append(errs, fmt.Errorf("restoring someone else's %s: %w", describeForeign(o), err))
			}
		}
		if len(failed) == 0 {
			return added, nil
		}
		if len(failed) == len(pending) {
			return added, errors.Join(errs...)
		}
		pending = failed
	}
}

// restoreOne adds o with its interfaces' indexes of now.
func restoreOne(c *conn, o ForeignObject) error {
	m := slices.Clone(o.Msg)
	offs := foreignIndexes(o.Kind, m)
	if len(offs) != len(o.Devs) {
		return fmt.Errorf("malformed record: %d interfaces for %d indexes", len(o.Devs), len(offs))
	}
	for i, off := range offs {
		idx, err := c.ifIndex(o.Devs[i])
		if err != nil {
			return err
		}
		nl.NativeEndian().PutUint32(m[off:], uint32(idx))
	}
	var req *nl.NetlinkRequest
	if o.Kind == items.TypeRoute {
		for _, h := range nexthopOffsets(m) {
			m[h+2] &= unix.RTNH_F_ONLINK // the kernel refuses dead or linkdown, as in rtm_flags
		}
		req = restoreRequest(m)
	} else {
		req = newRequest(unix.RTM_NEWNEIGH, unix.NLM_F_CREATE|unix.NLM_F_EXCL)
		req.AddRawData(m)
	}
	return c.exchange([]*nl.NetlinkRequest{req})[0].err
}

// describeForeign names o for an error: a route's identity, a
// neighbour's address, and the interfaces.
func describeForeign(o ForeignObject) string {
	if o.Kind == items.TypeRoute {
		if r, err := parseRouteMsg(o.Msg); err == nil {
			return fmt.Sprintf("route %s proto %d on %v", r.identity(), r.Protocol, o.Devs)
		}
	} else if k, ok := parseNeigh(o.Msg); ok {
		return fmt.Sprintf("neighbour %s on %v", k.ip, o.Devs)
	}
	return fmt.Sprintf("%s on %v", o.Kind, o.Devs)
}
