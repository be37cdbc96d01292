package items

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchSet is a set of n IPv4 addresses in a random order, as an intent
// may list them.
func benchSet(n int) NftSet {
	r := rand.New(rand.NewPCG(1, 2))
	s := NftSet{Name: "s", Type: "ipv4_addr"}
	for _, i := range r.Perm(n) {
		s.Elements = append(s.Elements, fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	return s
}

// BenchmarkCanonicalElements is the canonical form of 100k unsorted
// elements (the intent's), and of 100k in canonical form (a read-back's).
func BenchmarkCanonicalElements(b *testing.B) {
	s := benchSet(100000)
	b.Run("unsorted", func(b *testing.B) {
		for b.Loop() {
			canonicalElements(s)
		}
	})
	c := canonicalSet(s)
	b.Run("canonical", func(b *testing.B) {
		for b.Loop() {
			canonicalElements(c)
		}
	})
}
