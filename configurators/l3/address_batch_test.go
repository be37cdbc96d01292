package l3

import (
	"errors"
	"fmt"
	"testing"

	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// dumpCounting counts the address dumps made over a fake kernel's conn.
type dumpCounting struct {
	*FakeKernel
	dumps *int
}

func (d dumpCounting) dump(req *nl.NetlinkRequest, resType uint16) ([][]byte, error) {
	if req.Type == unix.RTM_GETADDR {
		*d.dumps++
	}
	return d.FakeKernel.dump(req, resType)
}

func createOps(as ...*items.Address) []reconciler.BatchOp {
	ops := make([]reconciler.BatchOp, len(as))
	for i, a := range as {
		ops[i] = reconciler.BatchOp{Op: reconciler.OpCreate, New: a}
	}
	return ops
}

// TestFakeAddressBatch: a batch of creates dumps the addresses twice in
// all (before the adds and to check the marks), whatever its size, and
// answers each create as Create does: absent → added with the mark; ours
// as wanted → no write; ours with another label → replaced; someone
// else's → ErrNotOwned; a missing device → ErrNoDevice.
func TestFakeAddressBatch(t *testing.T) {
	e := newFakeEnv(t)
	dumps := 0
	cfg := &addressConfigurator{nlh: e.k, open: func() (rawOps, error) {
		c, err := e.k.open()
		return dumpCounting{c.(*FakeKernel), &dumps}, err
	}, promotes: e.k.promotes}
	var fresh []*items.Address
	for i := range 50 {
		fresh = append(fresh, &items.Address{Dev: "up0", Prefix: pfx(fmt.Sprintf("10.%d.0.1/24", i))},
			&items.Address{Dev: "up1", Prefix: pfx(fmt.Sprintf("2001:db8:%x::1/64", i))})
	}
	for i, err := range cfg.ApplyBatch(ctx, createOps(fresh...)) {
		if err != nil {
			t.Errorf("create %s: %v", fresh[i].Name(), err)
		}
	}
	if dumps != 2 {
		t.Errorf("a batch of %d creates dumped the addresses %d times, want 2", len(fresh), dumps)
	}
	for _, a := range fresh {
		if k, ok := e.k.addrOn(a.Dev, a.Prefix.String()); !ok || !k.owned() {
			t.Errorf("%s: kernel address %+v (%v)", a.Name(), k, ok)
		}
	}
	if n := e.writes(func() {
		for i, err := range cfg.ApplyBatch(ctx, createOps(fresh...)) {
			if err != nil {
				t.Errorf("second create %s: %v", fresh[i].Name(), err)
			}
		}
	}); n != 0 {
		t.Errorf("second batch sent %d writes, want 0", n)
	}

	e.k.addAddr("up0", "192.0.2.10/24", 0) // an administrator's
	relabel := &items.Address{Dev: "up0", Prefix: fresh[0].Prefix, Label: "up0:web"}
	mixed := []*items.Address{
		relabel,
		{Dev: "up0", Prefix: pfx("192.0.2.10/24")},
		{Dev: "gone0", Prefix: pfx("192.0.2.11/24")},
		{Dev: "up1", Prefix: pfx("198.51.100.1/24")},
	}
	errs := cfg.ApplyBatch(ctx, createOps(mixed...))
	if errs[0] != nil {
		t.Errorf("relabel: %v", errs[0])
	}
	if k, _ := e.k.addrOn("up0", fresh[0].Prefix.String()); k.label != "up0:web" || !k.owned() {
		t.Errorf("after the relabel: %+v", k)
	}
	wantNotOwned(t, "create over an administrator's address", errs[1])
	if !errors.Is(errs[2], ErrNoDevice) {
		t.Errorf("create on a missing device: %v", errs[2])
	}
	if errs[3] != nil {
		t.Errorf("create beside the failures: %v", errs[3])
	}
}

// TestFakeAddressBatchNoMark: a kernel that drops IFA_PROTO fails every
// create of a batch with ErrNoMark and leaves none of the addresses.
func TestFakeAddressBatchNoMark(t *testing.T) {
	e := newFakeEnv(t)
	e.k.dropMarks = true
	as := []*items.Address{{Dev: "up0", Prefix: pfx("192.0.2.10/24")}, {Dev: "up1", Prefix: pfx("2001:db8::1/64")}}
	for i, err := range e.addr.(reconciler.BatchConfigurator).ApplyBatch(ctx, createOps(as...)) {
		if !errors.Is(err, ErrNoMark) {
			t.Errorf("create %s: %v, want ErrNoMark", as[i].Name(), err)
		}
		if _, ok := e.k.addrOn(as[i].Dev, as[i].Prefix.String()); ok {
			t.Errorf("the unmarked %s was left", as[i].Name())
		}
	}
}
