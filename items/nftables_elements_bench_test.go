package items

import (
	"fmt"
	"math/rand/v2"
	"slices"
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

// canonicalIPv4 accepts exactly what netip spells, and parses it alike.
func TestCanonicalIPv4(t *testing.T) {
	for _, e := range []string{"0.0.0.0", "10.1.2.3", "255.255.255.255", "1.2.3.04", "1.2.3", "1.2.3.4.5", "1.2.3.256",
		"01.2.3.4", "1..2.3", ".1.2.3", "1.2.3.", "1.2.3.4/32", "::1", "1.2.3.-4", "", "a.b.c.d", "1.2.3.4 ", "00.1.2.3"} {
		a, ok := canonicalIPv4(e)
		want, err := ParseNftElement("ipv4_addr", false, e)
		canon := err == nil && NftElementString("ipv4_addr", want) == e
		if ok != canon {
			t.Errorf("canonicalIPv4(%q) ok %v, want %v", e, ok, canon)
			continue
		}
		if ok && (want.Lo[0] != byte(a>>24) || want.Lo[1] != byte(a>>16) || want.Lo[2] != byte(a>>8) || want.Lo[3] != byte(a)) {
			t.Errorf("canonicalIPv4(%q) = %x, want %v", e, a, want.Lo)
		}
	}
}

func TestNftElementsAscending(t *testing.T) {
	for _, c := range []struct {
		typ   string
		elems []string
		want  bool
	}{
		{"ipv4_addr", nil, true},
		{"ipv4_addr", []string{"10.0.0.2", "10.0.0.10"}, true},
		{"ipv4_addr", []string{"10.0.0.10", "10.0.0.2"}, false},
		{"ipv4_addr", []string{"10.0.0.1", "10.0.0.1"}, false},
		{"ipv4_addr", []string{"10.0.0.1", "x"}, false},
		{"ipv4_addr", []string{"10.0.0.1", "::1"}, false},
		{"inet_service", []string{"22", "443"}, true},
		{"inet_service", []string{"443", "22"}, false},
	} {
		if got := NftElementsAscending(c.typ, false, c.elems); got != c.want {
			t.Errorf("NftElementsAscending(%s, %q) = %v, want %v", c.typ, c.elems, got, c.want)
		}
	}
}

func TestNftElementsDiff(t *testing.T) {
	del, add, ok := NftElementsDiff("ipv4_addr", true, []string{"10.0.0.0/24", "10.0.2.0/24", "10.0.3.1"}, []string{"10.0.0.0/25", "10.0.1.0/24", "10.0.3.1"})
	if !ok || !slices.Equal(del, []string{"10.0.0.0/24", "10.0.2.0/24"}) || !slices.Equal(add, []string{"10.0.0.0/25", "10.0.1.0/24"}) {
		t.Errorf("deleted %v, added %v (%v)", del, add, ok)
	}
	if _, _, ok := NftElementsDiff("ipv4_addr", false, []string{"10.0.0.2", "10.0.0.1"}, nil); ok {
		t.Error("took elements out of order")
	}
	if _, _, ok := NftElementsDiff("ipv4_addr", false, nil, []string{"10.0.0.1", "10.0.0.1"}); ok {
		t.Error("took an element twice")
	}
}
