// Package nftables writes netagent's own nftables tables over netlink
// (github.com/google/nftables), no nft binary needed.
//
// One item (items.NftTable) is one whole table. A table is netagent's
// when it holds the empty regular chain items.NftOwnerChain, which
// netagent writes into every table it makes; a table of the intent's
// family and name without it is a ClashError and is never written. Other
// tables (iptables-nft's, firewalld's, Docker's) are never read past
// their names nor written.
//
// # One transaction per operation
//
// Every operation reads the table (DumpTable: the decoded table, the
// handle of each rule, and the ruleset's generation id, NFT_MSG_GETGEN,
// read before and after the dump so that the dump is of one generation)
// and writes one netlink batch, one kernel transaction, all of it or
// nothing:
//
//   - Create of an absent table creates it whole (NLM_F_EXCL: a table
//     someone makes meanwhile fails the batch); over a table netagent left
//     (a crash) it converges it as Modify does.
//   - Modify diffs the dumped table against the intended one (diff.go)
//     and writes only the difference: chains and sets added and deleted,
//     a base chain's policy changed in place, rules deleted by handle and
//     inserted at their place (before the handle of the next kept rule,
//     or appended), set elements added and deleted. The rules of a chain
//     that stay are the longest common subsequence of the dumped and the
//     intended rules: they keep their handles and counters. What the
//     kernel cannot change in place (a base chain's hook, priority, type
//     or device; a set's type or flags) is deleted and added again in
//     the same batch, with the rules that reference it; NeedsRecreate is
//     false, so the rest of the table is untouched.
//   - Delete deletes the table.
//
// The configurator's dump reuses the last dump of the table (the
// reconcile's read-back, a moment before) when the generation is still
// the same: every commit of any writer bumps it, so the table is as
// dumped, and a GETGEN replaces a dump of thousands of rules. After
// netagent's own batch, when the generation is exactly the batch's (no
// other writer committed), the table is the intended one: the read-back
// takes it without a dump, with the rules' handles from the batch's
// answers (echo.go: the first and last NFT_MSG_NEWRULE of each run of
// rules ask for their echo, NLM_F_ECHO, and the kernel sends the
// committed rule with its handle before the batch's ack; the handles
// between follow from the kernel's counter, and the last's echo checks
// them); only a table written without them (a batch of more than
// 16 MiB of rules) has a Modify read them alone (one NFT_MSG_GETRULE dump
// decoding only chain and handle). The last dump is also kept in the state directory
// (dumpfile.go: nftables-dumps/FAMILY-TABLE.gob, with the boot, the
// namespace's cookie and the generation), so that the next process (a
// no-op apply, a check) reads it instead of dumping. Netagent dumps set
// elements on its own socket with a large receive buffer (dump.go): the
// kernel fills each datagram up to the reader's buffer, and walks an
// interval set's tree from its first element for each datagram.
// What changes without a commit (counters; elements that rules add or
// that time out) is not seen through a kept dump.
//
// The batch carries the generation of its dump (NFNL_BATCH_GENID in the
// batch's begin message): if another writer committed in between, the
// kernel refuses the whole batch (ERESTART) and the operation fails with
// ErrGenerationChanged, which the next reconcile retries from a new dump.
//
// netagent frames and sends the batch itself: the library marshals each
// message (its Conn over a capturing dial) but the rules and the maps'
// elements, which netagent frames around the library's expressions
// (ruleMessage; mapElementMessages), and kernel.go writes them into
// one buffer sent in one sendmsg on a socket whose send buffer it raises
// to the batch's size (SO_SNDBUFFORCE; the kernel refuses a larger
// message, EMSGSIZE) and whose receive buffer it raises to hold the
// rules' echoes, asking for the ack of the last message only, so that a
// batch of 10k rules cannot overflow the replies (google/nftables#350,
// #360: ENOBUFS after a commit). Set elements go in messages of 1000 (an
// element list is one netlink attribute, at most 64 KiB), each encoded as
// its message is made (setElements); when a batch exceeds 8 MiB, its
// set elements, and nothing else, go into follow-up batches, each checked
// against the generation after the previous one.
//
// The codec (codec.go) turns the typed rules into the expressions nft
// itself writes, and netagent's expressions back into the typed model,
// so that a second apply of the same intent plans nothing.
//
// FakeKernel (fake.go) is nf_tables in memory for tests, here and in
// other packages (RegisterFake): atomic batches, NLM_F_EXCL, handles,
// counters, the kernel's errnos, a generation per commit, and injected
// faults (a failing batch, a writer between dump and batch).
//
// The event subscription (events.go: Watcher) tells the daemon when
// another writer changed netagent's tables, so that it repairs them
// within a second.
package nftables
