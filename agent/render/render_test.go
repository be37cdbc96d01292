package render

import (
	"strings"
	"testing"
)

// The gateway example renders to the items and dependencies of its golden
// file: one item per kernel object, the default route gated by the uplink's
// carrier and ordered after the address that puts its gateway on-link.
func TestRenderGatewayExample(t *testing.T) {
	g := mustRender(t, parseFile(t, "../../examples/gateway.json"))
	golden(t, "gateway.golden", describe(g))
}

// The bonded example: ports of a bond, VLANs on it, routes without a
// device ordered after their gateway's address, and per-interface sysctls
// of interfaces with a dot in the name.
func TestRenderBondedExample(t *testing.T) {
	g := mustRender(t, parseFile(t, "../../examples/bonded.json"))
	golden(t, "bonded.golden", describe(g))
}

// An invalid intent renders nothing and reports every problem with its
// path.
func TestRenderInvalid(t *testing.T) {
	in := parse(t, `{"version": 1,
		"interfaces": [{"name": "v", "type": "vlan", "vlan": {"parent": "eth9", "id": 5000}}],
		"routes": [{"to": "10.0.0.0/8"}]}`)
	g, err := Render(in)
	if g != nil {
		t.Errorf("got a graph for an invalid intent")
	}
	want := strings.Join([]string{
		`interfaces[0].vlan.parent: interface "eth9" is not defined`,
		`interfaces[0].vlan.id: 5000 is out of range 1-4094`,
		`routes[0]: a unicast route needs via or dev`,
	}, "\n")
	if got := errorLines(err); got != want {
		t.Errorf("errors:\n%s\nwant:\n%s", got, want)
	}
}

// Valid intents that the item model cannot express are rejected by Render
// with their paths, never rendered into items that would wait forever: a
// veth peer used as a device, a per-interface sysctl of an interface the
// intent does not declare.
func TestRenderRejectsWhatItemsCannotExpress(t *testing.T) {
	in := parse(t, `{"version": 1,
		"interfaces": [{"name": "v0", "type": "veth", "veth": {"peer": "v0p"}}],
		"routes": [{"to": "10.0.0.0/8", "dev": "v0p"}],
		"neighbors": [{"dev": "v0p", "ip": "10.0.0.9", "mac": "02:00:00:00:00:09"}],
		"sysctls": {"net.ipv4.conf.eth7.rp_filter": "1", "net.ipv4.conf.v0p.forwarding": "1", "net.ipv4.conf.all.forwarding": "1"}}`)
	_, err := Render(in)
	want := strings.Join([]string{
		`routes[0].dev: "v0p" is the peer of veth "v0", which netagent cannot use as a device yet: declare the pair from the other end, or use "v0"`,
		`neighbors[0].dev: "v0p" is the peer of veth "v0", which netagent cannot use as a device yet: declare the pair from the other end, or use "v0"`,
		`sysctls["net.ipv4.conf.eth7.rp_filter"]: interface "eth7" is not defined`,
		`sysctls["net.ipv4.conf.v0p.forwarding"]: "v0p" is the peer of veth "v0", which netagent cannot use as a device yet: declare the pair from the other end, or use "v0"`,
	}, "\n")
	if got := errorLines(err); got != want {
		t.Errorf("errors:\n%s\nwant:\n%s", got, want)
	}
}

// Rendering the same intent twice gives equal graphs (same refs, equal
// items), so re-rendering an unchanged intent costs the reconciler nothing.
func TestRenderDeterministic(t *testing.T) {
	a := describe(mustRender(t, parseFile(t, "../../examples/gateway.json")))
	for range 5 {
		if b := describe(mustRender(t, parseFile(t, "../../examples/gateway.json"))); a != b {
			t.Fatalf("two renders differ:\n%s\n---\n%s", a, b)
		}
	}
}
