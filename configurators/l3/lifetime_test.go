package l3

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestAddressLifetimeInKernel: an address with a ValidUntil (a lease's)
// gets finite valid and preferred lifetimes counting down to it; it
// reads back as the same item (the countdown is no drift); a Modify to a
// later ValidUntil (a renewal) refreshes them in place; Create and
// ApplyBatch refresh a lifetime that strayed (made permanent), and
// refuse a ValidUntil already past.
func TestAddressLifetimeInKernel(t *testing.T) {
	tgt, reg := addressNamespace(t, false)
	ctx := context.Background()
	a := &items.Address{Dev: "up0", Prefix: netip.MustParsePrefix("10.77.0.120/24"), ValidUntil: time.Now().Add(100 * time.Second)}
	c := reg.Configurator(a)
	if err := c.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	if v, p := kernelLifetimes(t, tgt.NL, a); v < 95 || v > 100 || p != v {
		t.Errorf("valid %d preferred %d after the add, want both about 100 s", v, p)
	}
	readsBackAs(t, tgt, a)

	renewed := *a
	renewed.ValidUntil = time.Now().Add(300 * time.Second)
	if err := c.Modify(ctx, a, &renewed); err != nil {
		t.Fatal(err)
	}
	if v, _ := kernelLifetimes(t, tgt.NL, a); v < 295 || v > 300 {
		t.Errorf("valid %d after the renewal, want about 300 s", v)
	}
	readsBackAs(t, tgt, &renewed)

	setForever(t, tgt, &renewed)
	if got := readAddr(t, tgt, &renewed); got.Equal(&renewed) || !got.ValidUntil.IsZero() {
		t.Errorf("a permanent address read back as %v, want drift from %v", got, &renewed)
	}
	if errs := c.(reconciler.BatchConfigurator).ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpCreate, New: &renewed}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if v, _ := kernelLifetimes(t, tgt.NL, a); v < 295 || v > 300 {
		t.Errorf("valid %d after the repair, want about 300 s", v)
	}

	over := *a
	over.Prefix = netip.MustParsePrefix("10.77.0.121/24")
	over.ValidUntil = time.Now().Add(-time.Second)
	if err := c.Create(ctx, &over); !errors.Is(err, ErrLifetimeOver) {
		t.Errorf("an address whose lifetime is over: %v, want ErrLifetimeOver", err)
	}
}

// addressNamespace is a namespace with the veth up0/peer0 (up, or down)
// and the configurators registered in it.
func addressNamespace(t *testing.T, up bool) (*netnsx.Target, *reconciler.TypeRegistry) {
	t.Helper()
	tgt := testns.New(t)
	if err := tgt.NL.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "up0"}, PeerName: "peer0"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"up0", "peer0"} {
		l, err := tgt.NL.LinkByName(name)
		if err == nil && up {
			err = tgt.NL.LinkSetUp(l)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	reg := &reconciler.TypeRegistry{}
	if err := Register(reg, tgt); err != nil {
		t.Fatal(err)
	}
	return tgt, reg
}

// kernelLifetimes returns a's valid and preferred lifetimes as the kernel
// lists them.
func kernelLifetimes(t *testing.T, nlh *netlink.Handle, a *items.Address) (valid, preferred int) {
	t.Helper()
	list, err := nlh.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range list {
		if k.IP.Equal(a.Prefix.Addr().AsSlice()) {
			return k.ValidLft, k.PreferedLft
		}
	}
	t.Fatalf("%v not in the kernel", a)
	return 0, 0
}

// readAddr reads a back with a itself as the hint.
func readAddr(t *testing.T, tgt *netnsx.Target, a *items.Address) *items.Address {
	t.Helper()
	got, err := ReadBack(tgt, "", dg.New("hint", a))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if r, ok := it.(*items.Address); ok && r.Name() == a.Name() {
			return r
		}
	}
	t.Fatalf("%v not read back", a)
	return nil
}

// readsBackAs checks that the kernel's address reads back Equal to a.
func readsBackAs(t *testing.T, tgt *netnsx.Target, a *items.Address) {
	t.Helper()
	if got := readAddr(t, tgt, a); !got.Equal(a) {
		t.Errorf("read back %v, want %v", got, a)
	}
}

// setForever makes our address a permanent (as iproute2's `ip addr
// change ... valid_lft forever` would, keeping the mark).
func setForever(t *testing.T, tgt *netnsx.Target, a *items.Address) {
	t.Helper()
	conn, err := openConn(tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.close()
	index, err := conn.ifIndex(a.Dev)
	if err != nil {
		t.Fatal(err)
	}
	p := *a
	p.ValidUntil = time.Time{}
	if err := sendOne(conn, addrRequest(unix.RTM_NEWADDR, unix.NLM_F_REPLACE, &p, index)); err != nil {
		t.Fatal(err)
	}
}
