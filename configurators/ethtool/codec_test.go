package ethtool

import (
	"bytes"
	"errors"
	"maps"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// TestDecodeRecordedVethAnswers decodes the answers recorded from a veth
// on kernel 6.18 (TestLiveVethAnswers -record), each checked as
// checkVethAnswer says: FEATURES_GET as ethtool -k shows it, fixed
// features included; CHANNELS_GET, rx 1 and tx 1 of at most 2 each
// (ethtool -l), no other or combined; LINKMODES_GET, 10000 Mb/s full
// duplex, autoneg off, no link mode supported ("Not reported").
func TestDecodeRecordedVethAnswers(t *testing.T) {
	for name, check := range checkVethAnswer {
		t.Run(name, func(t *testing.T) { check(t, recordAnswer(t, name, nil)) })
	}
}

// checkVethFeatures checks a veth's FEATURES_GET answer as ethtool -k
// shows it.
func checkVethFeatures(t *testing.T, b []byte) {
	t.Helper()
	f, err := DecodeFeatures(b)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"rx-checksum": true, "tx-checksum-ip-generic": true, "rx-gro": false, "rx-lro": false, "tx-checksum-ipv4": false} {
		if f.Active[name] != want {
			t.Errorf("active %s = %v, want %v", name, f.Active[name], want)
		}
	}
	for name, want := range map[string]bool{"rx-gro": true, "tx-checksum-ip-generic": true, "rx-lro": false, "tx-checksum-ipv4": false} {
		if f.Changeable(name) != want {
			t.Errorf("changeable %s = %v, want %v", name, f.Changeable(name), want)
		}
	}
}

// checkVethChannels checks a new veth's CHANNELS_GET answer.
func checkVethChannels(t *testing.T, b []byte) {
	t.Helper()
	v, err := DecodeGet(Channels, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]uint32{"rx": 1, "tx": 1}; !maps.Equal(v.Cur, want) {
		t.Errorf("cur = %v, want %v", v.Cur, want)
	}
	if want := map[string]uint32{"rx": 2, "tx": 2}; !maps.Equal(v.Max, want) {
		t.Errorf("max = %v, want %v", v.Max, want)
	}
}

// reply builds an answer of u32 attributes after a header.
func reply(t *testing.T, g Group, attrs map[uint16]uint32, u8s map[uint16]uint8) []byte {
	ae := netlink.NewAttributeEncoder()
	encodeHeader(ae, g.Header, 7, 0)
	for a, v := range attrs {
		ae.Uint32(a, v)
	}
	for a, v := range u8s {
		ae.Uint8(a, v)
	}
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeGetRefusesBadAnswers(t *testing.T) {
	for name, b := range map[string][]byte{
		"above max": reply(t, Rings, map[uint16]uint32{unix.ETHTOOL_A_RINGS_RX: 5000, unix.ETHTOOL_A_RINGS_RX_MAX: 4096}, nil),
		"flag of 2": reply(t, Pause, nil, map[uint16]uint8{unix.ETHTOOL_A_PAUSE_RX: 2}),
		"short u32": reply(t, Rings, nil, map[uint16]uint8{unix.ETHTOOL_A_RINGS_TX: 1}),
		"truncated": {8, 0, 6, 0, 1},
	} {
		if _, err := DecodeGet(Rings, b); name == "flag of 2" {
			_, err = DecodeGet(Pause, b)
			if !errors.Is(err, errBadAnswer) {
				t.Errorf("%s: err = %v, want a bad answer", name, err)
			}
		} else if !errors.Is(err, errBadAnswer) {
			t.Errorf("%s: err = %v, want a bad answer", name, err)
		}
	}
}

func TestCoalesceAndPauseRoundTrip(t *testing.T) {
	b := reply(t, Coalesce, map[uint16]uint32{unix.ETHTOOL_A_COALESCE_RX_USECS: 50, unix.ETHTOOL_A_COALESCE_TX_MAX_FRAMES: 32},
		map[uint16]uint8{unix.ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX: 1, 99: 3})
	v, err := DecodeGet(Coalesce, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]uint32{"rx-usecs": 50, "tx-frames": 32, "adaptive-rx": 1}; !maps.Equal(v.Cur, want) {
		t.Errorf("cur = %v, want %v", v.Cur, want)
	}
}

// TestEncodeSetSendsOnlyTheNamedFields: the kernel keeps what is not
// sent, so a SET carries the header and exactly the named settings.
func TestEncodeSetSendsOnlyTheNamedFields(t *testing.T) {
	got, err := EncodeSet(Pause, 7, map[string]uint32{"rx": 1})
	if err != nil {
		t.Fatal(err)
	}
	ae := netlink.NewAttributeEncoder()
	encodeHeader(ae, unix.ETHTOOL_A_PAUSE_HEADER, 7, 0)
	ae.Uint8(unix.ETHTOOL_A_PAUSE_RX, 1)
	want, _ := ae.Encode()
	if !bytes.Equal(got, want) {
		t.Errorf("encoded %x, want %x", got, want)
	}
	if _, err := EncodeSet(Pause, 7, map[string]uint32{"tx": 2}); err == nil {
		t.Error("a flag of 2 encoded")
	}
	if _, err := EncodeSet(Rings, 7, map[string]uint32{"bogus": 2}); err == nil {
		t.Error("an unknown field encoded")
	}
}

// TestFeaturesSetDecodesAsItsBits: the SET request's wanted bitset, read
// with the answer's decoder, names exactly the bits sent with their
// values.
func TestFeaturesSetDecodesAsItsBits(t *testing.T) {
	b, err := EncodeFeaturesSet(7, map[string]bool{"rx-gro": true, "rx-checksum": false})
	if err != nil {
		t.Fatal(err)
	}
	ad, _ := netlink.NewAttributeDecoder(b)
	for ad.Next() {
		if ad.Type() != unix.ETHTOOL_A_FEATURES_WANTED {
			continue
		}
		set := requestBits(t, ad.Bytes())
		if want := map[string]bool{"rx-gro": true, "rx-checksum": false}; !maps.Equal(set, want) {
			t.Errorf("set bits %v, want %v", set, want)
		}
	}
}

func TestDecodeBitsetRefusesBadBits(t *testing.T) {
	bit := func(index uint32, name string) []byte {
		ae := netlink.NewAttributeEncoder()
		ae.Uint32(unix.ETHTOOL_A_BITSET_SIZE, 4)
		ae.Nested(unix.ETHTOOL_A_BITSET_BITS, func(l *netlink.AttributeEncoder) error {
			l.Nested(unix.ETHTOOL_A_BITSET_BITS_BIT, func(n *netlink.AttributeEncoder) error {
				n.Uint32(unix.ETHTOOL_A_BITSET_BIT_INDEX, index)
				n.String(unix.ETHTOOL_A_BITSET_BIT_NAME, name)
				return nil
			})
			return nil
		})
		b, _ := ae.Encode()
		return b
	}
	if _, err := decodeBitset(bit(1, "rx-gro")); err != nil {
		t.Fatalf("a good bit: %v", err)
	}
	for _, b := range [][]byte{bit(9, "rx-gro"), bit(1, "RX GRO"), bit(1, "a-name-longer-than-thirty-two-bytes")} {
		if _, err := decodeBitset(b); err == nil {
			t.Errorf("bad bitset %x decoded", b)
		}
	}
}

// requestBits reads a request's verbose bitset: name → value flag.
func requestBits(t *testing.T, b []byte) map[string]bool {
	set := map[string]bool{}
	walk := func(b []byte, f func(*netlink.AttributeDecoder)) {
		ad, err := netlink.NewAttributeDecoder(b)
		if err != nil {
			t.Fatal(err)
		}
		for ad.Next() {
			f(ad)
		}
	}
	walk(b, func(ad *netlink.AttributeDecoder) {
		walk(ad.Bytes(), func(bit *netlink.AttributeDecoder) {
			var name string
			on := false
			walk(bit.Bytes(), func(a *netlink.AttributeDecoder) {
				switch a.Type() {
				case unix.ETHTOOL_A_BITSET_BIT_NAME:
					name = a.String()
				case unix.ETHTOOL_A_BITSET_BIT_VALUE:
					on = true
				}
			})
			set[name] = on
		})
	})
	return set
}
