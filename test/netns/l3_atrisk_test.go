//go:build !vmtest

package netns_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/items"
)

// ForeignAtRisk saves the same objects whether the kernel filters its
// dumps by interface (a few links) or it filters them itself (many):
// someone else's routes through the links and permanent neighbours on
// them, not netagent's (proto 211), not those of other links, not the
// kernel's subnet routes. RestoreForeign puts back those a recreated
// link lost, on its new index, and leaves those still there alone.
func TestForeignAtRiskAndRestore(t *testing.T) {
	e := l3NewEnv(t)
	var many []string
	for i := range 10 {
		name := fmt.Sprintf("v%d", i)
		e.ip("link", "add", name, "type", "veth", "peer", "name", name+"p")
		e.ip("link", "set", name, "up")
		e.ip("link", "set", name+"p", "up")
		many = append(many, name)
	}
	e.ip("addr", "add", "10.7.0.1/24", "dev", "v7")
	for _, cmd := range [][]string{
		{"route", "add", "10.70.0.0/16", "via", "10.7.0.9", "dev", "v7", "proto", "static"},
		{"route", "add", "10.71.0.0/16", "dev", "v7", "table", "300"},
		{"route", "add", "10.72.0.0/16", "dev", "v7", "proto", "211"},
		{"route", "add", "10.73.0.0/16", "dev", "v3"},
		{"-6", "route", "add", "fd70::/48", "dev", "v7", "metric", "5"},
		{"neigh", "add", "10.7.0.9", "lladdr", "02:00:00:00:07:09", "dev", "v7", "nud", "permanent"},
		{"neigh", "add", "10.7.0.8", "lladdr", "02:00:00:00:07:08", "dev", "v7", "nud", "permanent", "proto", "211"},
	} {
		e.ip(cmd...)
	}
	describe := func(objs []l3.ForeignObject) []string {
		var out []string
		for _, o := range objs {
			msg := o.Msg
			if o.Kind == items.TypeNeighbor {
				msg = msg[:12+8] // the ndmsg and an IPv4 NDA_DST: not the cache's timestamps
			}
			out = append(out, fmt.Sprintf("%s %v %x", o.Kind, o.Devs, msg))
		}
		slices.Sort(out)
		return out
	}
	few, err := l3.ForeignAtRisk(e.tgt, []string{"v7", "gone0"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := l3.ForeignAtRisk(e.tgt, append(many, "gone0"))
	if err != nil {
		t.Fatal(err)
	}
	var onV7 []l3.ForeignObject
	for _, o := range all {
		if slices.Contains(o.Devs, "v7") {
			onV7 = append(onV7, o)
		}
	}
	if !slices.Equal(describe(few), describe(onV7)) {
		t.Errorf("filtered by the kernel:\n%s\nfiltered here:\n%s", strings.Join(describe(few), "\n"), strings.Join(describe(onV7), "\n"))
	}
	kinds := map[string]int{}
	for _, o := range few {
		kinds[o.Kind]++
	}
	// 10.70, 10.71, fd70::/48 and the ff00::/8 of v7; 10.7.0.9 and the
	// kernel's NOARP multicast entries, if any: at least one neighbour.
	if kinds[items.TypeRoute] != 4 || kinds[items.TypeNeighbor] < 1 {
		t.Errorf("saved %v:\n%s", kinds, strings.Join(describe(few), "\n"))
	}
	// Sorted: a route added again is listed after the others of its table.
	show := func(args ...string) string {
		lines := strings.Split(strings.TrimSpace(e.ip(args...)), "\n")
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	before4, before6 := show("-4", "route", "show", "table", "all"), show("-6", "route", "show", "table", "all")
	beforeN := show("neigh", "show", "nud", "permanent")
	e.ip("link", "del", "v7")
	e.ip("link", "add", "v7", "type", "veth", "peer", "name", "v7p")
	e.ip("link", "set", "v7", "up")
	e.ip("link", "set", "v7p", "up")
	e.ip("addr", "add", "10.7.0.1/24", "dev", "v7")
	e.ip("neigh", "add", "10.7.0.8", "lladdr", "02:00:00:00:07:08", "dev", "v7", "nud", "permanent", "proto", "211")
	e.ip("route", "add", "10.72.0.0/16", "dev", "v7", "proto", "211")
	n, err := l3.RestoreForeign(e.tgt, few)
	if err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Errorf("restored %d objects, want at least the 3 routes and the neighbour", n)
	}
	if got := show("-4", "route", "show", "table", "all"); got != before4 {
		t.Errorf("IPv4 routes:\n%s\nwant:\n%s", got, before4)
	}
	if got := show("-6", "route", "show", "table", "all"); got != before6 {
		t.Errorf("IPv6 routes:\n%s\nwant:\n%s", got, before6)
	}
	if got := show("neigh", "show", "nud", "permanent"); got != beforeN {
		t.Errorf("neighbours:\n%s\nwant:\n%s", got, beforeN)
	}
	if n, err := l3.RestoreForeign(e.tgt, few); err != nil || n != 0 {
		t.Errorf("restoring again added %d (%v), want nothing", n, err)
	}
}
