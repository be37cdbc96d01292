// Package nlattr reads netlink attributes in place, without the
// allocations of nl.ParseRouteAttr (a slice of attributes per call): for
// the messages netagent reads by the thousand, the routes of a dump and
// the links of a read-back.
//
//	it := nlattr.Iter{B: m[unix.SizeofIfInfomsg:]}
//	for it.Next() {
//		switch it.Type() {
//		case unix.IFLA_IFNAME:
//			name = nlattr.String(it.Val)
//		}
//	}
//	if it.Err != nil { ... }
package nlattr

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// Iter walks netlink attributes (struct rtattr or nlattr: a length and a
// type of two bytes each, then the value, each attribute aligned to four
// bytes), the value of each a slice of B.
type Iter struct {
	// B is what is left to walk.
	B []byte
	// RawType is the current attribute's type as sent, flags included;
	// Val its value.
	RawType uint16
	Val     []byte
	// Err is set when the walk ended at a malformed attribute.
	Err error
}

// typeMask strips NLA_F_NESTED and NLA_F_NET_BYTEORDER from a type.
const typeMask = 0x3fff

// Next moves to the next attribute: false at the end, or at a malformed
// one (Err set).
func (a *Iter) Next() bool {
	if len(a.B) < unix.SizeofRtAttr {
		return false
	}
	ne := binary.NativeEndian
	n := int(ne.Uint16(a.B[0:2]))
	if n < unix.SizeofRtAttr || n > len(a.B) {
		a.Err = unix.EINVAL
		return false
	}
	a.RawType, a.Val = ne.Uint16(a.B[2:4]), a.B[unix.SizeofRtAttr:n]
	a.B = a.B[min((n+unix.RTA_ALIGNTO-1)&^(unix.RTA_ALIGNTO-1), len(a.B)):]
	return true
}

// Type is the current attribute's type without the NLA_F_NESTED and
// NLA_F_NET_BYTEORDER flags.
func (a *Iter) Type() uint16 { return a.RawType & typeMask }

// Find returns the value of the first attribute of type typ (flags
// stripped) in b; ok false when there is none or b is malformed before
// it.
func Find(b []byte, typ uint16) (val []byte, ok bool) {
	it := Iter{B: b}
	for it.Next() {
		if it.Type() == typ {
			return it.Val, true
		}
	}
	return nil, false
}

// String is a string attribute's value without its NUL terminator.
func String(v []byte) string {
	if i := bytes.IndexByte(v, 0); i >= 0 {
		v = v[:i]
	}
	return string(v)
}
