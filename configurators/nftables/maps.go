package nftables

import (
	"encoding/binary"
	"fmt"
	"slices"

	gnft "github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// Verdict maps. google/nftables v0.3.0 marshals a verdict map's elements
// in a form the kernel refuses (NFTA_DATA_VALUE for the verdict) and
// cannot read maps back (reading one, the verdict data type overwrites
// the key type; each element's verdict is never decoded:
// google/nftables#319 fixed the first after v0.3.0, and the module proxy
// serves no later version). So the library creates and deletes the map
// itself (NEWSET with NFT_DATA_VERDICT, which it gets right), and
// netagent writes the elements' messages (NEWSETELEM, DELSETELEM) and
// dumps maps and their elements (GETSET, GETSETELEM) itself.

// setKeyMagic are the kernel's numbers of the key types (nft's datatype
// ids).
var setKeyMagic = map[uint32]string{7: "ipv4_addr", 8: "ipv6_addr", 13: "inet_service"}

// nftDataVerdict is NFT_DATA_VERDICT, a verdict map's data type.
const nftDataVerdict = 0xffffff00

// encodeVmap returns the expressions of a rule's vmap: the field's load
// and a lookup whose data is the verdict register (nft's `tcp dport vmap
// @svc`).
func encodeVmap(family string, v *items.NftVmap, types setTypes) []expr.Any {
	lookup := &expr.Lookup{SourceRegister: reg, DestRegister: 0, IsDestRegSet: true, SetName: v.Map}
	switch v.On {
	case "saddr", "daddr":
		v6 := types[v.Map] == "ipv6_addr"
		off, n := addrOffset(v6, v.On == "daddr")
		return append(nfproto(family, v6), &expr.Payload{DestRegister: reg, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: n}, lookup)
	}
	off := uint32(0)
	if v.On == "dport" {
		off = 2
	}
	return []expr.Any{&expr.Payload{DestRegister: reg, Base: expr.PayloadBaseTransportHeader, Offset: off, Len: 2}, lookup}
}

// decodeVmap reads a lookup into the verdict register back.
func (d *decoder) vmap(e *expr.Lookup) error {
	if e.DestRegister != 0 || e.Invert {
		return fmt.Errorf("a map lookup into register %d", e.DestRegister)
	}
	if _, ok := items.NftVmapKeys[d.loaded]; !ok {
		return fmt.Errorf("a vmap of %q", d.loaded)
	}
	d.r.Vmap = &items.NftVmap{On: d.loaded, Map: e.SetName}
	return nil
}

// encodeMapSet returns the library's set of a verdict map, without its
// elements.
func encodeMapSet(t *gnft.Table, m items.NftMap) *gnft.Set {
	return &gnft.Set{Table: t, Name: m.Name, KeyType: setDatatypes[m.Type], Interval: m.Interval,
		IsMap: true, DataType: gnft.TypeVerdict}
}

// mapElementMessages returns the NEWSETELEM (add) or DELSETELEM messages
// of els of map m in table t (id: the map's id when the batch creates it).
func mapElementMessages(t *gnft.Table, m items.NftMap, id uint32, els []items.NftMapElement, add bool) ([]netlink.Message, error) {
	typ, flags := unix.NFT_MSG_DELSETELEM, netlink.Request
	if add {
		typ, flags = unix.NFT_MSG_NEWSETELEM, netlink.Request|netlink.Create
	}
	var out []netlink.Message
	for chunk := range slices.Chunk(els, elemsPerMessage) {
		ae := netlink.NewAttributeEncoder()
		ae.ByteOrder = binary.BigEndian
		ae.String(unix.NFTA_SET_ELEM_LIST_TABLE, t.Name)
		ae.String(unix.NFTA_SET_ELEM_LIST_SET, m.Name)
		if id != 0 {
			ae.Uint32(unix.NFTA_SET_ELEM_LIST_SET_ID, id)
		}
		var err error
		ae.Nested(unix.NFTA_SET_ELEM_LIST_ELEMENTS, func(le *netlink.AttributeEncoder) error {
			n := uint16(0)
			for _, e := range chunk {
				if err = mapElementAttrs(le, &n, m, e, add); err != nil {
					return err
				}
			}
			return nil
		})
		b, aerr := ae.Encode()
		if err == nil {
			err = aerr
		}
		if err != nil {
			return nil, fmt.Errorf("map %s: %w", m.Name, err)
		}
		out = append(out, netlink.Message{
			Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | typ), Flags: flags},
			Data:   append(nfgen(uint8(t.Family), 0), b...),
		})
	}
	return out, nil
}

// mapElementAttrs encodes one element (and, in an interval map, the end
// of its range) as list items, numbered from *n.
func mapElementAttrs(le *netlink.AttributeEncoder, n *uint16, m items.NftMap, e items.NftMapElement, add bool) error {
	r, err := items.ParseNftElement(m.Type, m.Interval, e.Key)
	if err != nil {
		return err
	}
	kind, ok := verdictKinds[e.Verdict]
	if !ok && add {
		return fmt.Errorf("element %s: verdict %q", e.Key, e.Verdict)
	}
	*n++
	le.Nested(*n, func(ee *netlink.AttributeEncoder) error {
		ee.ByteOrder = binary.BigEndian
		ee.Nested(unix.NFTA_SET_ELEM_KEY, func(k *netlink.AttributeEncoder) error {
			k.Bytes(unix.NFTA_DATA_VALUE, r.Lo)
			return nil
		})
		if add {
			ee.Nested(unix.NFTA_SET_ELEM_DATA, func(d *netlink.AttributeEncoder) error {
				d.Nested(unix.NFTA_DATA_VERDICT, func(v *netlink.AttributeEncoder) error {
					v.ByteOrder = binary.BigEndian
					v.Uint32(unix.NFTA_VERDICT_CODE, uint32(int32(kind)))
					if e.Target != "" {
						v.String(unix.NFTA_VERDICT_CHAIN, e.Target)
					}
					return nil
				})
				return nil
			})
		}
		return nil
	})
	if !m.Interval {
		return nil
	}
	end, ok := next(r.Hi)
	if !ok {
		return nil
	}
	*n++
	le.Nested(*n, func(ee *netlink.AttributeEncoder) error {
		ee.ByteOrder = binary.BigEndian
		ee.Nested(unix.NFTA_SET_ELEM_KEY, func(k *netlink.AttributeEncoder) error {
			k.Bytes(unix.NFTA_DATA_VALUE, end)
			return nil
		})
		ee.Uint32(unix.NFTA_SET_ELEM_FLAGS, unix.NFT_SET_ELEM_INTERVAL_END)
		return nil
	})
	return nil
}

// tableTypes are the key types of a table's sets and maps, by name.
func tableTypes(t *items.NftTable) setTypes {
	types := setTypes{}
	for _, s := range t.Sets {
		types[s.Name] = s.Type
	}
	for _, m := range t.Maps {
		types[m.Name] = m.Type
	}
	return types
}

// dumpMaps reads a table's verdict maps on a socket of its own.
func (k netlinkKernel) dumpMaps(family, name string) ([]items.NftMap, error) {
	conn, err := k.dial()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return dumpMaps(conn, family, name)
}

// addMap puts the creation of map m and its elements into the batch.
func (b *builder) addMap(t *gnft.Table, table string, m items.NftMap) error {
	set := encodeMapSet(t, m)
	if err := b.c.AddSet(set, nil); err != nil {
		return fmt.Errorf("map %s: %w", m.Name, err)
	}
	b.sets[table+" "+m.Name] = set
	msgs, err := mapElementMessages(t, m, set.ID, m.Elements, true)
	b.raw = append(b.raw, msgs...)
	return err
}

// mapOp puts a map's op into the batch.
func (b *builder) mapOp(t *gnft.Table, op Op) error {
	switch op.Kind {
	case OpAddMap:
		return b.addMap(t, op.Table.Name(), op.Map)
	case OpDeleteMap:
		b.c.DelSet(&gnft.Set{Table: t, Name: op.Map.Name})
		return nil
	}
	id := uint32(0)
	if made, ok := b.sets[op.Table.Name()+" "+op.Map.Name]; ok {
		id = made.ID
	}
	msgs, err := mapElementMessages(t, op.Map, id, op.Map.Elements, op.Kind == OpAddMapElements)
	b.raw = append(b.raw, msgs...)
	return err
}
