package l3

import "errors"

// Sentinel errors; the configurators' errors wrap them and name the item.
var (
	// ErrNotOwned: the kernel object with the item's identity exists but
	// does not carry netagent's mark. netagent never takes it over, changes
	// it or deletes it.
	ErrNotOwned = errors.New("object exists and is not owned by netagent")
	// ErrNoDevice: the item's device does not exist in the namespace.
	ErrNoDevice = errors.New("no such device")
	// ErrNoMark: the kernel accepted the object but dropped netagent's
	// ownership mark (IFA_PROTO needs Linux 5.18, NDA_PROTOCOL Linux 5.0),
	// so a restarted agent could not tell the object is its own. The object
	// is removed again.
	ErrNoMark = errors.New("kernel does not keep the ownership mark")
	// ErrNeedsRecreate: Modify was asked for a change the kernel cannot make
	// in place (items.NeedsRecreate reports it; the reconciler recreates).
	ErrNeedsRecreate = errors.New("change needs a recreate")
	// ErrLifetimeOver: the address's ValidUntil has passed (its lease
	// ended); the kernel would drop it at once, so it is not added.
	ErrLifetimeOver = errors.New("the address's lifetime is over")
)
