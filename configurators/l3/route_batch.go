package l3

import (
	"fmt"
	"slices"

	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// maxRounds bounds the request rounds of one batch: the first round and
// the follow-ups of its answers (EEXIST, ESRCH, a stale interface index, a
// delete that hit the wrong route).
const maxRounds = 4

// routeBatch applies route operations over the shared conn. Requests are
// sent pipelined (conn.exchange); the kernel's routes are dumped (once per
// family and batch) only where the outcome depends on what else is there:
//
//	create  RTM_NEWROUTE CREATE|EXCL. EEXIST: look at the routes of that
//	        identity (dump): another protocol's → ErrNotOwned (with adopt,
//	        the only one → REPLACE, which writes our protocol in place, and
//	        the item's attributes where it differs); ours and as wanted →
//	        done; ours but different → REPLACE.
//	modify  dump, then: another protocol's → ErrNotOwned; ours as wanted →
//	        nothing (no kernel write); ours different → REPLACE; none →
//	        CREATE|EXCL.
//	delete  RTM_DELROUTE with the protocol (the kernel deletes only ours).
//	        ESRCH: another protocol's route of that identity → ErrNotOwned,
//	        none → done (already gone).
//
// The kernel reads metric 0 in an IPv4 delete as "any metric": with ours
// of metric 0 gone, it would delete our route of the same destination with
// the next metric. So such a delete asks for the deleted route back
// (NLM_F_ECHO), and if it was another, adds it again as it was.
type routeBatch struct {
	c    *routeConfigurator
	ops  []reconciler.BatchOp
	errs []error
	conn rawOps
	// ifindex resolves device names, once per batch.
	ifindex ifIndexCache
	// oneDev holds the devs of the routes of one device (see devs).
	oneDev map[string]routeDevs
	// kernel holds the dump of each family once loaded.
	kernel map[uint8]kernelRoutes
	// The requests of the current round and what to do with each answer.
	reqs  []*nl.NetlinkRequest
	thens []func(reply)
}

func (b *routeBatch) run() {
	conn, err := b.c.open()
	if err != nil {
		fillErr(b.errs, err)
		return
	}
	b.conn = conn
	b.ifindex.conn = conn
	defer conn.close()
	if err := recordTables(conn, b.written()); err != nil {
		b.failWrites(err) // a route the record misses would be read back by no one
	}
	for start := 0; start < len(b.ops); start += planChunk {
		for i := start; i < min(start+planChunk, len(b.ops)); i++ {
			b.plan(i, b.ops[i])
		}
		b.answer()
	}
	_ = forgetEmptied(conn, b.emptied()) // a table left recorded costs one dump
}

// written returns the tables the batch's creates and modifies write a
// route in, each once, recorded before any is written.
func (b *routeBatch) written() []uint32 {
	var out []uint32
	for _, op := range b.ops {
		if r, ok := op.New.(*items.Route); ok && op.Op != reconciler.OpDelete {
			out = appendTable(out, r.TableID())
		}
	}
	return out
}

// appendTable appends t to tables (a few) unless it is there.
func appendTable(tables []uint32, t uint32) []uint32 {
	if slices.Contains(tables, t) {
		return tables
	}
	return append(tables, t)
}

// failWrites fails the batch's creates and modifies with err.
func (b *routeBatch) failWrites(err error) {
	for i, op := range b.ops {
		if op.Op != reconciler.OpDelete {
			b.errs[i] = err
		}
	}
}

// emptied returns the tables the batch's deletes may have emptied of
// netagent's routes: those of its deleted routes that none of its
// creates and modifies wrote in.
func (b *routeBatch) emptied() []uint32 {
	kept := b.written()
	var out []uint32
	for i, op := range b.ops {
		if r, ok := op.Old.(*items.Route); ok && op.Op == reconciler.OpDelete && b.errs[i] == nil && !slices.Contains(kept, r.TableID()) {
			out = appendTable(out, r.TableID())
		}
	}
	return out
}

// planChunk is how many operations are planned, sent and answered before
// the next ones are planned: the requests of a batch of 100k routes (26
// MB with their answers' callbacks) were all held until the last was
// answered, a fifth of an initial apply's peak heap. A variable for the
// tests.
var planChunk = 4096

// answer sends the queued requests and their follow-ups, round after
// round, until none is left or maxRounds rounds ran.
func (b *routeBatch) answer() {
	for round := 0; round < maxRounds && len(b.reqs) > 0; round++ {
		b.flush()
	}
	for i := range b.reqs { // still pending after maxRounds
		b.thens[i](reply{err: fmt.Errorf("no answer after %d rounds", maxRounds)})
	}
	b.reqs, b.thens = nil, nil // and the follow-ups of those: never sent
}

// queue adds a request to the round; then receives the kernel's answer.
func (b *routeBatch) queue(req *nl.NetlinkRequest, then func(reply)) {
	b.reqs = append(b.reqs, req)
	b.thens = append(b.thens, then)
}

// flush sends the queued requests and hands out the answers, which may
// queue the next round.
func (b *routeBatch) flush() {
	reqs, thens := b.reqs, b.thens
	b.reqs, b.thens = nil, nil
	for i, r := range b.conn.exchange(reqs) {
		thens[i](r)
	}
}

func (b *routeBatch) plan(i int, op reconciler.BatchOp) {
	var err error
	switch op.Op {
	case reconciler.OpCreate:
		err = b.planCreate(i, op)
	case reconciler.OpModify:
		err = b.planModify(i, op)
	case reconciler.OpDelete:
		err = b.planDelete(i, op)
	default:
		err = fmt.Errorf("route operation %v: unknown", op.Op)
	}
	if err != nil {
		b.errs[i] = err
	}
}

func (b *routeBatch) planCreate(i int, op reconciler.BatchOp) error {
	r, err := items.As[*items.Route](op.New)
	if err != nil {
		return err
	}
	devs, err := b.devs(r)
	if err != nil {
		return fmt.Errorf("adding route %s: %w", r.Name(), err)
	}
	b.queueAdd(i, r, devs, true)
	return nil
}

// devs resolves the route's devices (its Dev and its nexthops'). The
// routes of one device without nexthops share one map (nobody writes it):
// a batch of 100k routes over one link resolves it once.
func (b *routeBatch) devs(r *items.Route) (routeDevs, error) {
	single := len(r.Nexthops) == 0
	if devs, ok := b.oneDev[r.Dev]; ok && single {
		return devs, nil
	}
	devs := routeDevs{}
	for _, d := range devsOf(r) {
		i, err := b.ifindex.get(d)
		if err != nil {
			return nil, err
		}
		devs[d] = i
	}
	if single {
		if b.oneDev == nil {
			b.oneDev = make(map[string]routeDevs)
		}
		b.oneDev[r.Dev] = devs
	}
	return devs, nil
}

// staleOif handles ENODEV for a request sent with indexes looked up
// earlier in the batch: it looks the devices up again and, if an index
// changed, resends. It reports whether it took the answer over.
func (b *routeBatch) staleOif(rep reply, r *items.Route, devs routeDevs, resend func(routeDevs)) bool {
	if rep.err == nil || !isErrno(rep.err, unix.ENODEV) || len(devs) == 0 {
		return false
	}
	fresh := routeDevs{}
	changed := false
	for d, old := range devs {
		i, err := b.ifindex.refresh(d)
		if err != nil {
			return false
		}
		fresh[d] = i
		changed = changed || i != old
	}
	if !changed {
		return false
	}
	resend(fresh)
	return true
}

// queueAdd queues an exclusive add; on EEXIST, settle decides (once).
func (b *routeBatch) queueAdd(i int, r *items.Route, devs routeDevs, settleOnExist bool) {
	req := routeRequest(unix.RTM_NEWROUTE, unix.NLM_F_CREATE|unix.NLM_F_EXCL, r, devs)
	b.queue(req, func(rep reply) {
		switch {
		case b.staleOif(rep, r, devs, func(devs routeDevs) { b.queueAdd(i, r, devs, settleOnExist) }):
		case rep.err != nil && isErrno(rep.err, unix.EEXIST) && settleOnExist:
			b.errs[i] = wrapIf(b.settle(i, r, devs), "adding route %s", r.Name())
		default:
			b.errs[i] = wrapIf(rep.err, "adding route %s", r.Name())
		}
	})
}

// queueReplace queues an in-place change of our route.
func (b *routeBatch) queueReplace(i int, r *items.Route, devs routeDevs) {
	req := routeRequest(unix.RTM_NEWROUTE, unix.NLM_F_CREATE|unix.NLM_F_REPLACE, r, devs)
	b.queue(req, func(rep reply) {
		if !b.staleOif(rep, r, devs, func(devs routeDevs) { b.queueReplace(i, r, devs) }) {
			b.errs[i] = wrapIf(rep.err, "replacing route %s", r.Name())
		}
	})
}

func (b *routeBatch) planModify(i int, op reconciler.BatchOp) error {
	r, err := items.As[*items.Route](op.New)
	if err != nil {
		return err
	}
	devs, err := b.devs(r)
	if err != nil {
		return fmt.Errorf("replacing route %s: %w", r.Name(), err)
	}
	return wrapIf(b.settle(i, r, devs), "replacing route %s", r.Name())
}

// settle compares the kernel's routes of r's identity with r and queues
// what is missing: nothing, a replace of ours, or an add.
func (b *routeBatch) settle(i int, r *items.Route, devs routeDevs) error {
	idx, err := b.index(r.Family())
	if err != nil {
		return err
	}
	owned, foreign := ownedOf(idx[r.Name()])
	switch {
	case b.c.adopt && adoptable(idx[r.Name()]):
		b.queueReplace(i, r, devs)
	case foreign:
		return errRouteNotOwned
	case owned == nil:
		b.queueAdd(i, r, devs, false)
	case !sameRoute(owned, r, devs.names()):
		b.queueReplace(i, r, devs)
	}
	return nil
}

func (b *routeBatch) planDelete(i int, op reconciler.BatchOp) error {
	r, err := items.As[*items.Route](op.Old)
	if err != nil {
		return err
	}
	if _, loaded := b.kernel[afOf(r.Family())]; loaded {
		return b.deleteChecked(i, r)
	}
	if r.Family() == items.FamilyIPv4 && r.Metric == 0 {
		b.queueDeleteEcho(i, r)
		return nil
	}
	b.queue(routeRequest(unix.RTM_DELROUTE, 0, r, nil), func(rep reply) {
		b.errs[i] = wrapIf(b.deleted(rep, r), "deleting route %s", r.Name())
	})
	return nil
}

// deleted interprets the answer to a delete: ESRCH is success unless
// another protocol's route holds the identity.
func (b *routeBatch) deleted(rep reply, r *items.Route) error {
	if rep.err != nil && isErrno(rep.err, unix.ESRCH) {
		return b.gone(r)
	}
	return rep.err
}

// queueDeleteEcho deletes an IPv4 route of metric 0 and checks, from the
// echo, that the kernel deleted that one; if it took another route of ours
// (the same destination, a higher metric), it adds that one back.
func (b *routeBatch) queueDeleteEcho(i int, r *items.Route) {
	b.queue(routeRequest(unix.RTM_DELROUTE, unix.NLM_F_ECHO, r, nil), func(rep reply) {
		if rep.err != nil {
			b.errs[i] = wrapIf(b.deleted(rep, r), "deleting route %s", r.Name())
			return
		}
		for _, m := range rep.echo {
			if routeMetric(m) == 0 {
				continue
			}
			// Ours of metric 0 was not there: it was the first match.
			b.queue(restoreRequest(m), func(back reply) {
				err := back.err
				if err == nil {
					err = b.gone(r)
				}
				b.errs[i] = wrapIf(err, "deleting route %s (restoring the route deleted in its place)", r.Name())
			})
		}
	})
}

// deleteChecked deletes r after finding it in the dump.
func (b *routeBatch) deleteChecked(i int, r *items.Route) error {
	idx, err := b.index(r.Family())
	if err != nil {
		return fmt.Errorf("deleting route %s: %w", r.Name(), err)
	}
	owned, foreign := ownedOf(idx[r.Name()])
	switch {
	case owned != nil:
		b.queue(routeRequest(unix.RTM_DELROUTE, 0, r, nil), func(rep reply) {
			if rep.err != nil && isErrno(rep.err, unix.ESRCH) {
				rep.err = nil // gone meanwhile
			}
			b.errs[i] = wrapIf(rep.err, "deleting route %s", r.Name())
		})
	case foreign:
		return fmt.Errorf("deleting route %s: %w", r.Name(), errRouteNotOwned)
	}
	return nil
}

// gone explains an ESRCH of a delete: nil when no route of r's identity is
// left, ErrNotOwned when another protocol's route holds it.
func (b *routeBatch) gone(r *items.Route) error {
	idx, err := b.index(r.Family())
	if err != nil {
		return err
	}
	if _, foreign := ownedOf(idx[r.Name()]); foreign {
		return errRouteNotOwned
	}
	return nil
}

// index returns the dump of family f, loading it once per batch.
func (b *routeBatch) index(f items.Family) (kernelRoutes, error) {
	af := afOf(f)
	if idx, ok := b.kernel[af]; ok {
		return idx, nil
	}
	idx, err := dumpRoutes(b.conn, int(af), b.tables(f), b.names(f))
	if err != nil {
		return nil, err
	}
	if b.kernel == nil {
		b.kernel = make(map[uint8]kernelRoutes)
	}
	b.kernel[af] = idx
	return idx, nil
}

// names returns the identities of the batch's routes of family f: the
// only ones its lookups of the dump ask for (settle, gone,
// deleteChecked).
func (b *routeBatch) names(f items.Family) map[string]bool {
	out := map[string]bool{}
	for _, op := range b.ops {
		for _, it := range []any{op.Old, op.New} {
			if r, ok := it.(*items.Route); ok && r.Family() == f {
				out[r.Name()] = true
			}
		}
	}
	return out
}

// tables returns the tables of the batch's routes of family f.
func (b *routeBatch) tables(f items.Family) []uint32 {
	var out []uint32
	for _, op := range b.ops {
		for _, it := range []any{op.Old, op.New} {
			if r, ok := it.(*items.Route); ok && r.Family() == f {
				out = append(out, r.TableID())
			}
		}
	}
	return out
}

// wrapIf wraps a non-nil err with what was done.
func wrapIf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
