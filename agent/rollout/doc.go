// Package rollout is the fleet's rollout controller: one intent document
// pushed to a fleet's hosts in waves, each host on trial (a member's
// TrialEnvelope in its own key, hosts/<host>/<doc>), a wave judged by the
// hosts' own reports (fleet.Status.Trial, Ready, Degraded) before the next
// one starts.
//
//	Spec (rollout document) ──Start──▶ P/rollouts/<id>/state (State, CAS)
//	                                   P/rollouts/<id>/hosts/<host> (HostState, CAS each)
//	                                          │
//	Controller.Step: lease ─▶ read state ─▶ one transition ─▶ CAS writes
//	                                          │ pushes (CAS on each host key)
//	                                          ▼
//	   members report P/status/<host> ──▶ StatusWatch ──▶ judged by Step
//	   members publish P/snapshots/<host> ──▶ pre-flight (preflight.go)
//
// Step is the whole controller: it reads the state, makes at most one
// transition (select a wave's hosts, pre-flight them, record hosts about
// to be pushed, push them, record reports, start or end a bake, halt,
// roll back) and writes the host records that changed, then the state,
// each with a compare-and-swap. A controller killed between two writes
// and started again reads where it was: a host is recorded as "pushing"
// (with the host key's version before) a step before its key is written,
// so a restart finds out from the key itself whether the push happened,
// and never pushes a host twice. A lease record
// (P/rollouts/<id>/lease, CAS, renewed at every Step) keeps a second
// controller from running the same rollout; it expires on the controller's
// clock (Clock), so controllers' clocks must roughly agree.
//
// The operator's commands (Approve, Halt, Resume, Abort) are CAS writes of
// the state too, so they need no controller running; the next Step acts on
// them. Run drives Step until the rollout ends; a Supervisor (`netagent
// fleet controller`) runs every rollout that is running.
package rollout
