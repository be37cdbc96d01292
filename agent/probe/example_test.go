package probe_test

import (
	"fmt"

	"github.com/netagent/netagent/agent/probe"
)

func ExampleParse() {
	for _, spec := range []string{"ping:192.0.2.1", "ping:2001:db8::1,count=5,timeout=3s", "tcp:[2001:db8::1]:22", "tcp:2001:db8::1:22", "ping:router.example"} {
		p, err := probe.Parse(spec)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(p)
	}
	// Output:
	// ping:192.0.2.1
	// ping:2001:db8::1,count=5,timeout=3s
	// tcp:[2001:db8::1]:22
	// invalid probe "tcp:2001:db8::1:22": an IPv6 address goes in brackets: tcp:[ADDR]:PORT
	// invalid probe "ping:router.example": host "router.example" is not an IP address (probes resolve no names)
}
