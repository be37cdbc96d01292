// Package nftables writes netagent's own nftables tables over netlink
// (github.com/google/nftables), no nft binary needed.
//
// One item (items.NftTable) is one whole table. Every operation is one
// netlink batch, one kernel transaction: Create creates the table
// (NLM_F_EXCL, so a table someone makes meanwhile fails the batch),
// Modify deletes and re-creates it in the same batch, Delete deletes it.
// A table is netagent's when it holds the empty regular chain
// items.NftOwnerChain, which netagent writes into every table it makes;
// a table of the intent's family and name without it is a ClashError and
// is never written. Other tables (iptables-nft's, firewalld's, Docker's)
// are never read past their names nor written.
//
// The codec (codec.go) turns the typed rules into the expressions nft
// itself writes, and netagent's expressions back into the typed model,
// so that a second apply of the same intent plans nothing.
//
// The event subscription (events.go: Watcher) tells the daemon when
// another writer changed netagent's tables, so that it repairs them
// within a second.
//
// Not yet here: generation-id checks against concurrent writers, a fake of the kernel
// for unit tests of the configurator, diffs finer than a whole table.
package nftables
