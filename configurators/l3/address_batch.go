package l3

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"golang.org/x/sys/unix"
)

var _ reconciler.BatchConfigurator = (*addressConfigurator)(nil)

// ApplyBatch applies independent address operations (a wave's). The
// creates share their kernel reads: one dump of the addresses before the
// adds (a single create dumps them per address) sorts them into absent
// (added, the requests pipelined), ours as wanted (nothing to do) and
// someone else's (ErrNotOwned, as Create); one dump after the adds checks
// that the kernel kept every mark. A create that finds ours with another
// label or scope, or whose add the kernel refuses with EEXIST (someone
// added the address since the dump), and every modify and delete, go as
// the single operations do.
func (c *addressConfigurator) ApplyBatch(ctx context.Context, ops []reconciler.BatchOp) []error {
	errs := make([]error, len(ops))
	var creates []int
	var wants []*items.Address
	for i, op := range ops {
		switch op.Op {
		case reconciler.OpCreate:
			a, err := items.As[*items.Address](op.New)
			if err != nil {
				errs[i] = err
				continue
			}
			creates = append(creates, i)
			wants = append(wants, a)
		case reconciler.OpModify:
			errs[i] = c.Modify(ctx, op.Old, op.New)
		case reconciler.OpDelete:
			errs[i] = c.Delete(ctx, op.Old)
		default:
			errs[i] = fmt.Errorf("address operation %v: unknown", op.Op)
		}
	}
	if len(wants) == 0 {
		return errs
	}
	cerrs, single := c.createAll(wants)
	for j, i := range creates {
		errs[i] = wrapIf(cerrs[j], "adding address %s", wants[j].Name())
	}
	for _, j := range single { // after createAll gave the conn back
		errs[creates[j]] = c.Create(ctx, wants[j])
	}
	return errs
}

// addrKey is an address's identity on an interface as the kernel keys it:
// an IPv4 address with its prefix length, an IPv6 address alone (see
// sameAddr).
type addrKey struct {
	index int
	addr  netip.Addr
	bits  int // -1 for IPv6
}

func keyOf(index int, p netip.Prefix) addrKey {
	k := addrKey{index: index, addr: p.Addr(), bits: p.Bits()}
	if !p.Addr().Is4() {
		k.bits = -1
	}
	return k
}

// byKey indexes a dump by addrKey.
func byKey(list []kernelAddr) map[addrKey]*kernelAddr {
	m := make(map[addrKey]*kernelAddr, len(list))
	for i := range list {
		m[keyOf(list[i].index, list[i].prefix)] = &list[i]
	}
	return m
}

// createAll adds the addresses over one conn with two dumps in all (see
// ApplyBatch) and returns one error per address; single lists those that
// need a single Create (after the conn is given back).
func (c *addressConfigurator) createAll(as []*items.Address) (errs []error, single []int) {
	errs = make([]error, len(as))
	conn, err := c.open()
	if err != nil {
		fillErr(errs, err)
		return errs, nil
	}
	defer conn.close()
	list, err := dumpAddrs(conn, unix.AF_UNSPEC)
	if err != nil {
		fillErr(errs, err)
		return errs, nil
	}
	have := byKey(list)
	indexes := make([]int, len(as))
	var adds []int
	var reqs []*nlRequest
	for i, a := range as {
		if errs[i] = lifetimeOver(a, time.Now()); errs[i] != nil {
			continue
		}
		if indexes[i], errs[i] = conn.ifIndex(a.Dev); errs[i] != nil {
			continue
		}
		k := have[keyOf(indexes[i], a.Prefix)]
		switch {
		case k == nil:
			adds = append(adds, i)
			reqs = append(reqs, addrRequest(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL, a, indexes[i]))
		case c.refuses(k, a):
			errs[i] = notOwnedAddr(k, a)
		case !k.owned():
			single = append(single, i) // Create takes it over
		case k.prefix.Bits() != a.Prefix.Bits():
			errs[i] = fmt.Errorf("netagent's address %s holds it", k.prefix)
		case !addrAsWanted(k, a) || !inPlaceAsWanted(k, a, time.Now()):
			single = append(single, i)
		}
	}
	var added []int
	for j, rep := range conn.exchange(reqs) {
		i := adds[j]
		switch {
		case rep.err == nil:
			added = append(added, i)
		case isErrno(rep.err, unix.EEXIST):
			single = append(single, i)
		default:
			errs[i] = rep.err
		}
	}
	if len(added) > 0 {
		c.checkMarks(conn, as, indexes, added, errs)
	}
	return errs, single
}

// checkMarks checks, with one dump, that the kernel lists each added
// address with the mark; one it kept without the mark (IFA_PROTO needs
// Linux 5.18) is deleted again and fails with ErrNoMark.
func (c *addressConfigurator) checkMarks(conn rawOps, as []*items.Address, indexes, added []int, errs []error) {
	list, err := dumpAddrs(conn, unix.AF_UNSPEC)
	if err != nil {
		for _, i := range added {
			errs[i] = err
		}
		return
	}
	have := byKey(list)
	for _, i := range added {
		k := have[keyOf(indexes[i], as[i].Prefix)]
		switch {
		case k == nil:
			errs[i] = errors.New("the kernel acknowledged the address but does not list it")
		case !k.owned():
			_ = sendOne(conn, addrRequest(unix.RTM_DELADDR, 0, as[i], indexes[i]))
			errs[i] = fmt.Errorf("%w (IFA_PROTO needs Linux 5.18)", ErrNoMark)
		}
	}
}
