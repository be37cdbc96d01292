package host

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/netagent/netagent/configurators/l3"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

func u8(v uint8) *uint8    { return &v }
func u32(v uint32) *uint32 { return &v }
func u16(v uint16) *uint16 { return &v }

// journalSamples are items of every type the journal stores, with the
// fields a lossy encoding would get wrong: pointers to zero values, nil
// versus empty, kind attributes behind an interface.
func journalSamples() []dg.Item {
	mac, _ := net.ParseMAC("02:00:00:00:00:01")
	return []dg.Item{
		&items.Interface{IfName: "vx0", Kind: items.KindVxlan, MTU: 1450, AdminUp: true, MAC: mac,
			Attrs: &items.VxlanAttrs{VNI: 100, Local: netip.MustParseAddr("192.0.2.10"), Remote: netip.MustParseAddr("192.0.2.20"), Port: 4789, Parent: "uplink0", Learning: true}},
		&items.Interface{IfName: "bond0", Kind: items.KindBond, Attrs: &items.BondAttrs{Mode: "active-backup", Miimon: 100}},
		&items.Interface{IfName: "uplink0", Kind: items.KindPhysical, MTU: 1500},
		&items.Interface{IfName: "d0", Kind: items.KindDummy},
		&items.Port{IfName: "vx0", Master: "br0", MasterKind: items.KindBridge, Priority: u16(0)},
		&items.Address{Dev: "br0", Prefix: netip.MustParsePrefix("10.0.0.1/24"), Deps: []dg.ItemRef{items.InterfaceRef("x")}},
		&items.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Table: 100, Nexthops: []items.Nexthop{
			{Gw: netip.MustParseAddr("192.0.2.1"), Dev: "uplink0", Weight: 2}, {Gw: netip.MustParseAddr("192.0.2.2"), OnLink: true}}},
		&items.Rule{Priority: 1000, Family: items.FamilyIPv4, From: netip.MustParsePrefix("10.0.0.0/24"), Action: items.RuleLookup, Table: 100, SuppressPrefixlen: u8(0)},
		&items.Neighbor{Dev: "br0", IP: netip.MustParseAddr("10.0.0.20"), MAC: mac},
		&items.Sysctl{Key: "net.ipv4.ip_forward", Value: "1"},
		&items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NETAGENT-FWD", JumpFrom: "FORWARD", Rules: [][]string{{"-j", "ACCEPT"}}},
		&items.DHCP4Lease{Dev: "wan0", Hostname: "edge-1", ClientID: "cid", VendorClass: "netagent", Kept: true},
		&items.Ethtool{Interface: "uplink0", Settings: map[string]uint32{"features/rx-gro": 0, "channels/combined": 4, "wake-on-lan/modes": 32},
			Sets: map[string][]string{items.EthtoolAdvertise: {"1000baseT/Full", "100baseT/Full"}}, MTU: 9000},
		&items.NftTable{Family: "inet", Table: "netagent",
			Sets: []items.NftSet{{Name: "mgmt", Type: "ipv4_addr", Interval: true, Elements: []string{"192.0.2.0/24", "198.51.100.7"}}},
			Chains: []items.NftChain{
				{Name: "input", Type: "filter", Hook: "input", Priority: &items.NftPriority{Value: -5}, Policy: "drop", Rules: []items.NftRule{
					{CtState: []string{"established", "related"}, Verdict: "accept"},
					{Saddr: "@mgmt", Protocol: "tcp", Dport: "22", Mark: u32(0), Counter: true, Verdict: "jump", Target: "ssh"}}},
				{Name: "ssh", Rules: []items.NftRule{{Verdict: "accept"}}},
				{Name: "post", Type: "nat", Hook: "postrouting", Priority: &items.NftPriority{Value: 100}, Policy: "accept",
					Rules: []items.NftRule{{OIfName: "uplink0", DNAT: "10.0.0.2:80", Protocol: "tcp"}}}}},
	}
}

// Every sample survives the journal: same type, Equal, and deeply equal.
func TestJournalItemRoundTrip(t *testing.T) {
	for _, it := range journalSamples() {
		data, err := encodeItem(it)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeItem(it.Type(), data)
		if err != nil {
			t.Fatalf("%s: %v", dg.Ref(it), err)
		}
		if !it.Equal(got) || !reflect.DeepEqual(it, got) {
			t.Errorf("%s: stored %v, read back %#v", dg.Ref(it), it, got)
		}
	}
}

// The journal keeps each item's first image, and a record cut short by a
// crash ends it: what the torn record held is not reported (its wave never
// ran), what came before is.
func TestJournalTornTailIgnored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, err := createJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	s := journalSamples()
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, MTU: 1400}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(j.Record([]reconciler.PlannedOp{{Op: reconciler.OpModify, Ref: dg.Ref(br), Old: br, New: s[0]}, {Op: reconciler.OpCreate, Ref: dg.Ref(s[0]), New: s[0]}}))
	br2 := &items.Interface{IfName: "br0", Kind: items.KindBridge, MTU: 9000}
	must(j.Record([]reconciler.PlannedOp{{Op: reconciler.OpModify, Ref: dg.Ref(br), Old: br2, New: br}}))
	must(j.Record([]reconciler.PlannedOp{{Op: reconciler.OpDelete, Ref: dg.Ref(s[9]), Old: s[9]}}))
	must(j.Close())
	if j.batches != 2 {
		t.Errorf("%d records written, want 2 (the second held only an item journaled already)", j.batches)
	}
	full, _ := os.ReadFile(path)
	images, torn, err := ReadJournal(path)
	if err != nil || torn || len(images) != 3 {
		t.Fatalf("whole journal: %d images, torn %v, err %v", len(images), torn, err)
	}
	if !images[0].Item.Equal(br) || !images[1].Absent || !images[2].Item.Equal(s[9]) {
		t.Fatalf("images %+v", images)
	}
	// Cut the last record short; then flip a byte of it instead.
	for name, data := range map[string][]byte{
		"cut":     full[:len(full)-5],
		"flipped": append(append([]byte{}, full[:len(full)-5]...), 'x', '"', '}', ']', '}', '\n')[:len(full)],
	} {
		must(os.WriteFile(path, data, 0o600))
		images, torn, err := ReadJournal(path)
		if err != nil || !torn || len(images) != 2 {
			t.Errorf("%s: %d images, torn %v, err %v; want the first 2, torn", name, len(images), torn, err)
		}
	}
}

// The revert's intent is the current state with each journaled item
// replaced by its before-image.
func TestRevertIntended(t *testing.T) {
	s := journalSamples()
	cur := dg.New("current", s[0], s[5], s[9], &items.Link{IfName: "uplink0"})
	old := &items.Sysctl{Key: "net.ipv4.ip_forward", Value: "0"}
	got := RevertIntended(cur, []BeforeImage{
		{Ref: dg.Ref(s[0]), Absent: true}, // created by the trial
		{Ref: dg.Ref(old), Item: old},     // changed by it
		{Ref: dg.Ref(s[10]), Item: s[10]}, // deleted by it
	})
	want := dg.New("want", s[5], old, s[10])
	for _, ref := range unionRefs(got, want) {
		a, okA := got.Get(ref)
		b, okB := want.Get(ref)
		if okA != okB || okA && !a.Equal(b) {
			t.Errorf("%s: got %v (%v), want %v (%v)", ref, a, okA, b, okB)
		}
	}
}

// An item the revert would keep as it is, never journaled (the trial was
// killed before it reached it), that depends on one the trial created is
// removed with it, and so is what depends on that in turn; the rest is
// kept, or gets its before-image.
func TestRevertIntendedDropsOrphans(t *testing.T) {
	lan := &items.Interface{IfName: "lan0", Kind: items.KindPhysical, AdminUp: true, Match: &items.NICMatch{Name: "ens*"}}
	eth := &items.Ethtool{Interface: "lan0", Settings: map[string]uint32{"features/tx-tcp-segmentation": 1}}
	vlan := &items.Interface{IfName: "lan0.10", Kind: items.KindVLAN, Attrs: &items.VLANAttrs{Parent: "lan0", ID: 10}}
	addr := &items.Address{Dev: "lan0.10", Prefix: netip.MustParsePrefix("10.0.0.1/24")}
	other := &items.Sysctl{Key: "net.ipv4.ip_forward", Value: "1"}
	old := &items.Sysctl{Key: "net.ipv4.ip_forward", Value: "0"}
	kept := &items.Address{Dev: "uplink0", Prefix: netip.MustParsePrefix("192.0.2.1/24")}
	cur := dg.New("current", lan, eth, vlan, addr, other, kept)
	got := RevertIntended(cur, []BeforeImage{{Ref: dg.Ref(lan), Absent: true}, {Ref: dg.Ref(old), Item: old}})
	for _, it := range []dg.Item{lan, eth, vlan, addr} {
		if got.Contains(dg.Ref(it)) {
			t.Errorf("%s is kept", dg.Ref(it))
		}
	}
	if it, ok := got.Get(dg.Ref(old)); !ok || !it.Equal(old) || !got.Contains(dg.Ref(kept)) {
		t.Errorf("the sysctl is %v (%v), the address on uplink0 kept: %v", it, ok, got.Contains(dg.Ref(kept)))
	}
}

// Before a wave that can make the kernel drop objects with a link (a link
// changed or deleted, a port moved, an address removed), the journal
// saves the foreign objects on that link, once per link, and the
// before-images of netagent's items that go with it (an address on it, a
// route through that address); a wave that only creates, or touches
// only links the trial created, saves nothing.
func TestJournalSavesWhatLinksTakeWithThem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, err := createJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	var asked [][]string
	j.atRisk = func(devs []string) ([]l3.ForeignObject, error) {
		asked = append(asked, devs)
		var out []l3.ForeignObject
		for _, d := range devs {
			out = append(out, foreignRoute(d))
		}
		return out, nil
	}
	lan := &items.Interface{IfName: "lan0", Kind: items.KindBridge, AdminUp: true}
	down := &items.Interface{IfName: "lan0", Kind: items.KindBridge}
	addr := &items.Address{Dev: "lan0", Prefix: netip.MustParsePrefix("10.0.0.1/24")}
	route := &items.Route{Dst: netip.MustParsePrefix("10.9.0.0/16"), Gw: netip.MustParseAddr("10.0.0.9"), GwAddress: addr.Name()}
	other := &items.Address{Dev: "lan1", Prefix: netip.MustParsePrefix("10.1.0.1/24")}
	j.SetCurrent(dg.New("current", lan, addr, route, other))
	created := &items.Interface{IfName: "new0", Kind: items.KindBridge}
	newAddr := &items.Address{Dev: "new0", Prefix: netip.MustParsePrefix("10.2.0.1/24")}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(j.Record([]reconciler.PlannedOp{{Op: reconciler.OpCreate, Ref: dg.Ref(created), New: created}}))
	must(j.Record([]reconciler.PlannedOp{{Op: reconciler.OpCreate, Ref: dg.Ref(newAddr), New: newAddr}}))
	must(j.Record([]reconciler.PlannedOp{{Op: reconciler.OpModify, Ref: dg.Ref(created), Old: created, New: created}}))
	if len(asked) != 0 {
		t.Fatalf("creates and changes of created links saved foreign objects of %v", asked)
	}
	must(j.Record([]reconciler.PlannedOp{{Op: reconciler.OpModify, Ref: dg.Ref(lan), Old: lan, New: down}}))
	must(j.Record([]reconciler.PlannedOp{{Op: reconciler.OpDelete, Ref: dg.Ref(addr), Old: addr}}))
	must(j.Record([]reconciler.PlannedOp{{Op: reconciler.OpDelete, Ref: dg.Ref(other), Old: other}}))
	must(j.Close())
	if !reflect.DeepEqual(asked, [][]string{{"lan0"}, {"lan1"}}) {
		t.Errorf("foreign objects saved for %v, want lan0 once, then lan1", asked)
	}
	got, err := readJournal(path)
	if err != nil || got.Torn {
		t.Fatal(got.Torn, err)
	}
	if len(got.Foreign) != 2 || got.Foreign[0].Devs[0] != "lan0" || got.Foreign[1].Devs[0] != "lan1" {
		t.Errorf("foreign objects read back %+v", got.Foreign)
	}
	images := map[dg.ItemRef]BeforeImage{}
	for _, im := range got.Images {
		images[im.Ref] = im
	}
	for _, it := range []dg.Item{lan, addr, route, other} {
		if im, ok := images[dg.Ref(it)]; !ok || im.Absent || !im.Item.Equal(it) {
			t.Errorf("%s: before-image %+v, want it as it was", dg.Ref(it), im)
		}
	}
}

// Names that JSON must escape (quotes, backslashes, control and non-ASCII
// characters) survive the journal's own encoding.
func TestJournalEscapedNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, err := createJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	odd := &items.Sysctl{Key: "net.ipv4.conf.a\"b\\c\td\u00e9.forwarding", Value: "1"}
	plain := &items.Sysctl{Key: "net.ipv4.ip_forward", Value: "0"}
	if err := j.Record([]reconciler.PlannedOp{{Op: reconciler.OpDelete, Ref: dg.Ref(odd), Old: odd}, {Op: reconciler.OpCreate, Ref: dg.Ref(plain), New: plain}}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	images, torn, err := ReadJournal(path)
	if err != nil || torn || len(images) != 2 {
		t.Fatalf("%d images, torn %v, err %v", len(images), torn, err)
	}
	if images[0].Ref != dg.Ref(odd) || !images[0].Item.Equal(odd) || images[1].Ref != dg.Ref(plain) || !images[1].Absent {
		t.Errorf("read back %+v", images)
	}
}

// A wave that recreates a bridge's port journals the port and the bridge
// with what the kernel chose for them (chosen: link.KernelChosen), their
// MAC and MTU, which the read-back left unset: a revert puts those back.
func TestJournalImagesKernelChosenMACAndMTU(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, err := createJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	mac, _ := net.ParseMAC("02:00:00:00:00:07")
	var asked []string
	j.chosen = func(ifs []*items.Interface) ([]*items.Interface, error) {
		out := make([]*items.Interface, len(ifs))
		for i, it := range ifs {
			asked = append(asked, it.IfName)
			c := *it
			c.MAC, c.MTU = mac, 1450
			out[i] = &c
		}
		return out, nil
	}
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	vx := &items.Interface{IfName: "vx0", Kind: items.KindVxlan, Attrs: &items.VxlanAttrs{VNI: 100, Parent: "uplink0"}}
	port := &items.Port{IfName: "vx0", Master: "br0", MasterKind: items.KindBridge}
	uplink := &items.Interface{IfName: "uplink0", Kind: items.KindPhysical}
	j.SetCurrent(dg.New("current", br, vx, port, uplink))
	if err := j.Record([]reconciler.PlannedOp{{Op: reconciler.OpDelete, Ref: dg.Ref(port), Old: port}, {Op: reconciler.OpDelete, Ref: dg.Ref(vx), Old: vx}}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	images, _, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[dg.ItemRef]dg.Item{}
	for _, im := range images {
		got[im.Ref] = im.Item
	}
	for _, ref := range []dg.ItemRef{dg.Ref(vx), dg.Ref(br)} {
		it, ok := got[ref].(*items.Interface)
		if !ok || it.MTU != 1450 || it.MAC.String() != mac.String() {
			t.Errorf("%s: before-image %v, want the kernel's MAC and MTU", ref, got[ref])
		}
	}
	if _, ok := got[dg.Ref(uplink)]; ok {
		t.Errorf("the uplink was journaled, the wave does not touch it")
	}
	for _, n := range asked {
		if n == "uplink0" {
			t.Errorf("asked the kernel's choice for a NIC")
		}
	}
}

// The journal accounts for the records its count says the trial wrote:
// a torn last record the count does not hold (a crash before its fsync),
// or a whole one it does not hold yet (a crash before the count's write),
// is what a crash leaves; a record the count holds that is cut short or
// damaged, a damaged line with more after it, a record out of sequence,
// or a count that is missing or damaged, is not accounted for.
func TestJournalAccountsForItsCount(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal")
	j, err := createJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		it := &items.Sysctl{Key: fmt.Sprintf("net.ipv4.conf.d%d.forwarding", i), Value: "1"}
		if err := j.Record([]reconciler.PlannedOp{{Op: reconciler.OpDelete, Ref: dg.Ref(it), Old: it}}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	whole, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(whole), "\n")[:3]
	count := func(n int) []byte { return countLine(n) }
	for _, tc := range []struct {
		name        string
		journal     string
		count       []byte // nil: no count file
		accounted   bool
		records     int
		unaccounted string
	}{
		{"whole", string(whole), count(3), true, 3, ""},
		{"torn tail, not counted", lines[0] + lines[1] + lines[2][:20], count(2), true, 2, ""},
		{"torn tail, terminated, not counted", lines[0] + lines[1] + "0000000 x\n", count(2), true, 2, ""},
		{"a record not counted yet", string(whole), count(2), true, 3, ""},
		{"counted record cut short", lines[0] + lines[1] + lines[2][:20], count(3), false, 2, "record 3 of the 3"},
		{"counted records missing", lines[0], count(3), false, 1, "records 2-3 of the 3"},
		{"empty", "", count(3), false, 0, "the journal is empty"},
		{"damaged line with more after it", lines[0] + "0000000 x\n" + lines[2], count(1), false, 1, "line 2: not a record, and more follows"},
		{"out of sequence", lines[0] + lines[2], count(1), false, 1, "line 2: it is record 3, not 2"},
		{"count missing", string(whole), nil, false, 3, "journal.count is missing"},
		{"count damaged", string(whole), []byte(strings.Replace(string(count(3)), "3\n", "4\n", 1)), false, 3, "checksum does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(tc.journal), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(countPath(path))
			if tc.count != nil {
				if err := os.WriteFile(countPath(path), tc.count, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			jd, err := readJournal(path)
			if err != nil {
				t.Fatal(err)
			}
			u := jd.Unaccounted(path)
			if (u == "") != tc.accounted || jd.Records != tc.records || !strings.Contains(u, tc.unaccounted) {
				t.Errorf("records %d, unaccounted %q; want %d records, accounted %v, naming %q", jd.Records, u, tc.records, tc.accounted, tc.unaccounted)
			}
			if len(jd.Images) != jd.Records {
				t.Errorf("%d images of %d records", len(jd.Images), jd.Records)
			}
		})
	}
}
