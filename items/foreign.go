package items

import (
	dg "github.com/netagent/netagent/depgraph"
)

// TypeForeign is the type of Foreign items.
const TypeForeign = "foreign"

// Foreign is an external item: a route or a rule in the kernel that
// netagent does not own (another protocol) or cannot express (a tos, a
// selector, an action or an attribute no item has), read back so that
// `show` lists it and `check` can name it when it holds an intended item's
// identity. netagent never creates, changes or deletes one, and no item
// depends on one. The kernel's own objects (protocol kernel: the prefix
// routes of addresses, the local table, the default rules) are not read
// back.
type Foreign struct {
	// Kind is TypeRoute or TypeRule.
	Kind string
	// Desc describes the object `ip` style, with its protocol; it is the
	// Name, made unique by read-back.
	Desc string
	// Holds is the ref of the item whose identity the object has (a
	// route's table, destination and metric; a rule's every selector), or
	// the zero ref when no item can have it (a route with a tos).
	Holds dg.ItemRef
	// Owned: the object carries netagent's mark, but no item can describe
	// it (netagent did not write it so; someone changed or copied it).
	Owned bool
	// Why says, for an object read to be imported (the configurators'
	// ReadOthers), why no item describes it; "" otherwise.
	Why string
}

var _ dg.Item = (*Foreign)(nil)

// Type returns TypeForeign.
func (f *Foreign) Type() string { return TypeForeign }

// Name returns "<kind> <desc>".
func (f *Foreign) Name() string { return f.Kind + " " + f.Desc }

// External returns true: foreign objects are observed only.
func (f *Foreign) External() bool { return true }

// Dependencies returns none.
func (f *Foreign) Dependencies() []dg.Dependency { return nil }

// Equal compares every field.
func (f *Foreign) Equal(other dg.Item) bool {
	o, ok := other.(*Foreign)
	return ok && o != nil && *f == *o
}

// String describes the object in one line.
func (f *Foreign) String() string {
	s := "foreign " + f.Name()
	if f.Owned {
		s += " (marked netagent's, but no item can describe it)"
	}
	return s
}
