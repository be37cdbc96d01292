package render_test

import (
	"fmt"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
)

// Render an uplink with an address and a default route: the route waits
// for the uplink's carrier and for the address that puts its gateway
// on-link.
func ExampleRender() {
	in, _ := intent.Parse([]byte(`{"version": 1,
		"interfaces": [{"name": "eth0", "type": "physical", "addresses": ["192.0.2.10/24"]}],
		"routes": [{"to": "default", "via": "192.0.2.1", "dev": "eth0", "metric": 100}]}`))
	g, err := render.Render(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ref := range g.Refs() {
		fmt.Println(ref)
		for _, dep := range g.Dependencies(ref) {
			fmt.Println("    needs", dep)
		}
	}
	// Output:
	// address/eth0/192.0.2.10/24
	//     needs interface/eth0
	// interface/eth0
	//     needs link/eth0 (present)
	// route/main 0.0.0.0/0 metric 100
	//     needs interface/eth0 (device)
	//     needs link/eth0 (carrier up)
	//     needs address/eth0/192.0.2.10/24 (gateway on-link)
}

// Files render into one subgraph each; an object that two files define
// is reported on both.
func ExampleRenderFiles() {
	a, _ := intent.Parse([]byte(`{"version": 1, "interfaces": [{"name": "br0", "type": "bridge"}]}`))
	b, _ := intent.Parse([]byte(`{"version": 1, "sysctls": {"net.ipv4.ip_forward": "1"}}`))
	g, _ := render.RenderFiles(map[string]*intent.Intent{"a.json": a, "b.json": b})
	for _, sub := range g.SubGraphs() {
		fmt.Println(render.FileOfSubgraph(sub.Name()), sub.Refs())
	}
	_, err := render.RenderFiles(map[string]*intent.Intent{"a.json": a, "c.json": a})
	for _, fe := range intent.FieldErrors(err) {
		fmt.Println(fe)
	}
	// Output:
	// a.json [interface/br0]
	// b.json [sysctl/net.ipv4.ip_forward]
	// a.json: interfaces[0]: interface "br0" is also defined at interfaces[0] in c.json
	// c.json: interfaces[0]: interface "br0" is also defined at interfaces[0] in a.json
}
