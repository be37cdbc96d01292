package netns_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"testing"

	"github.com/netagent/netagent/configurators/l3"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
)

// l3Env is a throwaway namespace with a veth pair, both ends up: "up0"
// plays the uplink (10.0.0.2/24 and 2001:db8::2/64 live on "peer0", the
// gateway side, when a test adds them), with the l3 configurators
// registered for it.
type l3Env struct {
	t   *testing.T
	tgt *netnsx.Target
	reg *reconciler.TypeRegistry
	ctx context.Context
}

func l3NewEnv(t *testing.T) *l3Env {
	t.Helper()
	tgt := testns.New(t)
	la := netlink.NewLinkAttrs()
	la.Name = "up0"
	if err := tgt.NL.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "peer0"}); err != nil {
		t.Fatalf("adding veth: %v", err)
	}
	for _, name := range []string{"up0", "peer0"} {
		l, err := tgt.NL.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := tgt.NL.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	reg := &reconciler.TypeRegistry{}
	if err := l3.Register(reg, tgt); err != nil {
		t.Fatal(err)
	}
	return &l3Env{t: t, tgt: tgt, reg: reg, ctx: context.Background()}
}

// ip runs `ip args...` in the namespace, failing the test on error.
func (e *l3Env) ip(args ...string) string {
	e.t.Helper()
	return testns.Exec(e.t, e.tgt, "ip", args...)
}

// ipJSON runs `ip -j args...` and decodes the list it prints.
func (e *l3Env) ipJSON(args ...string) []map[string]any {
	e.t.Helper()
	out := e.ip(append([]string{"-j"}, args...)...)
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		e.t.Fatalf("ip -j %v: %v\n%s", args, err, out)
	}
	return list
}

func (e *l3Env) cfg(item dg.Item) reconciler.Configurator {
	e.t.Helper()
	c := e.reg.Configurator(item)
	if c == nil {
		e.t.Fatalf("no configurator for %s", item.Type())
	}
	return c
}

func (e *l3Env) create(item dg.Item) {
	e.t.Helper()
	if err := e.cfg(item).Create(e.ctx, item); err != nil {
		e.t.Fatalf("create %s: %v", dg.Ref(item), err)
	}
}

func (e *l3Env) modify(old, new dg.Item) {
	e.t.Helper()
	if err := e.cfg(new).Modify(e.ctx, old, new); err != nil {
		e.t.Fatalf("modify %s: %v", dg.Ref(new), err)
	}
}

func (e *l3Env) delete(item dg.Item) {
	e.t.Helper()
	if err := e.cfg(item).Delete(e.ctx, item); err != nil {
		e.t.Fatalf("delete %s: %v", dg.Ref(item), err)
	}
}

// mustNotOwn checks that err wraps l3.ErrNotOwned.
func l3MustNotOwn(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, l3.ErrNotOwned) {
		t.Fatalf("%s: got %v, want an error wrapping ErrNotOwned", what, err)
	}
}

// readBack runs l3.ReadBack and indexes the items by reference.
func (e *l3Env) readBack(hint *dg.Graph) map[dg.ItemRef]dg.Item {
	e.t.Helper()
	got, err := l3.ReadBack(e.tgt, "", hint)
	if err != nil {
		e.t.Fatalf("read-back: %v", err)
	}
	m := make(map[dg.ItemRef]dg.Item, len(got))
	for _, it := range got {
		if _, dup := m[dg.Ref(it)]; dup {
			e.t.Errorf("read-back returned %s twice", dg.Ref(it))
		}
		m[dg.Ref(it)] = it
	}
	return m
}

// mustReadBack checks that read-back (with want as the hint) holds exactly
// want among the items of want's types.
func (e *l3Env) mustReadBack(want ...dg.Item) {
	e.t.Helper()
	got := e.readBack(dg.New("hint", want...))
	types := map[string]bool{}
	for _, w := range want {
		types[w.Type()] = true
		g, ok := got[dg.Ref(w)]
		switch {
		case !ok:
			e.t.Errorf("read-back lacks %s", dg.Ref(w))
		case !g.Equal(w):
			e.t.Errorf("read-back of %s:\n got %s\nwant %s", dg.Ref(w), g, w)
		}
	}
	for ref := range got {
		if types[ref.Type] && !slices.ContainsFunc(want, func(w dg.Item) bool { return dg.Ref(w) == ref }) {
			e.t.Errorf("read-back has unexpected %s", ref)
		}
	}
}

// mustReadBackNone checks that read-back finds nothing of these types.
func (e *l3Env) mustReadBackNone(types ...string) {
	e.t.Helper()
	for ref := range e.readBack(nil) {
		if slices.Contains(types, ref.Type) {
			e.t.Errorf("read-back still has %s", ref)
		}
	}
}

func l3Prefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func l3Addr(s string) netip.Addr     { return netip.MustParseAddr(s) }

func l3MAC(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

// l3Find returns the entries of list whose fields equal every pair of kv.
func l3Find(list []map[string]any, kv ...string) []map[string]any {
	var out []map[string]any
	for _, m := range list {
		ok := true
		for i := 0; i+1 < len(kv); i += 2 {
			if l3Str(m[kv[i]]) != kv[i+1] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// l3Str renders a JSON value the way `ip -j` spelled it.
func l3Str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
