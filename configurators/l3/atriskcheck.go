package l3

import (
	"fmt"
	"strings"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// foreignMsgMax bounds a saved object's payload: the kernel's route and
// neighbour messages are a few hundred bytes (a route of many nexthops a
// few KiB); an attribute's length is 16 bits.
const foreignMsgMax = 64 << 10

// CheckForeign reports what makes o something ForeignAtRisk never saves
// (nil: nothing), so that a damaged or planted record never reaches the
// kernel at RestoreForeign: a kind other than a route (sent as
// RTM_NEWROUTE) or a neighbour (RTM_NEWNEIGH); a payload too short for its
// header (rtmsg, ndmsg), of another family than IPv4 or IPv6, longer than
// foreignMsgMax, or whose attributes (and a route's nexthops) do not tile
// it exactly, each length within what holds it; an object that is not
// someone else's route (cached, netagent's, or the kernel's own) or
// permanent neighbour; interface names that are no interface names or do
// not match the indexes the payload holds.
func CheckForeign(o ForeignObject) error {
	m := o.Msg
	var hdr int
	switch o.Kind {
	case items.TypeRoute:
		hdr = unix.SizeofRtMsg
	case items.TypeNeighbor:
		hdr = sizeofNdmsg
	default:
		return fmt.Errorf("saved object of kind %q: netagent saves only routes and neighbours", o.Kind)
	}
	switch {
	case len(m) < hdr:
		return fmt.Errorf("saved %s of %d bytes: shorter than its %d-byte header", o.Kind, len(m), hdr)
	case len(m) > foreignMsgMax:
		return fmt.Errorf("saved %s of %d bytes: more than %d", o.Kind, len(m), foreignMsgMax)
	case m[0] != unix.AF_INET && m[0] != unix.AF_INET6:
		return fmt.Errorf("saved %s of family %d: not IPv4 or IPv6", o.Kind, m[0])
	}
	if err := tiled(m, hdr, len(m)); err != nil {
		return fmt.Errorf("saved %s: attributes: %w", o.Kind, err)
	}
	if o.Kind == items.TypeRoute {
		var bad error
		routeAttrs(m, func(typ uint16, off, l int) {
			if typ == unix.RTA_MULTIPATH && bad == nil {
				bad = nexthopsTiled(m, off+unix.SizeofRtAttr, off+l)
			}
		})
		if bad != nil {
			return fmt.Errorf("saved route: multipath: %w", bad)
		}
	}
	if !foreignLosable(o.Kind, m) {
		return fmt.Errorf("saved %s: not someone else's route or permanent neighbour, which netagent never saves", o.Kind)
	}
	if idx := foreignIndexes(o.Kind, m); len(idx) != len(o.Devs) {
		return fmt.Errorf("saved %s: %d interface names for %d interface indexes", o.Kind, len(o.Devs), len(idx))
	}
	for _, d := range o.Devs {
		if d != "" && (len(d) > unix.IFNAMSIZ-1 || d == "." || d == ".." || strings.ContainsAny(d, "/: \t\n\r\v\f\x00")) {
			return fmt.Errorf("saved %s: %q is no interface name", o.Kind, d)
		}
	}
	return nil
}

// tiled checks that the attributes of m[from:to] follow one another
// exactly, each of a length within what is left (the last one's
// alignment padding aside).
func tiled(m []byte, from, to int) error {
	for off := from; off < to; {
		if off+unix.SizeofRtAttr > to {
			return fmt.Errorf("%d bytes left at %d, less than an attribute header", to-off, off)
		}
		l := int(nl.NativeEndian().Uint16(m[off:]))
		if l < unix.SizeofRtAttr || off+l > to {
			return fmt.Errorf("attribute at %d of length %d, with %d bytes left", off, l, to-off)
		}
		off += min(nlaAlign(l), to-off)
	}
	return nil
}

// nexthopsTiled checks that the struct rtnexthop of m[from:to] (an
// RTA_MULTIPATH's value) follow one another exactly, each with its
// attributes tiled.
func nexthopsTiled(m []byte, from, to int) error {
	for h := from; h < to; {
		if h+unix.SizeofRtNexthop > to {
			return fmt.Errorf("%d bytes left at %d, less than a nexthop", to-h, h)
		}
		l := int(nl.NativeEndian().Uint16(m[h:]))
		if l < unix.SizeofRtNexthop || h+l > to {
			return fmt.Errorf("nexthop at %d of length %d, with %d bytes left", h, l, to-h)
		}
		if err := tiled(m, h+unix.SizeofRtNexthop, h+l); err != nil {
			return fmt.Errorf("nexthop at %d: %w", h, err)
		}
		h += min(nlaAlign(l), to-h)
	}
	return nil
}
