package l3

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// neighborConfigurator manages items.Neighbor: permanent entries marked
// with NDA_PROTOCOL = items.RouteProtocol. Every change goes over a conn,
// because netlink.Neigh carries no NDA_PROTOCOL.
type neighborConfigurator struct {
	open opener
	// adopt takes over someone else's static entry for the item's
	// address instead of refusing it (ErrNotOwned): a replace, in place,
	// writes the mark (and the item's MAC where it differs).
	adopt bool
}

var _ reconciler.Configurator = (*neighborConfigurator)(nil)

// errNeighNotOwned: a static entry for the item's address is someone else's.
var errNeighNotOwned = fmt.Errorf("%w: a static entry without netagent's NDA_PROTOCOL mark holds the address", ErrNotOwned)

// Create makes the permanent entry exist as wanted (see ensure).
func (c *neighborConfigurator) Create(_ context.Context, item dg.Item) error {
	return onItem[*items.Neighbor](item, "adding neighbor", c.ensure)
}

// Modify gives the entry its new MAC in place (NLM_F_REPLACE), unless the
// kernel already has it.
func (c *neighborConfigurator) Modify(_ context.Context, _, newItem dg.Item) error {
	return onItem[*items.Neighbor](newItem, "replacing neighbor", c.ensure)
}

// ensure looks at the kernel's entry for n's address on n's interface:
// none → add it; ours → replace it if the MAC or state differ; a learned
// (dynamic) entry → replace it with ours; someone's static entry →
// ErrNotOwned, or with adopt replaced in place with ours.
func (c *neighborConfigurator) ensure(n *items.Neighbor) error {
	conn, err := c.open()
	if err != nil {
		return err
	}
	defer conn.close()
	index, err := conn.ifIndex(n.Dev)
	if err != nil {
		return err
	}
	k, err := findNeigh(conn, n, index)
	switch {
	case err != nil:
		return err
	case k == nil:
		return addNeigh(conn, n, index, unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	case !k.owned() && k.static() && !c.adopt:
		return errNeighNotOwned
	case k.owned() && neighAsWanted(k, n):
		return nil
	}
	return addNeigh(conn, n, index, unix.NLM_F_CREATE|unix.NLM_F_REPLACE)
}

// addNeigh sends the entry and checks that the kernel kept the mark.
func addNeigh(conn rawOps, n *items.Neighbor, index, flags int) error {
	if err := sendOne(conn, neighRequest(unix.RTM_NEWNEIGH, flags, n, index)); err != nil {
		return err
	}
	k, err := findNeigh(conn, n, index)
	switch {
	case err != nil:
		return err
	case k == nil:
		return errors.New("the kernel acknowledged the entry but does not list it")
	case !k.owned():
		_ = sendOne(conn, neighRequest(unix.RTM_DELNEIGH, 0, n, index))
		return fmt.Errorf("%w (NDA_PROTOCOL needs Linux 5.0)", ErrNoMark)
	}
	return nil
}

func neighAsWanted(k *kernelNeigh, n *items.Neighbor) bool {
	return k.state&netlink.NUD_PERMANENT != 0 && bytes.Equal(k.mac, n.MAC)
}

// Delete removes our entry. Gone, replaced by a learned entry, or its
// interface gone: success. Someone's static entry: ErrNotOwned.
func (c *neighborConfigurator) Delete(_ context.Context, item dg.Item) error {
	return onItem[*items.Neighbor](item, "deleting neighbor", c.delete)
}

func (c *neighborConfigurator) delete(n *items.Neighbor) error {
	conn, err := c.open()
	if err != nil {
		return err
	}
	defer conn.close()
	index, err := conn.ifIndex(n.Dev)
	if errors.Is(err, ErrNoDevice) {
		return nil
	} else if err != nil {
		return err
	}
	k, err := findNeigh(conn, n, index)
	switch {
	case err != nil:
		return err
	case k == nil || (!k.owned() && !k.static()):
		return nil
	case !k.owned():
		return errNeighNotOwned
	}
	err = sendOne(conn, neighRequest(unix.RTM_DELNEIGH, 0, n, index))
	if isErrno(err, unix.ENOENT) {
		return nil
	}
	return err
}

// NeedsRecreate delegates to items.NeedsRecreate (never, for neighbours).
func (c *neighborConfigurator) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return items.NeedsRecreate(oldItem, newItem)
}

// findNeigh returns the kernel's entry for n's address on the interface.
func findNeigh(conn rawOps, n *items.Neighbor, index int) (*kernelNeigh, error) {
	list, err := dumpNeighs(conn, int(afOf(items.FamilyOf(n.IP))))
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].index == index && list[i].ip == n.IP {
			return &list[i], nil
		}
	}
	return nil, nil
}

// dumpNeighs lists the neighbour entries of one family.
func dumpNeighs(conn rawOps, family int) ([]kernelNeigh, error) {
	var list []kernelNeigh
	err := retryDump("neighbors", func() error {
		msgs, err := conn.dump(neighDumpRequest(family), unix.RTM_NEWNEIGH)
		list = list[:0]
		for _, m := range msgs {
			if k, ok := parseNeigh(m); ok {
				list = append(list, k)
			}
		}
		return err
	})
	return list, err
}
