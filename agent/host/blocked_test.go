package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// tItem is a test item: external ones carry a carrier flag that
// dependencies can require.
type tItem struct {
	typ, name string
	external  bool
	carrier   bool
	deps      []dg.Dependency
}

func (i *tItem) Type() string                  { return i.typ }
func (i *tItem) Name() string                  { return i.name }
func (i *tItem) External() bool                { return i.external }
func (i *tItem) Dependencies() []dg.Dependency { return i.deps }
func (i *tItem) String() string                { return i.typ + "/" + i.name }
func (i *tItem) Equal(o dg.Item) bool          { x := o.(*tItem); return i.carrier == x.carrier }

func needs(typ, name string, deps ...dg.Dependency) *tItem {
	return &tItem{typ: typ, name: name, deps: deps}
}

func on(typ, name string) dg.Dependency {
	return dg.Dependency{RequiredItem: dg.ItemRef{Type: typ, Name: name}}
}

func carrierOf(name string) dg.Dependency {
	return dg.Dependency{
		RequiredItem: dg.ItemRef{Type: "link", Name: name},
		MustSatisfy:  func(it dg.Item) bool { return it.(*tItem).carrier },
		Description:  "carrier up",
	}
}

// tConf creates everything but the items named in fail.
type tConf struct{ fail map[string]bool }

func (c tConf) Create(_ context.Context, it dg.Item) error {
	if c.fail[it.Name()] {
		return errors.New("refused")
	}
	return nil
}
func (tConf) Modify(context.Context, dg.Item, dg.Item) error { return nil }
func (tConf) Delete(context.Context, dg.Item) error          { return nil }
func (tConf) NeedsRecreate(dg.Item, dg.Item) bool            { return false }

// Summarize says which blocked items wait for a link: those whose
// blocking dependency (the one the reconciler names) leads to an external
// item, not those behind a failure or a cycle. An item that needs both a
// failed item and a link (behind-both) is not waited for: the link alone
// cannot make it converge.
func TestSummarizeWaitsOnLink(t *testing.T) {
	wan := &tItem{typ: "link", name: "wan0", external: true}
	intended := dg.New("intended",
		wan,
		needs("route", "via-wan", carrierOf("wan0")),
		needs("route", "behind-via-wan", on("route", "via-wan")),
		needs("route", "via-missing", carrierOf("nic9")),
		needs("addr", "refused"),
		needs("route", "behind-refused", on("addr", "refused")),
		needs("route", "behind-both", on("addr", "refused"), on("route", "via-wan")),
		needs("route", "cycle-a", on("route", "cycle-b")),
		needs("route", "cycle-b", on("route", "cycle-a")),
	)
	current := dg.New("current", wan)
	reg := &reconciler.TypeRegistry{}
	for _, typ := range []string{"route", "addr"} {
		if err := reg.Register(typ, tConf{fail: map[string]bool{"refused": true}}); err != nil {
			t.Fatal(err)
		}
	}
	st := reconciler.New(reg).Reconcile(context.Background(), current, intended)
	res := Summarize(st, intended)
	want := map[string]bool{
		"via-wan": true, "behind-via-wan": true, "via-missing": true, "behind-both": false,
		"behind-refused": false, "cycle-a": false, "cycle-b": false,
	}
	seen := map[string]bool{}
	for _, p := range res.Problems {
		if !p.Blocked {
			continue
		}
		seen[p.Ref.Name] = true
		if w, ok := want[p.Ref.Name]; !ok || w != p.WaitsOnLink {
			t.Errorf("%s (%s): WaitsOnLink %v, want %v", p.Ref, p.Reason, p.WaitsOnLink, w)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("route/%s is not reported blocked: %v", name, res.Problems)
		}
	}
}

// A route waiting for the carrier of a link the kernel has not got is
// waiting for a missing NIC only when nothing in the intent brings that
// link: a physical interface found by its name (eth9) is missing; one
// matched by its permanent MAC (mainif, apply renames the NIC it finds)
// and a bridge the intent creates (br0) are not, until the match has
// found no NIC (gone0).
func TestSummarizeMissingNICOnlyWhenNothingBringsIt(t *testing.T) {
	mac := net.HardwareAddr{0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe}
	noMatch := &items.Interface{IfName: "gone0", Kind: items.KindPhysical, Match: &items.NICMatch{MAC: mac}}
	intended := dg.New("intended",
		&items.Interface{IfName: "eth9", Kind: items.KindPhysical},
		&items.Interface{IfName: "mainif", Kind: items.KindPhysical, Match: &items.NICMatch{PermanentMAC: mac}},
		&items.Interface{IfName: "br0", Kind: items.KindBridge, Attrs: &items.BridgeAttrs{}},
		noMatch,
		needs("route", "via-eth9", carrierOf("eth9")),
		needs("route", "via-mainif", carrierOf("mainif")),
		needs("route", "via-br0", carrierOf("br0")),
		needs("route", "via-gone0", carrierOf("gone0")),
	)
	reg := &reconciler.TypeRegistry{}
	for _, typ := range []string{"route", items.TypeInterface} {
		if err := reg.Register(typ, nicConf{}); err != nil {
			t.Fatal(err)
		}
	}
	st := reconciler.New(reg).Reconcile(context.Background(), dg.New("current"), intended)
	want := map[string]string{"via-eth9": "eth9", "via-mainif": "", "via-br0": "", "via-gone0": "gone0"}
	for _, p := range Summarize(st, intended).Problems {
		if p.Ref.Type != "route" {
			continue
		}
		w, ok := want[p.Ref.Name]
		if !ok {
			t.Errorf("unexpected problem %s: %s", p.Ref, p.Reason)
			continue
		}
		delete(want, p.Ref.Name)
		if p.MissingNIC != w {
			t.Errorf("%s (%s): MissingNIC %q, want %q", p.Ref, p.Reason, p.MissingNIC, w)
		}
	}
	if len(want) != 0 {
		t.Errorf("not reported: %v", want)
	}
}

// nicConf creates everything; a matched interface named gone0 finds no NIC.
type nicConf struct{}

func (nicConf) Create(_ context.Context, it dg.Item) error {
	if it.Name() == "gone0" {
		return fmt.Errorf("interface gone0: %w", link.ErrNoMatch)
	}
	return nil
}
func (nicConf) Modify(context.Context, dg.Item, dg.Item) error { return nil }
func (nicConf) Delete(context.Context, dg.Item) error          { return nil }
func (nicConf) NeedsRecreate(dg.Item, dg.Item) bool            { return false }
