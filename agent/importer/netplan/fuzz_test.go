package netplan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/netagent/netagent/agent/importer"
)

// FuzzImport: no input panics the importer, and what it accepts validates
// (Finish checks) or is refused.
func FuzzImport(f *testing.F) {
	f.Add("network:\n  version: 2\n  ethernets:\n    e0: {addresses: [192.0.2.1/24], routes: [{to: default, via: 192.0.2.254}]}\n")
	f.Add("network:\n  vrfs:\n    v: {table: 5, routing-policy: [{from: 192.0.2.1}]}\n  bonds:\n    b: {interfaces: [e0], parameters: {mode: 802.3ad}}\n")
	f.Add("a: &a [*a, *a]\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body string) {
		p := filepath.Join(dir, "f.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _ = Import([]string{p}, importer.Options{})
		_, _ = Import([]string{p}, importer.Options{SkipUnsupported: true})
	})
}
