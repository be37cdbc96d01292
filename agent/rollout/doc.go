// Package rollout is the fleet's rollout controller: one intent document
// pushed to a fleet's hosts in waves, each host on trial (a member's
// TrialEnvelope in its own key, hosts/<host>/<doc>), a wave judged by the
// hosts' own reports (fleet.Status.Trial, Ready, Degraded) before the next
// one starts.
//
//	Spec (rollout document) ──Start──▶ P/rollouts/<id>/state (State, CAS)
//	                                          │
//	Controller.Step: lease ─▶ read state ─▶ one transition ─▶ CAS write
//	                                          │ pushes (CAS on each host key)
//	                                          ▼
//	              members report P/status/<host> ──▶ counted by Step
//
// Step is the whole controller: it reads the state, makes at most one
// transition (select a wave's hosts, record a host about to be pushed,
// push it, record a report, start or end a bake, halt, roll back) and
// writes it with a compare-and-swap on the state's version. A controller
// killed between two writes and started again reads where it was: a host
// is recorded as "pushing" (with the host key's version before) before its
// key is written, so a restart finds out from the key itself whether the
// push happened, and never pushes a host twice. A lease record
// (P/rollouts/<id>/lease, CAS, renewed at every Step) keeps a second
// controller from running the same rollout; it expires on the controller's
// clock (Clock), so controllers' clocks must roughly agree.
//
// The operator's commands (Approve, Halt, Resume, Abort) are CAS writes of
// the state too, so they need no controller running; the next Step acts on
// them. Run drives Step until the rollout ends.
package rollout
