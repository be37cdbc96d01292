package l3

import (
	"net/netip"
	"time"

	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// kernelAddr is one address as the kernel reports it (RTM_NEWADDR).
type kernelAddr struct {
	index  int
	prefix netip.Prefix // address and prefix length, not masked
	label  string       // IPv4 only
	// peer is the far end of a point-to-point address (IFA_ADDRESS
	// other than IFA_LOCAL: `ip addr add A peer P`); invalid for others.
	peer  netip.Addr
	scope uint8
	flags uint32 // IFA_FLAGS (IFA_F_SECONDARY, ...)
	proto uint8  // IFA_PROTO, 0 when absent
	// valid is the valid lifetime left, in seconds (IFA_CACHEINFO);
	// foreverLft when permanent or not reported.
	valid uint32
	// preferred is the preferred lifetime left, the same way.
	preferred uint32
	// metric is the metric of the address's prefix route
	// (IFA_RT_PRIORITY), 0 when absent.
	metric uint32
	// recorded: the state directory records the address as adopted by
	// netagent where the kernel kept its protocol (see addrrecord.go).
	recorded bool
}

// foreverLft is the kernel's infinite address lifetime.
const foreverLft = 0xffffffff

// secondary reports whether the kernel holds k as a secondary address of
// its subnet (IPv4).
func (k *kernelAddr) secondary() bool { return k.flags&unix.IFA_F_SECONDARY != 0 }

// owned reports whether the address is netagent's: it carries netagent's
// mark, or the state directory records it as adopted (recorded).
func (k *kernelAddr) owned() bool { return k.proto == items.RouteProtocol || k.recorded }

// addrRequest builds an RTM_NEWADDR or RTM_DELADDR message for a on the
// interface index. A new address carries IFA_PROTO = items.RouteProtocol
// (the ownership mark), is permanent (no IFA_CACHEINFO) unless the item
// has a ValidUntil (both lifetimes then count down to it: lifetimeLeft), and an IPv6 one
// has IFA_F_NODAD: it is usable at once instead of staying tentative for
// the duplicate address detection (about a second, and forever on a link
// without carrier). An IPv4 address gets the subnet's broadcast address,
// as netlink.AddrAdd and `ip addr add ... brd +` give it, but for a
// point-to-point one (Peer, sent as IFA_ADDRESS), which `ip` gives none.
func addrRequest(msgType uint16, flags int, a *items.Address, index int) *nl.NetlinkRequest {
	req := newRequest(msgType, flags)
	v4 := a.Prefix.Addr().Is4()
	family := unix.AF_INET6
	if v4 {
		family = unix.AF_INET
	}
	msg := nl.NewIfAddrmsg(family)
	msg.Prefixlen = uint8(a.Prefix.Bits())
	msg.Index = uint32(index)
	local, address := a.Prefix.Addr().AsSlice(), a.Prefix.Addr().AsSlice()
	if a.Peer.IsValid() {
		address = a.Peer.AsSlice() // the kernel matches a delete by it too
	}
	if msgType == unix.RTM_DELADDR {
		req.AddData(msg)
		req.AddData(nl.NewRtAttr(unix.IFA_LOCAL, local))
		req.AddData(nl.NewRtAttr(unix.IFA_ADDRESS, address))
		return req
	}
	var ifaFlags uint32
	if !v4 {
		ifaFlags = unix.IFA_F_NODAD
	}
	msg.Flags = uint8(ifaFlags)
	msg.Scope = uint8(a.Scope)
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.IFA_LOCAL, local))
	req.AddData(nl.NewRtAttr(unix.IFA_ADDRESS, address))
	req.AddData(nl.NewRtAttr(unix.IFA_FLAGS, nl.Uint32Attr(ifaFlags)))
	if v4 && a.Prefix.Bits() < 31 && !a.Peer.IsValid() {
		req.AddData(nl.NewRtAttr(unix.IFA_BROADCAST, broadcastOf(a.Prefix).AsSlice()))
	}
	if v4 && a.Label != "" {
		req.AddData(nl.NewRtAttr(unix.IFA_LABEL, nl.ZeroTerminated(a.Label)))
	}
	req.AddData(nl.NewRtAttr(ifaProto, nl.Uint8Attr(items.RouteProtocol)))
	if a.RouteMetric != 0 { // absent: 0, also on a replace (inet_rtm_newaddr)
		req.AddData(nl.NewRtAttr(unix.IFA_RT_PRIORITY, nl.Uint32Attr(a.RouteMetric)))
	}
	if !a.ValidUntil.IsZero() {
		now := time.Now()
		left := lifetimeLeft(a.ValidUntil, now)
		ci := nl.IfaCacheInfo{IfaCacheinfo: unix.IfaCacheinfo{Prefered: preferredLeft(a, left, now), Valid: left}}
		req.AddData(nl.NewRtAttr(unix.IFA_CACHEINFO, ci.Serialize()))
	}
	return req
}

// lifetimeLeft returns the seconds from now until until, rounded up, at
// least 1 (the caller refuses an address whose time is up:
// errLifetimeOver).
func lifetimeLeft(until, now time.Time) uint32 {
	d := until.Sub(now)
	secs := (d + time.Second - 1) / time.Second
	return uint32(min(max(secs, 1), foreverLft-1))
}

// preferredLeft returns the preferred lifetime of a in seconds from now:
// the valid one's (validLeft) unless a has a PreferredUntil, never more
// than validLeft, 0 (deprecated) once it has passed.
func preferredLeft(a *items.Address, validLeft uint32, now time.Time) uint32 {
	if a.PreferredUntil.IsZero() {
		return validLeft
	}
	if !now.Before(a.PreferredUntil) {
		return 0
	}
	return min(lifetimeLeft(a.PreferredUntil, now), validLeft)
}

// preferredUntil is when the kernel deprecates k, read at now; zero when
// never.
func (k *kernelAddr) preferredUntil(now time.Time) time.Time {
	if k.preferred == foreverLft {
		return time.Time{}
	}
	return now.Add(time.Duration(k.preferred) * time.Second).Truncate(time.Second)
}

// validUntil is when the kernel drops k, read at now; zero when never.
func (k *kernelAddr) validUntil(now time.Time) time.Time {
	if k.valid == foreverLft {
		return time.Time{}
	}
	return now.Add(time.Duration(k.valid) * time.Second).Truncate(time.Second)
}

// lifetimeSlack is how far the kernel's countdown (whole seconds) may
// stray from an item's ValidUntil and still be the same lifetime.
const lifetimeSlack = 3 * time.Second

// inPlaceAsWanted reports whether what a replace changes in place is as
// a wants it, read at now: the lifetimes and the prefix route's metric.
func inPlaceAsWanted(k *kernelAddr, a *items.Address, now time.Time) bool {
	return k.metric == a.RouteMetric && lifetimeAsWanted(k, a, now)
}

// lifetimeAsWanted reports whether k's lifetimes, read at now, are a's:
// the valid one, and the preferred one when a has its own (one that has
// passed is the kernel's 0).
func lifetimeAsWanted(k *kernelAddr, a *items.Address, now time.Time) bool {
	if !sameLifetime(k.validUntil(now), a.ValidUntil) {
		return false
	}
	if a.PreferredUntil.IsZero() || a.ValidUntil.IsZero() {
		return true
	}
	if !now.Before(a.PreferredUntil) {
		return k.preferred == 0
	}
	return sameLifetime(k.preferredUntil(now), a.PreferredUntil)
}

// sameLifetime reports whether a kernel countdown's end got is want's,
// within lifetimeSlack (zero: forever).
func sameLifetime(got, want time.Time) bool {
	if got.IsZero() || want.IsZero() {
		return got.IsZero() == want.IsZero()
	}
	d := got.Sub(want)
	return d > -lifetimeSlack && d < lifetimeSlack
}

// broadcastOf returns the last address of an IPv4 prefix.
func broadcastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	for i := 3; i >= 0; i-- {
		b[i] |= byte(host >> (8 * (3 - i)))
	}
	return netip.AddrFrom4(b)
}

// addrDumpRequest asks for every address of one family.
func addrDumpRequest(family int) *nl.NetlinkRequest {
	req := newDump(unix.RTM_GETADDR)
	req.AddData(nl.NewIfAddrmsg(family))
	return req
}

// parseAddr decodes one RTM_NEWADDR payload; ok is false for anything but
// an IPv4 or IPv6 address.
func parseAddr(m []byte) (kernelAddr, bool) {
	if len(m) < unix.SizeofIfAddrmsg {
		return kernelAddr{}, false
	}
	msg := nl.DeserializeIfAddrmsg(m)
	attrs, err := nl.ParseRouteAttr(m[msg.Len():])
	if err != nil || (msg.Family != unix.AF_INET && msg.Family != unix.AF_INET6) {
		return kernelAddr{}, false
	}
	k := kernelAddr{index: int(msg.Index), scope: msg.Scope, flags: uint32(msg.Flags), valid: foreverLft, preferred: foreverLft}
	var local, address netip.Addr
	for _, a := range attrs {
		switch a.Attr.Type {
		case unix.IFA_LOCAL:
			local, _ = netip.AddrFromSlice(a.Value)
		case unix.IFA_ADDRESS:
			address, _ = netip.AddrFromSlice(a.Value)
		case unix.IFA_FLAGS:
			if len(a.Value) >= 4 {
				k.flags = nl.NativeEndian().Uint32(a.Value)
			}
		case unix.IFA_LABEL:
			k.label = unix.ByteSliceToString(a.Value)
		case ifaProto:
			if len(a.Value) > 0 {
				k.proto = a.Value[0]
			}
		case unix.IFA_RT_PRIORITY:
			if len(a.Value) >= 4 {
				k.metric = nl.NativeEndian().Uint32(a.Value)
			}
		case unix.IFA_CACHEINFO:
			if len(a.Value) >= unix.SizeofIfaCacheinfo {
				ci := nl.DeserializeIfaCacheInfo(a.Value)
				k.valid, k.preferred = ci.Valid, ci.Prefered
			}
		}
	}
	if !local.IsValid() {
		local = address // IPv6 reports only IFA_ADDRESS
	}
	if !local.IsValid() {
		return kernelAddr{}, false
	}
	if address.IsValid() && address != local {
		k.peer = address
	}
	k.prefix = netip.PrefixFrom(local, int(msg.Prefixlen))
	return k, true
}
