package snapshot

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/configurators/nftables"
	"github.com/netagent/netagent/items"
)

// minimal is a valid document: lo, a bridge with a veth pair as its
// port, a macvlan on the other end, an address and a record.
func minimal() *Document {
	return &Document{Version: Version, Netns: "n1", Identity: Identity{BootID: "b", Netns: "n1", NsID: "NS(1:2)"},
		Links: []Link{
			{Index: 1, Name: "lo", Kind: "loopback", MTU: 65536, Up: true, Carrier: true},
			{Index: 2, Name: "br0", Kind: "bridge", MTU: 1500, MAC: "02:00:00:00:00:01", Up: true, Bridge: &Bridge{ForwardDelay: 1500}},
			{Index: 3, Name: "v0", Kind: "veth", MTU: 1500, Parent: 4, Master: 2},
			{Index: 4, Name: "v1", Kind: "veth", MTU: 1500, Parent: 3},
			{Index: 5, Name: "mv0", Kind: "macvlan", MTU: 1500, Parent: 4, Macvlan: &Macvlan{Mode: "bridge"}},
		},
		Addresses: []Address{{Dev: "br0", Prefix: "192.0.2.1/24"}},
		Sysctls:   map[string]string{"/proc/sys/net/ipv4/ip_forward": "0"},
		Records:   []Record{{Path: "links.json", Content: []byte("x")}},
		Nftables: &nftables.State{Tables: []nftables.TableState{
			{Family: "ip", Name: "filter", BaseChains: []nftables.ForeignChain{{Name: "INPUT", Type: "filter", Hook: "input", Rules: 3, Drops: []int{2}}}},
			{Family: "inet", Name: "edge", Owned: &items.NftTable{Family: "inet", Table: "edge", Chains: []items.NftChain{
				{Name: "input", Type: "filter", Hook: "input", Priority: &items.NftPriority{Value: 0}, Policy: "drop"}}}},
		}},
	}
}

// load is d through its JSON (Read) loaded into fakes.
func load(t *testing.T, d *Document) *configurators.Fake {
	t.Helper()
	r, err := Read(bytes.NewReader(encode(t, d)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// wantPathError checks that d, edited, is refused at path.
func wantPathError(t *testing.T, d *Document, path string, edit func(d *Document)) {
	t.Helper()
	edit(d)
	_, err := Read(bytes.NewReader(encode(t, d)))
	var pe *PathError
	if !errors.As(err, &pe) || pe.Path != path {
		t.Errorf("want an error at %s, got %v", path, err)
	}
}

func encode(t *testing.T, d *Document) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := d.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A valid document reads back, and loads into fakes whose links are the
// document's, with their indexes.
func TestReadLoadRoundTrip(t *testing.T) {
	f := load(t, minimal())
	for _, l := range minimal().Links {
		got, err := f.Links.LinkByName(l.Name)
		if err != nil || got.Attrs().Index != l.Index || got.Attrs().MTU != l.MTU {
			t.Errorf("link %s: %v %+v", l.Name, err, got)
		}
	}
	if br, _ := f.Links.LinkByName("v0"); br.Attrs().MasterIndex != 2 {
		t.Errorf("v0's master %d, want 2", br.Attrs().MasterIndex)
	}
}

// Each bad field is refused with its JSON path.
func TestReadRefusesNamingThePath(t *testing.T) {
	for _, c := range []struct {
		path string
		edit func(d *Document)
	}{
		{"version", func(d *Document) { d.Version = 1 }},
		{"links[1].name", func(d *Document) { d.Links[1].Name = "a/b" }},
		{"links[1].kind", func(d *Document) { d.Links[1].Kind = "ipip6" }},
		{"links[1].mtu", func(d *Document) { d.Links[1].MTU = -1 }},
		{"links[1].mac", func(d *Document) { d.Links[1].MAC = "zz" }},
		{"links[2].index", func(d *Document) { d.Links[2].Index = 2 }},
		{"links[2].master", func(d *Document) { d.Links[2].Master = 4 }},
		{"links[2].parent", func(d *Document) { d.Links[2].Parent = 5 }},
		{"links[4].macvlan.mode", func(d *Document) { d.Links[4].Macvlan.Mode = "x" }},
		{"links[1].bridge", func(d *Document) { d.Links[1].Bridge = nil }},
		{"links", func(d *Document) { d.Links = d.Links[1:] }},
		{"addresses[0].dev", func(d *Document) { d.Addresses[0].Dev = "eth9" }},
		{"addresses[0].prefix", func(d *Document) { d.Addresses[0].Prefix = "192.0.2.1" }},
		{"routes[0]", func(d *Document) { d.Routes = [][]byte{{1, 2}} }},
		{"rules[0]", func(d *Document) { d.Rules = [][]byte{make([]byte, 12)} }},
		{"neighbours[0].ip", func(d *Document) { d.Neighbours = []Neighbour{{Dev: "br0", IP: "x"}} }},
		{"iptables", func(d *Document) { d.IPTables = map[string]string{"arp": ""} }},
		{"sysctls", func(d *Document) { d.Sysctls["/proc/sys/net/../kernel/x"] = "1" }},
		{"records[0].path", func(d *Document) { d.Records[0].Path = "../x" }},
		{"records[0].path", func(d *Document) { d.Records[0].Path = "/etc/x" }},
		{"nftables", func(d *Document) { d.Nftables = nil }},
		{"nftables.tables[0].family", func(d *Document) { d.Nftables.Tables[0].Family = "arp" }},
		{"nftables.tables[1]", func(d *Document) { d.Nftables.Tables[1] = d.Nftables.Tables[0] }},
		{"nftables.tables[0].baseChains[0].hook", func(d *Document) { d.Nftables.Tables[0].BaseChains[0].Hook = "ingres" }},
		{"nftables.tables[0].baseChains[0].drops[0]", func(d *Document) { d.Nftables.Tables[0].BaseChains[0].Drops = []int{3} }},
		{"nftables.tables[0].baseChains[0].name", func(d *Document) { d.Nftables.Tables[0].BaseChains[0].Name = "netagent-owned" }},
		{"nftables.tables[1].owned", func(d *Document) { d.Nftables.Tables[1].Owned.Table = "other" }},
		{"nftables.tables[1].owned", func(d *Document) { d.Nftables.Tables[1].Owned.Chains[0].Priority = nil }},
	} {
		wantPathError(t, minimal(), c.path, c.edit)
	}
}

// A route message with an attribute shorter than its type is refused,
// not a panic; so are unknown fields, wrong types and a second document.
func TestReadRefusesMalformed(t *testing.T) {
	short := make([]byte, 12+4+1) // rtmsg, then RTA_TABLE (15) with 1 byte
	short[0] = 2                  // AF_INET
	binary.NativeEndian.PutUint16(short[12:], 5)
	binary.NativeEndian.PutUint16(short[14:], 15)
	d := minimal()
	d.Routes = [][]byte{short}
	if _, err := Read(bytes.NewReader(encode(t, d))); err == nil || !strings.Contains(err.Error(), "routes[0]") {
		t.Errorf("short attribute: %v", err)
	}
	data := encode(t, minimal())
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["extra"] = 1
	withExtra, _ := json.Marshal(m)
	for name, in := range map[string][]byte{
		"unknown field": withExtra,
		"wrong type":    []byte(`{"version": "1"}`),
		"two documents": append(bytes.Clone(data), data...),
	} {
		if _, err := Read(bytes.NewReader(in)); err == nil {
			t.Errorf("%s: read", name)
		}
	}
}

// A route through a link the snapshot does not have is refused at its
// path.
func TestReadRefusesARouteThroughNoLink(t *testing.T) {
	msg := make([]byte, 12+8)                                // rtmsg, then RTA_OIF 99
	msg[0], msg[4], msg[5], msg[6], msg[7] = 2, 254, 3, 0, 1 // AF_INET, table main, proto boot, scope 0, unicast
	binary.NativeEndian.PutUint16(msg[12:], 8)               // RTA_OIF, 4 bytes
	binary.NativeEndian.PutUint16(msg[14:], 4)
	binary.NativeEndian.PutUint32(msg[16:], 99)
	d := minimal()
	d.Routes = [][]byte{msg}
	_, err := Read(bytes.NewReader(encode(t, d)))
	var pe *PathError
	if !errors.As(err, &pe) || pe.Path != "routes[0]" || !strings.Contains(err.Error(), "ifindex 99") {
		t.Errorf("got %v", err)
	}
}

// The nftables tables of a document load into the fake: netagent's
// reads back as recorded, another owner's is listed without the mark,
// and a rule the fake refuses in netagent's table is refused at its path.
func TestReadLoadNftables(t *testing.T) {
	f := load(t, minimal())
	got, err := f.Nft.ReadBack()
	if err != nil || len(got) != 1 || !got[0].Equal(minimal().Nftables.Tables[1].Owned) {
		t.Errorf("read-back: %v %v", got, err)
	}
	ts, err := f.Nft.Tables()
	if err != nil || len(ts) != 2 || ts[0] != (nftables.TableInfo{Family: "ip", Name: "filter"}) || !ts[1].Marked {
		t.Errorf("tables: %v %v", ts, err)
	}
	bad := minimal()
	bad.Nftables.Tables[1].Owned.Chains[0].Rules = []items.NftRule{{Verdict: "jump", Target: "nowhere"}}
	d, err := Read(bytes.NewReader(encode(t, bad)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "tables[1].owned") {
		t.Errorf("a jump to no chain loads: %v", err)
	}
}

// kindsDoc is minimal with a bond of two ports (active-backup, a
// primary, a transmit hash policy), a VLAN on it and a VRF the VLAN is a
// port of, two fallback devices (gre0, gretap0) and a GRE, a SIT and an
// ip6tnl tunnel.
func kindsDoc() *Document {
	d := minimal()
	d.Links = append(d.Links,
		Link{Index: 6, Name: "eth0", Kind: "physical", MTU: 1500, MAC: "02:00:00:00:00:06", Master: 8},
		Link{Index: 7, Name: "eth1", Kind: "physical", MTU: 1500, MAC: "02:00:00:00:00:07", Master: 8},
		Link{Index: 8, Name: "bond0", Kind: "bond", MTU: 1500, MAC: "02:00:00:00:00:06",
			Bond: &Bond{Mode: "active-backup", Miimon: 50, MinLinks: 1, LacpRate: "slow", XmitHashPolicy: "layer3+4", Primary: 6}},
		Link{Index: 9, Name: "bond0.10", Kind: "vlan", MTU: 1500, MAC: "02:00:00:00:00:06", Parent: 8, Master: 10, Vlan: &Vlan{ID: 10, Protocol: "802.1ad"}},
		Link{Index: 10, Name: "blue", Kind: "vrf", MTU: 65575, MAC: "02:00:00:00:00:0a", Vrf: &Vrf{Table: 100}},
		Link{Index: 11, Name: "gre0", Kind: "gre", MTU: 1476, Fallback: true},
		Link{Index: 12, Name: "gretap0", Kind: "gretap", MTU: 1462, Fallback: true},
		Link{Index: 13, Name: "gre1", Kind: "gre", MTU: 1472, Parent: 6, Tunnel: &Tunnel{Local: "192.0.2.1", Remote: "198.51.100.1", TTL: 64, PMTUDisc: 1, IKey: 5, OKey: 7}},
		Link{Index: 14, Name: "sit1", Kind: "sit", MTU: 1480, Tunnel: &Tunnel{Remote: "198.51.100.2", Proto: 41}},
		Link{Index: 15, Name: "t6", Kind: "ip6tnl", MTU: 1452, Tunnel: &Tunnel{Local: "2001:db8::1", Remote: "2001:db8::2", TTL: 64, Proto: 41, EncapLimit: 4}},
		// ipvlans carry their parent's MAC, as the kernel dumps them (a
		// create with a MAC is refused: the fake loads them without).
		Link{Index: 16, Name: "eth2", Kind: "physical", MTU: 1500, MAC: "02:00:00:00:00:10"},
		Link{Index: 17, Name: "iv0", Kind: "ipvlan", MTU: 1500, MAC: "02:00:00:00:00:10", Parent: 16, Ipvlan: &Ipvlan{Mode: "l3", Flag: "private"}},
		Link{Index: 18, Name: "iv1", Kind: "ipvlan", MTU: 1500, MAC: "02:00:00:00:00:10", Parent: 16, Ipvlan: &Ipvlan{Mode: "l3", Flag: "private"}})
	return d
}

// Bonds, VLANs, VRFs, tunnels, ipvlans and the tunnel modules' fallback devices load into
// the fake as the document has them:
// the fake's links read back (as the link configurator reads them) into
// the document's links, their settings, ports and lower links included.
func TestReadLoadBondVlanVrf(t *testing.T) {
	want := kindsDoc()
	f := load(t, want)
	for _, w := range want.Links[5:] {
		l, err := f.Links.LinkByName(w.Name)
		if err != nil {
			t.Fatal(err)
		}
		got := linkOf(link.LoadedLink{Link: l, Fallback: link.IsFallbackDevice(l.Attrs().Name, l.Type())})
		if got.Kind == "physical" {
			got.Ethtool = nil
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("link %s loads as\n%+v\nwant\n%+v", w.Name, got, w)
		}
	}
}

// A bond's, VLAN's or VRF's settings that are wrong are refused at their
// path.
func TestReadRefusesKindSettings(t *testing.T) {
	for _, c := range []struct {
		path string
		edit func(d *Document)
	}{
		{"links[7].bond.mode", func(d *Document) { d.Links[7].Bond.Mode = "fastest" }},
		{"links[7].bond.xmitHashPolicy", func(d *Document) { d.Links[7].Bond.XmitHashPolicy = "x" }},
		{"links[7].bond.primary", func(d *Document) { d.Links[7].Bond.Primary = 9 }},
		{"links[7].bond", func(d *Document) { d.Links[7].Kind = "dummy" }},
		{"links[8].vlan.id", func(d *Document) { d.Links[8].Vlan.ID = 4095 }},
		{"links[8].vlan.protocol", func(d *Document) { d.Links[8].Vlan.Protocol = "802.1x" }},
		{"links[8].parent", func(d *Document) { d.Links[8].Parent = 0 }},
		{"links[9].vrf.table", func(d *Document) { d.Links[9].Vrf.Table = 0 }},
		{"links[5].master", func(d *Document) { d.Links[5].Master = 9 }},
		{"links[10].fallback", func(d *Document) { d.Links[10].Name = "gre1" }},
		{"links[11].kind", func(d *Document) { d.Links[11].Fallback = false }},
		{"links[12].tunnel.local", func(d *Document) { d.Links[12].Tunnel.Local = "2001:db8::1" }},
		{"links[12].parent", func(d *Document) { d.Links[12].Parent = 99 }},
		{"links[13].tunnel.ikey", func(d *Document) { d.Links[13].Tunnel.IKey = 1 }},
		{"links[14].tunnel.pmtudisc", func(d *Document) { d.Links[14].Tunnel.PMTUDisc = 1 }},
		{"links[10].tunnel", func(d *Document) { d.Links[10].Tunnel = &Tunnel{} }},
	} {
		wantPathError(t, kindsDoc(), c.path, c.edit)
	}
}

// A neighbour's link-layer address may be a tunnel's (4 or 16 bytes):
// it loads as it is; what is not colon-separated bytes is refused.
func TestNeighbourLinkLayerAddresses(t *testing.T) {
	d := minimal()
	d.Neighbours = []Neighbour{{Dev: "br0", IP: "2001:db8::2", MAC: "20:01:0d:b8:00:00:00:00:00:00:00:00:00:00:00:02", State: 0x80},
		{Dev: "br0", IP: "192.0.2.9", MAC: "c6:33:64:02", State: 0x80}}
	load(t, d)
	for _, bad := range []string{"zz", "1:2", "00:11:22:33:44:55:66:77:88:99:00:11:22:33:44:55:66:77:88:99:00:11:22:33:44:55:66:77:88:99:00:11:22"} {
		wantPathError(t, minimal(), "neighbours[0].mac", func(d *Document) { d.Neighbours = []Neighbour{{Dev: "br0", IP: "192.0.2.9", MAC: bad}} })
	}
}
