package link

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// isNotFound reports whether err says that a link does not exist.
func isNotFound(err error) bool {
	var nf netlink.LinkNotFoundError
	return errors.As(err, &nf) || errors.Is(err, unix.ENODEV)
}

// lookup returns the link of that name, nil if there is none.
func (k *kernel) lookup(name string) (netlink.Link, error) {
	l, err := k.nl.LinkByName(name)
	switch {
	case err == nil:
		return l, nil
	case isNotFound(err):
		return nil, nil
	}
	return nil, fmt.Errorf("reading link %s: %w", name, err)
}

// index returns the ifindex of a link that must exist (a parent, a master,
// a bond's primary).
func (k *kernel) index(name, role string) (int, error) {
	if l, ok := k.dump.link(name); ok {
		return l.Attrs().Index, nil
	}
	l, err := k.lookup(name)
	if err != nil {
		return 0, err
	}
	if l == nil {
		return 0, fmt.Errorf("%s %s: %w", role, name, ErrMissing)
	}
	return l.Attrs().Index, nil
}

// nameOf names a link of this namespace by index ("" if it is gone).
func (k *kernel) nameOf(index int) string {
	if index <= 0 {
		return ""
	}
	if name, ok := k.dump.name(index); ok {
		return name
	}
	l, err := k.nl.LinkByIndex(index)
	if err != nil {
		return ""
	}
	return l.Attrs().Name
}

// whileDown runs f; if the kernel answers EBUSY because the link is up (as
// for a bond's lacp_rate, or a MAC on some devices), it sets the link down,
// runs f again and sets the link up again.
func (k *kernel) whileDown(l netlink.Link, f func() error) error {
	err := f()
	if !errors.Is(err, unix.EBUSY) || l.Attrs().Flags&netUp == 0 {
		return err
	}
	if err := k.nl.LinkSetDown(l); err != nil {
		return err
	}
	err = f()
	if uerr := k.nl.LinkSetUp(l); err == nil {
		err = uerr
	}
	return err
}
