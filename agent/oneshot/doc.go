// Package oneshot holds the one-shot commands of netagent (apply, plan,
// check, show, diff, graph, validate) as library calls: each takes its
// Options and the intent files, acts on one namespace once and returns a
// result value. It prints nothing; cmd/netagent parses the flags, makes
// one call and prints the result.
//
// The steps the commands share are here too, each once:
//
//	Gate      the writer's lock and the daemon gate: go ahead, or a daemon
//	          serves the namespace (Decision)
//	Load      read, parse and validate the intent files
//	Prepare   open the namespace (host.Open), revert a pending trial first
//	          (a writer), and render the intent ONCE with the host's facts
//	          (Facts) and the DHCP leases the state directory keeps (Leases)
//	Guard     the protection of links (host.Runtime.Guard): refusals and
//	          orphans, and what to apply
//	Leases    the lease rounds of an apply (ApplyLeases)
//
// The daemon uses the same facts (DaemonFacts) and the same guard
// (NewDaemonGuard) for what it adopts.
//
// Rules: oneshot never imports the agent root package (the daemon's loop)
// and never writes to stdout or stderr; it logs through Options.Log. An
// error names the object it is about and wraps the cause; the kinds of
// error a command maps to its exit status are in errors.go.
package oneshot
