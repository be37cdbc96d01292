package intent

import (
	"fmt"
	"strings"
	"testing"
)

// bigIntent returns an intent with n distinct routes (n < 1<<20).
func bigIntent(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "addresses": ["10.0.0.1/8"]}], "routes": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		v := i * 16
		fmt.Fprintf(&b, `{"to": "172.%d.%d.%d/28", "via": "10.0.0.254", "dev": "eth0", "metric": 100}`, 16+v>>16, v>>8&255, v&255)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func BenchmarkParseValidate100kRoutes(b *testing.B) {
	data := bigIntent(100_000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		in, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		if err := in.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}
