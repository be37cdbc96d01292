//go:build !vmtest

package netns_test

import (
	"context"
	"fmt"

	"bytes"
	"encoding/json"
	"github.com/netagent/netagent/configurators/nftables"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"slices"
	"strings"
	"testing"
)

// Adjacent ranges of an interval set (the end key of one is the start
// key of the next) are read back as they were applied: a second apply
// writes nothing, and nft lists both prefixes and the range.
func TestNftablesAdjacentIntervals(t *testing.T) {
	e := cliNewEnv(t)
	intent := e.writeFile("adj.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}],
  "nftables": {"tables": [{"family": "inet", "name": "netagent",
    "sets": [{"name": "nets", "type": "ipv4_addr", "interval": true, "elements": ["10.0.0.0/24", "10.0.1.0/24", "10.0.2.0-10.0.2.9"]}],
    "chains": [{"name": "input", "type": "filter", "hook": "input", "priority": 0, "rules": [{"saddr": "@nets", "verdict": "drop"}]}]}]}}`)
	e.mustRun(0, "apply", intent)
	if res := e.mustRun(0, "apply", intent); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("a second apply wrote: %s", res.stdout)
	}
	if res := e.mustRun(0, "check", intent); strings.Contains(res.stdout, "255.255.255.255") {
		t.Errorf("check reads a merged range: %s", res.stdout)
	}
	var got []string
	for _, o := range nftJSON(e, "set", "inet", "netagent", "nets") {
		raw, ok := o["set"]
		if !ok {
			continue
		}
		var s struct{ Elem []json.RawMessage }
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		for _, el := range s.Elem {
			var b bytes.Buffer
			json.Compact(&b, el)
			got = append(got, b.String())
		}
	}
	want := []string{`{"prefix":{"addr":"10.0.0.0","len":24}}`, `{"prefix":{"addr":"10.0.1.0","len":24}}`, `{"range":["10.0.2.0","10.0.2.9"]}`}
	if !slices.Equal(got, want) {
		t.Errorf("nft lists %q, want %q", got, want)
	}
}

// BenchmarkNftablesDump: a dump of a table of 10k rules in 100 chains,
// and of a table with one interval set of 100k elements (the read-back of
// one table; another writer commits before each, so that it is a dump).
func BenchmarkNftablesDump(b *testing.B) {
	set := &items.NftTable{Family: "inet", Table: "netagent", Sets: []items.NftSet{{Name: "big", Type: "ipv4_addr", Interval: true, Elements: bigSet(100_000)}}}
	for _, tc := range []struct {
		name string
		tbl  *items.NftTable
	}{{"rules10k", nft10k(false)}, {"set100k", set}} {
		b.Run(tc.name, func(b *testing.B) {
			tgt := testns.New(b)
			if err := nftables.NewConfigurator(nftables.NetlinkKernel(tgt, 0)).Create(context.Background(), tc.tbl); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				// Another writer's commit: the read-back cannot reuse the last dump.
				b.StopTimer()
				testns.Exec(b, tgt, "nft", fmt.Sprintf("add table ip bump%d", i))
				b.StartTimer()
				if got, err := nftables.ReadBack(tgt); err != nil || len(got) != 1 {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}
