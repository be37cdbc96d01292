package nftables

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// maxMapElements bounds the elements netagent reads of one map (the
// kernel's state of other writers is not trusted to be small).
const maxMapElements = 1 << 20

// dumpMaps reads the verdict maps of a table and their elements (GETSET
// and GETSETELEM dumps, decoded here: see maps.go).
func dumpMaps(conn *netlink.Conn, family, table string) ([]items.NftMap, error) {
	ae := netlink.NewAttributeEncoder()
	ae.String(unix.NFTA_SET_TABLE, table)
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	msgs, err := conn.Execute(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_GETSET), Flags: netlink.Request | netlink.Dump},
		Data:   append(nfgen(uint8(families[family]), 0), b...),
	})
	if err != nil {
		return nil, fmt.Errorf("maps: %w", err)
	}
	var out []items.NftMap
	for _, m := range msgs {
		mp, isMap, err := decodeMapHeader(m.Data)
		if err != nil {
			return nil, fmt.Errorf("maps: %w", err)
		}
		if !isMap {
			continue
		}
		if mp.Elements, err = dumpMapElements(conn, family, table, mp); err != nil {
			return nil, fmt.Errorf("map %s: %w", mp.Name, err)
		}
		out = append(out, mp)
	}
	return out, nil
}

// decodeMapHeader decodes a NEWSET message: a verdict map, or isMap false
// for a set.
func decodeMapHeader(data []byte) (m items.NftMap, isMap bool, err error) {
	if len(data) < 4 {
		return m, false, errors.New("a set message without its header")
	}
	ad, err := netlink.NewAttributeDecoder(data[4:])
	if err != nil {
		return m, false, err
	}
	ad.ByteOrder = binary.BigEndian
	var flags, key, dtype uint32
	for ad.Next() {
		switch ad.Type() {
		case unix.NFTA_SET_NAME:
			m.Name = ad.String()
		case unix.NFTA_SET_FLAGS:
			flags = ad.Uint32()
		case unix.NFTA_SET_KEY_TYPE:
			key = ad.Uint32()
		case unix.NFTA_SET_DATA_TYPE:
			dtype = ad.Uint32()
		}
	}
	if err := ad.Err(); err != nil {
		return m, false, err
	}
	if flags&unix.NFT_SET_MAP == 0 {
		return m, false, nil
	}
	if dtype != nftDataVerdict {
		return m, false, fmt.Errorf("map %s: data type %#x, not verdict", m.Name, dtype)
	}
	typ, ok := setKeyMagic[key]
	if !ok {
		return m, false, fmt.Errorf("map %s: key type %d", m.Name, key)
	}
	m.Type, m.Interval = typ, flags&unix.NFT_SET_INTERVAL != 0
	return m, true, nil
}

// mapElem is a dumped element: its key, interval end flag, verdict.
type mapElem struct {
	key     []byte
	end     bool
	verdict string
	target  string
}

func dumpMapElements(conn *netlink.Conn, family, table string, m items.NftMap) ([]items.NftMapElement, error) {
	ae := netlink.NewAttributeEncoder()
	ae.String(unix.NFTA_SET_ELEM_LIST_TABLE, table)
	ae.String(unix.NFTA_SET_ELEM_LIST_SET, m.Name)
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	msgs, err := conn.Execute(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_GETSETELEM), Flags: netlink.Request | netlink.Dump},
		Data:   append(nfgen(uint8(families[family]), 0), b...),
	})
	if err != nil {
		return nil, err
	}
	var elems []mapElem
	for _, msg := range msgs {
		if len(msg.Data) < 4 {
			continue
		}
		ad, err := netlink.NewAttributeDecoder(msg.Data[4:])
		if err != nil {
			return nil, err
		}
		for ad.Next() {
			if ad.Type() == unix.NFTA_SET_ELEM_LIST_ELEMENTS {
				ad.Nested(func(l *netlink.AttributeDecoder) error { return decodeMapElems(l, &elems) })
			}
		}
		if err := ad.Err(); err != nil {
			return nil, err
		}
		if len(elems) > maxMapElements {
			return nil, fmt.Errorf("more than %d elements", maxMapElements)
		}
	}
	return pairMapElems(m, elems), nil
}

func decodeMapElems(l *netlink.AttributeDecoder, out *[]mapElem) error {
	for l.Next() {
		var e mapElem
		l.Nested(func(ed *netlink.AttributeDecoder) error {
			ed.ByteOrder = binary.BigEndian
			for ed.Next() {
				switch ed.Type() {
				case unix.NFTA_SET_ELEM_KEY:
					ed.Nested(func(k *netlink.AttributeDecoder) error {
						for k.Next() {
							if k.Type() == unix.NFTA_DATA_VALUE {
								e.key = k.Bytes()
							}
						}
						return nil
					})
				case unix.NFTA_SET_ELEM_FLAGS:
					e.end = ed.Uint32()&unix.NFT_SET_ELEM_INTERVAL_END != 0
				case unix.NFTA_SET_ELEM_DATA:
					ed.Nested(func(d *netlink.AttributeDecoder) error { return decodeVerdictData(d, &e) })
				}
			}
			return nil
		})
		*out = append(*out, e)
	}
	return nil
}

func decodeVerdictData(d *netlink.AttributeDecoder, e *mapElem) error {
	for d.Next() {
		if d.Type() != unix.NFTA_DATA_VERDICT {
			continue
		}
		d.Nested(func(v *netlink.AttributeDecoder) error {
			v.ByteOrder = binary.BigEndian
			for v.Next() {
				switch v.Type() {
				case unix.NFTA_VERDICT_CODE:
					code := expr.VerdictKind(int32(v.Uint32()))
					for name, k := range verdictKinds {
						if k == code {
							e.verdict = name
						}
					}
				case unix.NFTA_VERDICT_CHAIN:
					e.target = v.String()
				}
			}
			return nil
		})
	}
	return nil
}

// pairMapElems pairs each start of an interval map's range with the end
// after it, as decodeElements does for sets, in key order.
func pairMapElems(m items.NftMap, elems []mapElem) []items.NftMapElement {
	slices.SortFunc(elems, func(a, b mapElem) int { return bytes.Compare(a.key, b.key) })
	var out []items.NftMapElement
	for i, e := range elems {
		if e.end {
			continue
		}
		hi := e.key
		if m.Interval {
			hi = bytes.Repeat([]byte{0xff}, len(e.key))
			if i+1 < len(elems) && elems[i+1].end {
				hi = prev(elems[i+1].key)
			}
		}
		out = append(out, items.NftMapElement{Key: items.NftElementString(m.Type, items.NftElementRange{Lo: e.key, Hi: hi}),
			Verdict: e.verdict, Target: e.target})
	}
	return out
}
