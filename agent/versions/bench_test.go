package versions

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
)

// routesDoc is an intent of n routes.
func routesDoc(n, salt int) []byte {
	var b strings.Builder
	b.WriteString(`{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]}], "routes": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"to": "10.%d.%d.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": %d}`, i>>8&255, i&255, salt)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// BenchmarkRecord100kRoutes: what recording a version of 100k routes
// parsed already costs (as apply and the daemon do): merge, marshal,
// digest, and the durable write.
func BenchmarkRecord100kRoutes(b *testing.B) {
	s := Open(b.TempDir(), 3)
	var docs []map[string]*intent.Intent
	for salt := range 2 {
		in, err := intent.Parse(routesDoc(100_000, salt))
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, map[string]*intent.Intent{"r.json": in})
	}
	b.Run("version", func(b *testing.B) {
		for i := range b.N {
			if _, err := NewParsed("bench", docs[i%2]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("version+write", func(b *testing.B) {
		for i := range b.N {
			v, err := NewParsed("bench", docs[i%2])
			if err == nil {
				_, _, err = s.Write(v, Any)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
