package nftables

import (
	"slices"

	gnft "github.com/google/nftables"
)

// setTimeout is a dumped set's timeout as the model spells it
// (items.NftSet.Timeout): "" without the timeout flag.
func setTimeout(s *gnft.Set) string {
	if !s.HasTimeout {
		return ""
	}
	return s.Timeout.String()
}

// staticElements are the elements of a dumped set that are the intent's:
// in a set with the timeout flag, an element that carries a timeout was
// added at runtime (by a rule or another tool, items.NftSetTimeout) and
// is the kernel's, neither drift nor deleted.
func staticElements(s *gnft.Set, elems []gnft.SetElement) []gnft.SetElement {
	if !s.HasTimeout {
		return elems
	}
	return slices.DeleteFunc(elems, func(e gnft.SetElement) bool { return e.Timeout != 0 || e.Expires != 0 })
}
