// Package firewall configures iptables chains (items.IptablesChain) and
// net.* sysctls (items.Sysctl) in one network namespace, and reads them
// back into items.
//
//	Register(reg, target, stateDir)          ReadBack(target, stateDir, hint)
//	        │                                         │
//	        ▼                                         ▼
//	chainConfigurator ── backend (per family) ──▶ iptables -S (go-iptables), iptables-save,
//	   (BatchConfigurator)                         iptables-restore --noflush, run inside
//	                                               the namespace (Target.Do + exec, no shell)
//	sysctlConfigurator ── sysctlFS ────────────▶ /proc/sys/net/... opened inside the namespace
//	        │
//	        └── <stateDir>/sysctl.json           original values, per namespace instance
//	chainConfigurator ── <stateDir>/iptables/    the kernel's form of the rules last written
//
// # Chains
//
// An IptablesChain item is a user chain with all its rules and, optionally,
// one jump to it from a built-in chain at a 1-based position. Every write
// is one iptables-restore --noflush transaction for the chain's table:
//
//	*filter
//	:NA-FWD - [0:0]                                      flushes netagent's chain (-N NA-FWD
//	                                                     creates one the kernel lacked)
//	-D FORWARD -m comment --comment netagent -j NA-FWD   only if the jump moves
//	-A NA-FWD -m comment --comment netagent              the ownership mark
//	-A NA-FWD -i br-lan -o uplink0 -j ACCEPT             the rules, quoted for the format
//	-I FORWARD 2 -m comment --comment netagent -j NA-FWD
//	COMMIT
//
// The kernel commits a table's transaction at once or not at all, so no
// packet and no reader ever sees a chain half written, and a failed write
// changes nothing (a failed Create leaves nothing behind). Modify is in
// place (NeedsRecreate is items.NeedsRecreate: never for chains): only the
// parts that differ are written: the chain when its rules differ, the jump
// when it is not exactly one jump at the intended position. A position past
// the end of the built-in chain appends the jump and reads back as the
// intended position while the jump is last. Jumps are deleted by rule
// spec, never by number, so a rule inserted by someone else in between can
// never be hit. Delete removes the jump, flushes and deletes the chain, in
// one transaction.
//
// The jumps of several chains from one built-in chain form netagent's block
// there (the renderer sets each item's BlockStart and Position): the block
// starts at BlockStart, or right after the built-in chain's foreign rules
// (those that are not netagent's jumps) when there are fewer, and each jump
// has its place in it (items.IptablesChain.JumpAt). So chains sharing a hook
// never claim one position, a chain leaving the middle of the block lets the
// rest close up, and foreign rules keep their order among themselves. A
// jump in its place reads back with the item's Position and BlockStart; one
// elsewhere at its absolute position, with BlockStart 0.
//
// Rules are argument vectors; they never pass through a shell. Each
// argument is written bare or in double quotes with '"' and '\' escaped, as
// iptables' own parser reads it; an argument with a newline or NUL is
// refused (ErrBadArgument). Chain names must be bare words.
//
// The programs are found on PATH per family: iptables, iptables-save and
// iptables-restore (ip6tables... for IPv6), else their -nft, else their
// -legacy names, whichever variant has all three. A family without them
// does not stop anything else: its chains fail as their own items
// (ErrNoTools, "iptables-restore not found", which names the program),
// and read-back skips it; an intent without chains needs none and is not
// warned about (MissingTools reports which families lack them).
//
// ApplyBatch (reconciler.BatchConfigurator) turns the ready operations of a
// family and table into one transaction, with one iptables-save per family
// before; a failed transaction is retried one operation at a time, so each
// operation gets its own error. What the transaction left, which tells
// the kernel's spelling of the rules written, iptables-nft's restore
// prints itself: the transaction ends with "-S" before COMMIT, which lists
// the table as the transaction leaves it, rule for rule as iptables-save
// prints it after the commit, so no save follows. With iptables-legacy
// (whose restore cannot list a table in the middle of a transaction), or
// a listing that does not parse or lacks a chain written, one
// iptables-save per table follows the restore instead; a restore that
// fails with the listing and works without it (an iptables that refuses
// "-S" there) stops the listing for the family. The other tables of the
// family are, after the write, as seen before it. Right after a
// read-back (its save at most a second old, no restore since) the batch
// plans against the read-back's save instead of saving the same tables
// again: a chain the view lacks is created with -N, which fails the
// transaction (and so the one-by-one retry, each with a fresh look) if a
// chain of that name appeared in between, so a stale view never flushes
// someone else's chain. Every configurator and read-back of a namespace in
// the process shares one record store (below), loaded from disk once.
//
// # Ownership of chains
//
// The mark lives in the kernel, so a restarted agent with no memory knows
// its own chains: every chain netagent creates starts with the rule
// "-m comment --comment netagent" (no target: it only counts and falls
// through), and its jump carries the same comment. The mark is on the chain
// itself rather than only on the jump because a chain need not have a jump.
// A chain of the item's name that does not start with the mark is someone
// else's: Create, Modify and Delete fail with ErrNotOwned and leave it alone.
// Read-back returns only marked chains and ignores every other rule, so
// foreign chains and rules, also in the built-in chains, are never touched.
//
// The mark is a rule, and a rule is easily lost by hand (iptables -F). So
// the state directory also records, per namespace instance and boot, the
// chains netagent wrote and has not deleted since (ipt_made.go). A chain
// without the mark that is in that record and holds nothing, or exactly
// its intended rules, is still netagent's: read back, repaired by the next
// apply or drift check, and deletable. A chain with rules of someone
// else's, or that netagent never made in this namespace instance, never is.
// A jump is recognised as netagent's only if it is exactly
// "-m comment --comment netagent -j <chain>".
//
// # Read-back and the kernel's spelling of rules
//
// iptables prints rules back in a normal form: "-s 10.0.0.1" as
// "-s 10.0.0.1/32", "-p tcp --dport 22" as "-p tcp -m tcp --dport 22",
// "--ctstate ESTABLISHED,RELATED" as "--ctstate RELATED,ESTABLISHED", and
// one rule with two source addresses as two rules. Rather than imitate
// iptables, the configurator lets the kernel normalise: after each write it
// reads the chain back and, if the kernel spells the rules differently,
// records the pair (intended rules, kernel rules) in
// <stateDir>/iptables/<namespace>/chains.json (all of the namespace's
// records, written once per batch; each rule one string, quoted as for
// iptables-restore; replaced by a rename; not synced, as it is a cache;
// the per-chain files of older versions are read, then removed). The kernel holds an item's rules when its rules equal the
// item's as written, or equal the recorded kernel form of exactly the
// item's rules. Create and Modify write nothing then, and read-back
// returns the rules as the intent spells them (taken from the hint, or
// from the record without a hint); otherwise read-back returns the kernel's
// form, which is what applying it would produce. So applying the same
// intent twice plans zero operations and writes nothing, also after a
// restart. The record is only a cache: it counts only while it matches the
// kernel, and losing it costs one atomic rewrite of the chain. Deps, which
// the kernel cannot know, are copied from the hint.
//
// The tables as ApplyBatch saw them after a write are kept (per namespace
// and family, until the next restore there) for one read-back: the one-shot's
// next pass reads back right after its own write, and ReuseAfterWrite lets
// that read-back use them instead of a second iptables-save; for a family
// the write did not touch, it uses what the read-back before the write
// saved (no restore since, at most a second old). Every other read-back
// (check, the daemon's drift check above all) saves afresh, so foreign
// changes are seen as before.
//
// # Sysctls
//
// A Sysctl item is a net.* parameter of the namespace, written as a file
// under /proc/sys/net opened on a thread inside the namespace (Target.Do).
// Before netagent first changes a parameter, it saves the value found in
// <stateDir>/sysctl.json (written atomically, re-read under a process-wide
// lock on every change, keyed by namespace instance: boot id, namespace
// name, and the namespace file's device and inode); the save comes before
// the write, so a crash in between still knows the original. Ownership is
// presence in that record: read-back returns exactly the recorded keys
// with their current values (those whose file vanished with its interface
// are skipped). Create and Modify write only when the value differs
// (compared field by field) and keep the first saved original; Delete
// writes the original back and forgets it. A parameter has no foreign
// owner to clash with; deleting one with no saved original is a no-op that
// leaves the value alone, which also makes Delete idempotent. Keys use "/"
// for a dot inside an interface name; keys that would leave /proc/sys/net
// are refused (ErrBadKey). SysctlAdoptions names, for `--adopt`, the
// intended parameters without a saved original whose file is there: their
// create takes over a value someone else chose (the saved original is
// their mark), equal to the intent's or not.
//
// # Testing without root
//
// fake.go holds the fakes of what the configurators call: FakeIPTables,
// an iptables of one family whose restore parses the input and applies it
// all or nothing, as iptables-restore's transaction (and fakeRunner and
// fakeLister, the iptables-save/-restore and iptables -S programs over
// it); FakeProcSys, a /proc/sys/net of the files it holds. Fake gathers
// them for a namespace, and Fake.Register and Fake.ReadBack run the real
// configurators over it, so that other packages' tests (agent/host) can.
// They are ordinary files of the package (as tailscale's linuxfw/fake.go),
// not a package of their own: they implement backend and sysctlFS, whose
// methods are the package's own (tableView), and the package's tests use
// them. The real iptables tests (ipt_*_test.go as root, test/netns) stay
// the reference for what iptables prints back.
package firewall
