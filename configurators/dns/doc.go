// Package dns hands the host's resolver configuration (items.DNS, merged
// by render from the intent's dns section and the leases) on: it writes
// the resolv.conf the agent owns, or gives the leases' servers to
// systemd-resolved per link.
//
// Which of the two, for the item's Path (the --resolv-conf flag):
//
//	Path is                                   then
//	-------                                   ----
//	absent                                    written (created)
//	a file starting with Header               written (it is the agent's)
//	a symlink into /run/systemd/resolve/,     systemd-resolved: each lease's servers
//	  and systemd-resolved runs                 and domains on its link (resolvectl dns,
//	                                            domain; revert when they go)
//	anything else (a file someone else        refused: ErrForeign, naming the path; the
//	  wrote, another symlink, a dangling        item fails and status shows it, nothing
//	  link to resolved's stub, a directory)     is written
//
// as systemd-networkd and NetworkManager do: NetworkManager writes
// /etc/resolv.conf only when it is not a symlink (rc-manager=symlink), and
// defers to systemd-resolved when it is its stub. To hand an existing
// file over, remove it (or put Header on its first line).
//
// Nothing reaches the file outside its grammar (Render): a name server
// only when it is a unicast address whose zone has no space, control
// character or comment sign, a search domain only when it is a DNS name,
// within glibc's bounds (3 servers, 6 domains, 256 characters: MaxLines,
// MaxBytes); the rest is left out and the item fails with ErrUnsafe, so
// that even a value that got past a lease's checks never starts a line.
// The file read back is opened without following a symlink or blocking,
// and read bounded.
//
// The file is written atomically: a temporary file in the same directory,
// fsynced, renamed over the path, and the directory fsynced; a reader sees
// the old file or the new one, never half of one. Deleting the item
// removes the file, if it is still the agent's; so does an item with
// nothing to say (items.DNS.Silent, which render puts while a path is
// given, so that a one-shot apply, reading back only what is intended,
// removes the servers of a dns section or a lease gone since).
//
// systemd-resolved's global servers come from resolved.conf, which the
// agent does not edit: an intent dns section under resolved is applied
// as far as it can be (the leases' per-link part) and the item then fails
// with ErrResolvedGlobal, so that status says where it went.
//
// Under systemd-resolved nothing is read back: the per-link part is taken
// as held once handed over (resolved keeps it while the link lives).
//
// systemd-resolved is behind the narrow Resolved interface: Resolvectl
// runs resolvectl(1) (its D-Bus API is not needed for three calls), tests
// use a fake.
package dns
