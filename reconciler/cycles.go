package reconciler

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
)

// detectCycles follows, from every item found blocked in this run, the
// chain of "waiting for" notes. A chain that comes back to where it passed
// is a dependency cycle: each of its items gets an error naming the cycle.
func (u *run) detectCycles() {
	if len(u.rec.blocked) == 0 {
		return
	}
	state := make(map[dg.ItemRef]int8) // 1: on the current path, 2: done
	for _, start := range u.blockedNow {
		var path []dg.ItemRef
		ref := start.Ref()
		if _, blocked := u.rec.blocked[ref]; !blocked {
			continue // created since: no chain starts here
		}
		for {
			if state[ref] == 2 {
				break
			}
			if state[ref] == 1 {
				u.markCycle(path, ref)
				break
			}
			note, blocked := u.rec.blocked[ref]
			if !blocked {
				break
			}
			state[ref] = 1
			path = append(path, ref)
			ref = note.On
		}
		for _, p := range path {
			state[p] = 2
		}
	}
}

// markCycle marks the part of path from ref on (the loop).
func (u *run) markCycle(path []dg.ItemRef, ref dg.ItemRef) {
	i := 0
	for path[i] != ref {
		i++
	}
	loop := path[i:]
	names := make([]string, 0, len(loop)+1)
	for _, r := range loop {
		names = append(names, r.String())
	}
	names = append(names, ref.String())
	desc := strings.Join(names, " -> ")
	for _, r := range loop {
		note := u.rec.blocked[r]
		note.Reason = "blocked: dependency cycle " + desc
		note.err = fmt.Errorf("%s: %w: %s", r, ErrCycle, desc)
		u.rec.blocked[r] = note
	}
}

func (u *run) status() Status {
	s := Status{NewCurrentState: u.cur, OperationLog: u.log, Held: u.held}
	errs := u.errs
	for ref, note := range u.rec.blocked {
		if !u.inScopeRef(ref) {
			continue
		}
		if s.Blocked == nil {
			s.Blocked = make(map[dg.ItemRef]string)
			s.BlockedOn = make(map[dg.ItemRef]dg.ItemRef)
		}
		s.Blocked[ref] = note.Reason
		s.BlockedOn[ref] = note.On
		if note.err != nil {
			errs = append(errs, note.err)
		}
	}
	sortErrs(errs[len(u.errs):])
	s.Err = errors.Join(errs...)
	if len(u.rec.async) > 0 {
		u.addAsyncControls(&s)
	}
	return s
}

func sortErrs(errs []error) {
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
}

func (u *run) addAsyncControls(s *Status) {
	s.AsyncOpsInProgress = true
	s.ReadyToResume = u.rec.notifier.renew()
	ops := make(map[dg.ItemRef]*opCtx, len(u.rec.async))
	for ref, op := range u.rec.async {
		ops[ref] = op
	}
	s.CancelAsyncOps = func(filter func(dg.ItemRef) bool) {
		for ref, op := range ops {
			if filter == nil || filter(ref) {
				op.cancel()
			}
		}
	}
	s.WaitForAsyncOps = func() {
		for _, op := range ops {
			if op.finishCh != nil {
				<-op.finishCh
			}
		}
	}
	for _, op := range ops { // an operation may have finished already
		if done, _ := op.result(); done {
			u.rec.notifier.signal(op.scope)
			break
		}
	}
}
