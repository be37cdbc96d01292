package nftables

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"time"

	gnft "github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// dumpBuffer is the receive buffer of netagent's own dumps. The kernel
// fills each datagram of a dump up to the largest buffer recvmsg was
// given on the socket (at most 32 KiB); the library's receive starts at a
// page, so that a set of 100k intervals takes thousands of datagrams, and
// the kernel walks an interval set's tree from its first element for
// each one.
const dumpBuffer = 1 << 17

// maxDumpElements bounds a set's dump: another writer's elements are not
// trusted to be few.
const maxDumpElements = 4 << 20

// dumpElements reads the elements of set s of t (NFT_MSG_GETSETELEM) on
// conn with a large receive buffer, decoding each datagram in place: the
// keys share one copy of the datagram, no allocation per element.
func dumpElements(conn *netlink.Conn, t *gnft.Table, s *gnft.Set) ([]gnft.SetElement, error) {
	data, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: unix.NFTA_SET_TABLE, Data: []byte(t.Name + "\x00")},
		{Type: unix.NFTA_SET_NAME, Data: []byte(s.Name + "\x00")},
	})
	if err != nil {
		return nil, err
	}
	var out []gnft.SetElement
	err = dump(conn, netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_GETSETELEM), Flags: netlink.Request | netlink.Dump},
		Data:   append(nfgen(uint8(t.Family), 0), data...),
	}, func(b []byte) error {
		if out, err = appendElements(out, b); err != nil {
			return err
		}
		if len(out) > maxDumpElements {
			return fmt.Errorf("more than %d elements", maxDumpElements)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the elements: %w", err)
	}
	return out, nil
}

// dump sends the dump request req on conn and calls each with the
// attributes of every message of the reply (after its nfgenmsg), with a
// receive buffer of dumpBuffer; the attributes stay valid after each
// returns.
func dump(conn *netlink.Conn, req netlink.Message, each func(b []byte) error) error {
	sent, err := conn.Send(req)
	if err != nil {
		return kernelErr(err)
	}
	rc, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	if err := conn.SetReadDeadline(time.Now().Add(replyTimeout)); err != nil {
		return err
	}
	buf := make([]byte, dumpBuffer)
	for {
		n, err := recvReplies(rc, buf)
		if err != nil {
			return kernelErr(err)
		}
		msgs, err := syscall.ParseNetlinkMessage(append([]byte(nil), buf[:n]...))
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Header.Seq != sent.Header.Sequence {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return nil
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return errors.New("a short error")
				}
				if errno := syscall.Errno(-int32(binary.NativeEndian.Uint32(m.Data))); errno != 0 {
					return kernelErr(errno)
				}
				return nil
			}
			if len(m.Data) >= 4 {
				if err := each(m.Data[4:]); err != nil {
					return err
				}
			}
		}
	}
}

// attrs calls f with the type and payload of each netlink attribute of b.
func attrs(b []byte, f func(typ uint16, v []byte) error) error {
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b))
		if l < 4 || l > len(b) {
			return fmt.Errorf("an attribute of %d bytes in %d", l, len(b))
		}
		if err := f(binary.NativeEndian.Uint16(b[2:])&^(unix.NLA_F_NESTED|unix.NLA_F_NET_BYTEORDER), b[4:l]); err != nil {
			return err
		}
		b = b[min(nlmsgAlign(l), len(b)):]
	}
	return nil
}

// appendElements appends the elements of one NEWSETELEM message's
// attributes (NFTA_SET_ELEM_LIST_ELEMENTS) to out.
func appendElements(out []gnft.SetElement, b []byte) ([]gnft.SetElement, error) {
	err := attrs(b, func(typ uint16, v []byte) error {
		if typ != unix.NFTA_SET_ELEM_LIST_ELEMENTS {
			return nil
		}
		return attrs(v, func(typ uint16, v []byte) error {
			if typ != unix.NFTA_LIST_ELEM {
				return nil
			}
			var e gnft.SetElement
			if err := decodeElement(&e, v); err != nil {
				return err
			}
			out = append(out, e)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading the elements: %w", err)
	}
	return out, nil
}

// decodeElement decodes one NFTA_LIST_ELEM as the library does: key, end
// key, data (a value or a verdict), flags, timeout and expiration.
func decodeElement(e *gnft.SetElement, b []byte) error {
	return attrs(b, func(typ uint16, v []byte) error {
		switch typ {
		case unix.NFTA_SET_ELEM_KEY:
			e.Key = dataValue(v)
		case gnft.NFTA_SET_ELEM_KEY_END:
			e.KeyEnd = dataValue(v)
		case unix.NFTA_SET_ELEM_DATA:
			e.Val = dataValue(v)
			e.VerdictData = dataVerdict(v)
		case unix.NFTA_SET_ELEM_FLAGS:
			if len(v) >= 4 {
				e.IntervalEnd = binary.BigEndian.Uint32(v)&unix.NFT_SET_ELEM_INTERVAL_END != 0
			}
		case unix.NFTA_SET_ELEM_TIMEOUT:
			if len(v) >= 8 {
				e.Timeout = time.Millisecond * time.Duration(binary.BigEndian.Uint64(v))
			}
		case unix.NFTA_SET_ELEM_EXPIRATION:
			if len(v) >= 8 {
				e.Expires = time.Millisecond * time.Duration(binary.BigEndian.Uint64(v))
			}
		}
		return nil
	})
}

// dataValue is the NFTA_DATA_VALUE of a nested struct nft_data.
func dataValue(b []byte) []byte {
	var out []byte
	attrs(b, func(typ uint16, v []byte) error {
		if typ == unix.NFTA_DATA_VALUE {
			out = v
		}
		return nil
	})
	return out
}

// dataVerdict is the NFTA_DATA_VERDICT of a nested struct nft_data, or
// nil.
func dataVerdict(b []byte) *expr.Verdict {
	var out *expr.Verdict
	attrs(b, func(typ uint16, v []byte) error {
		if typ != unix.NFTA_DATA_VERDICT {
			return nil
		}
		out = &expr.Verdict{}
		return attrs(v, func(typ uint16, v []byte) error {
			switch {
			case typ == unix.NFTA_VERDICT_CODE && len(v) >= 4:
				out.Kind = expr.VerdictKind(int32(binary.BigEndian.Uint32(v)))
			case typ == unix.NFTA_VERDICT_CHAIN && len(v) > 0:
				out.Chain = string(v[:len(v)-1])
			}
			return nil
		})
	})
	return out
}

// maxDumpRules bounds a table's rules in a dump of their handles.
const maxDumpRules = 4 << 20

// dumpRuleHandles reads the handles of the rules of table family/name, by
// chain in the chain's order (NFT_MSG_GETRULE of the table), decoding
// nothing else.
func dumpRuleHandles(conn *netlink.Conn, family, name string) (map[string][]uint64, error) {
	data, err := netlink.MarshalAttributes([]netlink.Attribute{{Type: unix.NFTA_RULE_TABLE, Data: []byte(name + "\x00")}})
	if err != nil {
		return nil, err
	}
	out := map[string][]uint64{}
	n := 0
	err = dump(conn, netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_GETRULE), Flags: netlink.Request | netlink.Dump},
		Data:   append(nfgen(uint8(families[family]), 0), data...),
	}, func(b []byte) error {
		r, ok := parseRuleEcho(b) // a dumped rule has the echo's attributes
		if !ok {
			return errors.New("a rule without its chain or handle")
		}
		if n++; n > maxDumpRules {
			return fmt.Errorf("more than %d rules", maxDumpRules)
		}
		out[r.chain] = append(out[r.chain], r.handle)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rule handles of %s/%s: %w", family, name, err)
	}
	return out, nil
}
