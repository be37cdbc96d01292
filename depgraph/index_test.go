package depgraph

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// The index agrees with a Go map through random adds and removes, with
// colliding hashes and runs that wrap around the end of the table.
func TestIndexAgreesWithAMap(t *testing.T) {
	for _, collide := range []bool{false, true} {
		t.Run(fmt.Sprint("collide=", collide), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			hash := func(typ uint16, name string) uint32 {
				if collide { // few distinct hashes, many near the table's end
					return 60 + uint32(hashRef(typ, name)%8)
				}
				return hashRef(typ, name)
			}
			var x index
			want := map[ItemRef]*Node{}
			types := []string{"a", "b"}
			for step := range 20000 {
				typ := uint16(rng.IntN(2))
				name := fmt.Sprint(rng.IntN(300))
				ref := ItemRef{types[typ], name}
				h := hash(typ, name)
				n := x.get(typ, name, h)
				if n != want[ref] {
					t.Fatalf("step %d: get %v = %p, want %p", step, ref, n, want[ref])
				}
				if n == nil {
					n = &Node{typ: typ, name: name}
					x.add(n, h)
					want[ref] = n
				} else if rng.IntN(2) == 0 {
					x.remove(n, h)
					delete(want, ref)
				}
				if step%997 == 0 {
					x.reserve(rng.IntN(500))
				}
				if x.count != len(want) {
					t.Fatalf("step %d: count %d, want %d", step, x.count, len(want))
				}
			}
			for ref, n := range want {
				typ := uint16(0)
				if ref.Type == "b" {
					typ = 1
				}
				if got := x.get(typ, ref.Name, hash(typ, ref.Name)); got != n {
					t.Fatalf("get %v = %p, want %p", ref, got, n)
				}
			}
		})
	}
}

// A node's size is a figure of the engine's memory (two graphs of a node
// per item): it only shrinks.
func TestNodeSize(t *testing.T) {
	if s := unsafe.Sizeof(Node{}); s > 128 {
		t.Errorf("a node is %d bytes, more than 128", s)
	}
}
