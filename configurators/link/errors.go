package link

import "errors"

// Sentinel errors. Every error the configurators return names the interface
// and wraps one of these or the kernel's error.
var (
	// ErrNotOwned: a link of the item's name exists but netagent did not
	// create it (it lacks the ownership mark), so netagent neither takes it
	// over nor deletes it. A bond or bridge port whose link is enslaved to a
	// master that is not netagent's is not taken either.
	ErrNotOwned = errors.New("link exists and is not owned by netagent")
	// ErrMissing: a link the item needs is not in the namespace (the NIC of
	// a physical interface, the parent of a VLAN, the master of a port).
	ErrMissing = errors.New("link not found")
	// ErrReservedAlias: the alias wanted for a physical interface carries
	// netagent's ownership mark ("netagent", "netagent:..."), which only
	// links netagent creates may carry: netagent would take the NIC for
	// its own, and delete it once it left the intent.
	ErrReservedAlias = errors.New("alias carries netagent's ownership mark")
	// ErrKeyFile: a WireGuard key file (private or preshared) is missing,
	// unreadable, accessible to others or not one base64 key. The error
	// names the interface and the file, never its content.
	ErrKeyFile = errors.New("unusable key file")
	// ErrBadOriginal: a setting the state directory records as what a NIC
	// had before netagent is one no intent could give it (an MTU out of
	// range, a MAC that is no unicast address, netagent's mark as the
	// alias of a NIC found without it): the record is not trusted, and
	// nothing of it is given back.
	ErrBadOriginal = errors.New("recorded original setting is not one a NIC can have")
	// ErrNoMatch: no NIC of the namespace matches a physical interface's
	// match (it may appear later: a hot-plugged NIC is picked up).
	ErrNoMatch = errors.New("no NIC matches")
	// ErrAmbiguousMatch: two or more NICs match a physical interface's
	// match; the error names every candidate, and nothing is renamed.
	ErrAmbiguousMatch = errors.New("more than one NIC matches")
	// ErrNameTaken: the name a matched NIC is to get is another link's,
	// one the match does not find; the error names both.
	ErrNameTaken = errors.New("name is another link's")
)
