package depgraph

import (
	"fmt"
	"strings"
)

// Item is one object of the modelled state: a network interface, a route, a
// file, a process. Items are values: a graph never mutates them, and a new
// version of an object is a new Item put over the old one.
type Item interface {
	// Type names the kind of item ("route", "link"). It selects the
	// configurator that manages items of this kind.
	Type() string
	// Name identifies the item among the items of its type.
	Name() string
	// Equal reports whether other (an item of the same type and name)
	// describes exactly the same state. A false answer makes the reconciler
	// modify or recreate the item. An item is equal to itself: the graph
	// and the reconciler do not ask when both are the same value (items
	// are compared with ==, so an Item's dynamic type must be comparable,
	// as pointers are).
	Equal(other Item) bool
	// External reports whether the item is only observed, never changed:
	// the reconciler neither creates, modifies nor deletes it, but its
	// presence and value decide whether its dependants may exist.
	External() bool
	// String is a one-line human description of the item's value.
	String() string
	// Dependencies lists what must exist before this item can be created.
	// The graph calls it once per Put and keeps the result, so it must be
	// a pure function of the item's value.
	Dependencies() []Dependency
}

// ItemRef identifies an item: its type and name. The zero ItemRef refers to
// nothing.
type ItemRef struct {
	Type string
	Name string
}

// Ref returns the reference of item.
func Ref(item Item) ItemRef { return ItemRef{Type: item.Type(), Name: item.Name()} }

// String renders the reference as "type/name".
func (r ItemRef) String() string { return r.Type + "/" + r.Name }

// Compare orders references by type, then name. It is the order in which
// graphs are iterated and in which the reconciler logs operations.
func (r ItemRef) Compare(o ItemRef) int {
	if c := strings.Compare(r.Type, o.Type); c != 0 {
		return c
	}
	return strings.Compare(r.Name, o.Name)
}

// Dependency says that the dependant item can only exist while the required
// item exists (is created, in the current state) and, when MustSatisfy is set,
// while the predicate holds for the required item's current value.
type Dependency struct {
	// RequiredItem is the item that must exist first.
	RequiredItem ItemRef
	// MustSatisfy, if not nil, must return true for the current value of the
	// required item. When it turns false the dependant is withdrawn (deleted)
	// and when it turns true again the dependant is created again.
	MustSatisfy func(required Item) bool
	// Description explains the requirement to a human ("link must be up").
	// It appears in "blocked" reasons.
	Description string
	// RecreateWhenModified asks for the dependant to be deleted before the
	// required item is modified and created again afterwards.
	RecreateWhenModified bool
}

// String describes the dependency for status messages.
func (d Dependency) String() string {
	if d.Description != "" {
		return fmt.Sprintf("%s (%s)", d.RequiredItem, d.Description)
	}
	return d.RequiredItem.String()
}

// Conflicter is an optional interface of an Item whose identity in the
// managed system is wider than its reference: two items with different
// references that the managed system cannot hold at once (an IPv6 address
// under two prefix lengths: the kernel keys it by the address alone; a
// veth whose peer takes the name of another interface).
//
// Two items conflict when they share a key. The reconciler creates a new
// item before it deletes an old one it no longer wants (make before
// break), except when the two conflict: then the old one is deleted first.
// An item whose reference already is its whole identity in the system (a
// route named by table, destination and metric) need not implement it.
//
// A key names the item's kind as well ("address eth0 2001:db8::1",
// "link veth0"), so that items of different types conflict only when
// meant to. Like Dependencies, the keys must be a pure function of the
// item's value.
type Conflicter interface {
	ConflictKeys() []string
}

// ConflictKeysOf returns the conflict keys of item (nil when it has none).
func ConflictKeysOf(item Item) []string {
	if c, ok := item.(Conflicter); ok {
		return c.ConflictKeys()
	}
	return nil
}
