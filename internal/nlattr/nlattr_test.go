package nlattr

import (
	"bytes"
	"errors"
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// attrs serializes attributes as the kernel sends them.
func attrs(as ...*nl.RtAttr) []byte {
	var b []byte
	for _, a := range as {
		b = append(b, a.Serialize()...)
	}
	return b
}

func TestIter(t *testing.T) {
	nested := nl.NewRtAttr(unix.IFLA_LINKINFO|unix.NLA_F_NESTED, nil)
	nested.AddRtAttr(nl.IFLA_INFO_KIND, nl.ZeroTerminated("bridge"))
	b := attrs(
		nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated("br0")),
		nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(1450)),
		nested,
		nl.NewRtAttr(unix.IFLA_IFALIAS, []byte("odd")), // 3 bytes: padded
	)
	type got struct {
		raw, typ uint16
		val      string
	}
	var all []got
	it := Iter{B: b}
	for it.Next() {
		all = append(all, got{it.RawType, it.Type(), string(it.Val)})
	}
	if it.Err != nil {
		t.Fatal(it.Err)
	}
	if len(all) != 4 || String([]byte(all[0].val)) != "br0" || all[1].val != string(nl.Uint32Attr(1450)) || all[3].val != "odd" {
		t.Fatalf("walked %v", all)
	}
	if all[2].raw != unix.IFLA_LINKINFO|unix.NLA_F_NESTED || all[2].typ != unix.IFLA_LINKINFO {
		t.Errorf("nested attribute: raw type %#x, type %d", all[2].raw, all[2].typ)
	}
	kind, ok := Find([]byte(all[2].val), nl.IFLA_INFO_KIND)
	if !ok || String(kind) != "bridge" {
		t.Errorf("Find in the nested attribute: %q, %v", kind, ok)
	}
	if _, ok := Find(b, unix.IFLA_MASTER); ok {
		t.Error("Find found an attribute that is not there")
	}
}

// A length shorter than the header, or longer than what is left, ends the
// walk with EINVAL after the attributes before it; a tail shorter than a
// header ends it without error.
func TestIterMalformed(t *testing.T) {
	good := attrs(nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(1500)))
	for name, tail := range map[string][]byte{
		"length below the header": {2, 0, 1, 0},
		"length past the end":     {64, 0, 1, 0, 0, 0},
	} {
		it := Iter{B: append(bytes.Clone(good), tail...)}
		n := 0
		for it.Next() {
			n++
		}
		if n != 1 || !errors.Is(it.Err, unix.EINVAL) {
			t.Errorf("%s: %d attributes, error %v", name, n, it.Err)
		}
	}
	it := Iter{B: append(bytes.Clone(good), 1, 2)}
	n := 0
	for it.Next() {
		n++
	}
	if n != 1 || it.Err != nil {
		t.Errorf("short tail: %d attributes, error %v", n, it.Err)
	}
}

// The walk yields what nl.ParseRouteAttr lists, and fails where it fails.
func FuzzIterAsParseRouteAttr(f *testing.F) {
	f.Add(attrs(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated("eth0")), nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(9000))))
	f.Add([]byte{4, 0, 1, 0, 9, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var (
			want     []byte
			werr     error
			panicked bool
		)
		func() {
			defer func() { panicked = recover() != nil }() // the library slices past an unpadded last attribute
			as, err := nl.ParseRouteAttr(b)
			werr = err
			for _, a := range as {
				want = append(want, byte(a.Attr.Type), byte(a.Attr.Type>>8))
				want = append(want, a.Value...)
			}
		}()
		if panicked {
			return
		}
		var got []byte
		it := Iter{B: b}
		for it.Next() {
			got = append(got, byte(it.RawType), byte(it.RawType>>8))
			got = append(got, it.Val...)
		}
		if (it.Err != nil) != (werr != nil) || werr == nil && !bytes.Equal(got, want) {
			t.Errorf("Iter: %x, %v; ParseRouteAttr: %x, %v", got, it.Err, want, werr)
		}
	})
}
