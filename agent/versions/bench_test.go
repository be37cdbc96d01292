package versions

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
)

// routesDoc is an intent of n distinct routes.
func routesDoc(n, salt int) []byte {
	var b strings.Builder
	b.WriteString(`{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]}], "routes": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"to": "%d.%d.%d.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": %d}`, 10+i>>16, i>>8&255, i&255, salt)
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
	for salt := range 4 {
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
	// The daemon's path: a long-lived store, the version of its
	// accepted documents recorded on every change.
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
	// The daemon's path, every intent a new one: four intents in turn,
	// three versions kept, so that no kept version holds the intent
	// written (with two, a store that keeps an intent once per digest
	// writes none).
	b.Run("version+write/distinct", func(b *testing.B) {
		s := Open(b.TempDir(), 3)
		defer s.Close()
		for i := range b.N {
			v, err := NewParsed("bench", docs[i%4])
			if err == nil {
				_, _, err = s.Write(v, Any)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	// The one-shot CLI's path: a fresh store, the current version
	// (100k routes) on disk.
	b.Run("version+write/fresh", func(b *testing.B) {
		for i := range b.N {
			v, err := NewParsed("bench", docs[i%2])
			if err == nil {
				fresh := Open(s.stateDir, 3)
				_, _, err = fresh.Write(v, Any)
				fresh.Close()
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	// A no-op apply: the one-shot CLI's path, the version unchanged.
	b.Run("version+write/unchanged", func(b *testing.B) {
		for range b.N {
			v, err := NewParsed("bench", docs[0])
			if err == nil {
				fresh := Open(s.stateDir, 3)
				_, _, err = fresh.Write(v, Any)
				fresh.Close()
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	// netagent history: three versions of 100k routes.
	b.Run("list", func(b *testing.B) {
		for range b.N {
			fresh := Open(s.stateDir, 3)
			if _, err := fresh.List(); err != nil {
				b.Fatal(err)
			}
			fresh.Close()
		}
	})
}

// BenchmarkRecord100kRoutesTwoFiles: the daemon's documents in two
// files (50k routes each, no object in both): WithoutConflicts and Merge
// compare them.
func BenchmarkRecord100kRoutesTwoFiles(b *testing.B) {
	var docs []map[string]*intent.Intent
	for salt := range 2 {
		all := routesDoc(100_000, salt)
		in, err := intent.Parse(all)
		if err != nil {
			b.Fatal(err)
		}
		second := *in
		second.Interfaces = nil
		second.Routes = in.Routes[50_000:]
		first := *in
		first.Routes = in.Routes[:50_000]
		docs = append(docs, map[string]*intent.Intent{"a.json": &first, "b.json": &second})
	}
	for i := range b.N {
		if _, err := NewParsed("bench", docs[i%2]); err != nil {
			b.Fatal(err)
		}
	}
}
