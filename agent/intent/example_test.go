package intent_test

import (
	"fmt"

	"github.com/netagent/netagent/agent/intent"
)

// Parse one intent, validate it and list every problem with its path.
func Example() {
	in, err := intent.Parse([]byte(`{
		"version": 1,
		"interfaces": [
			{"name": "eth0", "type": "physical", "addresses": ["192.0.2.10/24"]},
			{"name": "eth0.5000", "type": "vlan", "vlan": {"parent": "eth0", "id": 5000}},
			{"name": "br0", "type": "bridge", "vlan": {"parent": "eth0", "id": 7}}
		],
		"routes": [{"to": "198.51.100.0/24", "via": "2001:db8::1", "dev": "eth9"}]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, fe := range intent.FieldErrors(in.Validate()) {
		fmt.Println(fe)
	}
	// Output:
	// interfaces[1].vlan.id: 5000 is out of range 1-4094
	// interfaces[2].vlan: not allowed for type "bridge"
	// routes[0].via: 2001:db8::1 is IPv6, but to 198.51.100.0/24 is IPv4
	// routes[0].dev: interface "eth9" is not defined
}

// Merge two files that both define eth0: the conflict is reported on both,
// and the merged intent keeps neither eth0 but everything else.
func ExampleMerge() {
	a, _ := intent.Parse([]byte(`{"version": 1, "interfaces": [
		{"name": "eth0", "type": "physical"}, {"name": "br0", "type": "bridge"}]}`))
	b, _ := intent.Parse([]byte(`{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "mtu": 9000}]}`))
	merged, err := intent.Merge(map[string]*intent.Intent{"a.json": a, "b.json": b})
	for _, fe := range intent.FieldErrors(err) {
		fmt.Println(fe)
	}
	for _, ifc := range merged.Interfaces {
		fmt.Println("kept", ifc.Name, "from", ifc.Origin)
	}
	// Output:
	// a.json: interfaces[0]: interface "eth0" is also defined at interfaces[0] in b.json
	// b.json: interfaces[0]: interface "eth0" is also defined at interfaces[0] in a.json
	// kept br0 from interfaces[1] in a.json
}

func ExampleSplitRule() {
	args, err := intent.SplitRule(`-m comment --comment "allow \"lan\"" -j ACCEPT`)
	fmt.Printf("%q %v\n", args, err)
	_, err = intent.SplitRule(`-m comment --comment 'unfinished`)
	fmt.Println(err)
	// Output:
	// ["-m" "comment" "--comment" "allow \"lan\"" "-j" "ACCEPT"] <nil>
	// unbalanced single quote at column 22
}
