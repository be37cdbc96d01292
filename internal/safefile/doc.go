// Package safefile opens and judges files that do not come from the
// intent itself but that netagent reads or writes as root: files an
// intent names (WireGuard key files), intent files in the intent
// directory, and the records of the state directory. Whoever controls
// such a file, or a directory on the way to it, must not be able to make
// root block (a FIFO), follow a link of their choosing, or read more than
// is bounded.
//
// One rule of trust (StrictModes: owned by root or the agent's user,
// writable by no one else, the directories on the way too) and one way of
// opening (ReadAt, ReadNamed: no symbolic link at the last component, a
// non-blocking open, the opened descriptor checked to be the regular file
// looked at, a bounded read) serve every caller.
package safefile
