package l3

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
)

// fakeNs is the namespace identity the record tests' fake has.
var fakeNs = statefile.NsIdentity{BootID: "boot-1", NsID: "NS(0:1)"}

// newV61Env is a fake that keeps an IPv4 address's protocol on an
// in-place replace (Linux 6.1), with a state directory; cfg adopts.
func newV61Env(t *testing.T) (*fakeEnv, *addressConfigurator, string) {
	e := newFakeEnv(t)
	e.k.KeepV4ProtoOnReplace()
	dir := t.TempDir()
	e.k.UseStateDir(dir, fakeNs)
	return e, &addressConfigurator{nlh: e.k, open: e.k.open, promotes: e.k.promotes, adopt: true}, filepath.Join(dir, addrRecordFile)
}

func readsBack(t *testing.T, k *FakeKernel, name string) bool {
	t.Helper()
	got, err := k.ReadBack(nil)
	must(t, err)
	return slices.ContainsFunc(got, func(it dg.Item) bool { return it.Type() == items.TypeAddress && it.Name() == name })
}

// On a kernel that keeps an IPv4 address's protocol on replace, adopt
// records the address in the state directory instead: it reads back as
// netagent's, a second create writes nothing, a plain configurator (the
// next apply without --adopt) does not refuse it, the delete deletes it
// and drops the record. IPv6 keeps the mark and is never recorded.
func TestFakeAddressAdoptRecorded(t *testing.T) {
	e, cfg, path := newV61Env(t)
	a := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.2/24")}
	a6 := &items.Address{Dev: "up0", Prefix: pfx("2001:db8::2/64")}
	e.k.addAddr("up0", "10.0.0.2/24", unix.RTPROT_STATIC)
	e.k.addAddr("up0", "2001:db8::2/64", unix.RTPROT_STATIC)
	if found, err := e.k.Adoptions(dg.New("intended", a, a6)); err != nil || len(found) != 2 {
		t.Fatalf("Adoptions before: %v %v, want both", found, err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("Adoptions (a dry run) wrote the record")
	}
	e.k.Take()
	must(t, cfg.Create(ctx, a))
	must(t, cfg.Create(ctx, a6))
	if got := e.k.Take(); !slices.Equal(got, []string{"RTM_NEWADDR replace", "RTM_NEWADDR replace"}) {
		t.Errorf("requests of the adoption: %v, want one replace each (no delete, no add)", got)
	}
	if k, _ := e.k.addrOn("up0", "10.0.0.2/24"); k.proto != unix.RTPROT_STATIC {
		t.Errorf("IPv4 after the adoption: %+v, want its old protocol (Linux 6.1)", k)
	}
	es, err := e.k.rec.get()
	if err != nil || len(es) != 1 || es[0] != (adoptedAddr{Index: e.k.index("up0"), Dev: "up0", Prefix: a.Prefix}) {
		t.Fatalf("record: %+v %v, want the IPv4 address alone", es, err)
	}
	if !readsBack(t, e.k, a.Name()) || !readsBack(t, e.k, a6.Name()) {
		t.Error("the adopted addresses do not read back")
	}
	if found, err := e.k.Adoptions(dg.New("intended", a, a6)); err != nil || len(found) != 0 {
		t.Errorf("Adoptions after: %v %v, want none (netagent's now)", found, err)
	}
	if c, err := e.k.Clashes(dg.New("intended", a, a6)); err != nil || len(c) != 0 {
		t.Errorf("Clashes after: %v %v", c, err)
	}
	plain := &addressConfigurator{nlh: e.k, open: e.k.open, promotes: e.k.promotes}
	if n := e.writes(func() { must(t, cfg.Create(ctx, a)); must(t, plain.Create(ctx, a)) }); n != 0 {
		t.Errorf("second creates wrote %d times", n)
	}
	must(t, plain.Delete(ctx, a))
	if _, ok := e.k.addrOn("up0", "10.0.0.2/24"); ok {
		t.Error("the adopted address is still there after its delete")
	}
	if es, err := e.k.rec.get(); err != nil || len(es) != 0 {
		t.Errorf("record after the delete: %+v %v, want empty", es, err)
	}
}

// A record whose address is not as recorded (another ifindex: the link
// re-created) is not trusted: the address stays someone else's, and the
// next record write drops the entry.
func TestFakeAddressRecordStale(t *testing.T) {
	e, cfg, _ := newV61Env(t)
	e.k.addAddr("up0", "10.0.0.2/24", unix.RTPROT_STATIC)
	a := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.2/24")}
	stale := adoptedAddr{Index: e.k.index("up1"), Dev: "up0", Prefix: a.Prefix}
	must(t, e.k.rec.update(func([]adoptedAddr) []adoptedAddr { return []adoptedAddr{stale} }))
	if readsBack(t, e.k, a.Name()) {
		t.Error("an address named by a stale record reads back as netagent's")
	}
	plain := &addressConfigurator{nlh: e.k, open: e.k.open, promotes: e.k.promotes}
	wantNotOwned(t, "create over an address of a stale record", plain.Create(ctx, a))
	e.k.addAddr("up1", "10.0.1.2/24", unix.RTPROT_STATIC)
	must(t, cfg.Create(ctx, &items.Address{Dev: "up1", Prefix: pfx("10.0.1.2/24")}))
	es, err := e.k.rec.get()
	if err != nil || len(es) != 1 || es[0].Dev != "up1" {
		t.Errorf("record after the next write: %+v %v, want the stale entry dropped", es, err)
	}
}

// A malformed record fails the read-back, naming the file; nothing is
// taken for netagent's.
func TestFakeAddressRecordMalformed(t *testing.T) {
	for name, write := range map[string]func(path string) error{
		"not JSON": func(path string) error { return statefile.SaveRecord(path, []byte("{not json"), true) },
		"ifindex 0": func(path string) error {
			return statefile.SaveJSON(path, addrRecordsFile{Namespaces: []nsAddrs{{NsIdentity: fakeNs,
				Addresses: []adoptedAddr{{Index: 0, Dev: "up0", Prefix: pfx("10.0.0.2/24")}}}}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			e, _, path := newV61Env(t)
			e.k.addAddr("up0", "10.0.0.2/24", unix.RTPROT_STATIC)
			must(t, write(path))
			_, err := e.k.ReadBack(nil)
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("read-back over a malformed record: %v, want an error naming %s", err, path)
			}
		})
	}
}

// A record that would hold more than maxAddrRecords entries is refused,
// naming the file: the adopt fails and no entry is dropped to make room
// (a dropped entry would turn an adopted address foreign).
func TestFakeAddressRecordFullRefused(t *testing.T) {
	e, cfg, path := newV61Env(t)
	e.k.addAddr("up0", "10.0.0.1/32", unix.RTPROT_STATIC)
	must(t, cfg.Create(ctx, &items.Address{Dev: "up0", Prefix: pfx("10.0.0.1/32")}))
	es, err := e.k.rec.get()
	if err != nil || len(es) != 1 {
		t.Fatalf("record after one adopt: %+v %v", es, err)
	}
	full := make([]adoptedAddr, 0, maxAddrRecords)
	for i := range maxAddrRecords {
		p := fmt.Sprintf("10.%d.%d.1/32", 1+i/256, i%256)
		if i > 0 {
			e.k.addAddr("up0", p, unix.RTPROT_STATIC)
		} else {
			p = "10.0.0.1/32"
		}
		full = append(full, adoptedAddr{Index: es[0].Index, Dev: "up0", Prefix: pfx(p)})
	}
	must(t, statefile.SaveJSON(path, addrRecordsFile{Namespaces: []nsAddrs{{NsIdentity: fakeNs, Addresses: full}}}))
	e.k.addAddr("up0", "10.99.0.1/32", unix.RTPROT_STATIC)
	err = cfg.Create(ctx, &items.Address{Dev: "up0", Prefix: pfx("10.99.0.1/32")})
	want := fmt.Sprintf("address records %s: %d addresses for one namespace, more than %d: not recorded", path, maxAddrRecords+1, maxAddrRecords)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("adopt into a full record: %v, want it to contain %q", err, want)
	}
	if es, err := e.k.rec.get(); err != nil || !slices.Equal(es, full) {
		t.Errorf("record after the refused adopt: %d entries, %v; want the %d unchanged", len(es), err, len(full))
	}
}
