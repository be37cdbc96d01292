package host

import "github.com/netagent/netagent/reconciler"

// ObserveOps has f called after every kernel operation of the Runtime's
// reconcilers made from now on (with the entry the log gets), from the
// goroutine that ran it: apply's progress on a terminal counts them.
// nil stops it.
func (r *Runtime) ObserveOps(f func(reconciler.OpLogEntry)) { r.observe = f }
