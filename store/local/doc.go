// Package local is the store backend of one host: a store.Store in a
// directory (under the agent's state directory), shared safely by the
// processes of the host (the daemon, the CLI), durable across crashes.
//
// # On disk
//
//	<dir>/lock               flock(2): one writer at a time, across processes
//	<dir>/log                one JSON line per write: {"op":"put","rev":7,"key":"a/b","sum":SHA256},
//	                         {"op":"del","rev":8,"key":"a/b"}; a compacted log
//	                         starts with {"op":"base","rev":R,"compacted":C}
//	<dir>/values/<rev>       the value written at revision rev (16 digits), unless
//	                         it is small (Options.InlineMax): then it is in its
//	                         log line, {"op":"put",...,"inline":true,"value":BASE64}
//
// A write takes the lock, reads the log's new lines (another process may
// have written), checks the expected version, writes the value file
// (statefile.WriteAtomic: temporary file, fsync, rename, directory
// fsync), then appends its line to the log and fsyncs it. The revision
// is the log's last one (the base line keeps it across compactions, even
// with every key deleted), so it survives a restart and strictly
// increases. A write is acknowledged (returns) only once it is durable:
// its value file fsynced, renamed and its directory fsynced before its
// line is written, its line fsynced before it returns (and, for a new
// log, the directory too); a compaction is written whole the same way.
// So what was acknowledged survives a crash or a power cut, and only the
// one write that had not returned can be lost. A crash before the append
// leaves a value file that nothing names (the next write of that
// revision replaces it). A crash or power cut in the middle of the append
// leaves a torn tail after the last acknowledged line: a last line cut
// short (no newline), or NUL bytes where the file grew but its data
// blocks were never written (a tail holding NULs none of whose lines is a
// record, newline or not). Readers ignore a torn tail; Open, and every
// writer, cut it under the lock (fsynced) and say so in the log
// (Options.Log). Anything else that is not a record (a line without NULs
// that does not decode, or a damaged line followed by a record: an
// acknowledged write after it) is damage: every read and write fails
// naming the log and the byte, and the log is left as it is, never cut
// (that would lose acknowledged writes). The log is opened as a state
// file (statefile.OpenFile: no link followed, never blocking, its owner
// and mode checked), as the lock and the value files are, and read a line
// at a time: a line longer than 16 MiB (a record with an inline value of
// at most MaxInline is far shorter) is damage, found without reading it
// whole, and so is a torn tail longer than that (a crash tears one line).
//
// Reads take no lock: value files are written once
// and removed only by compaction, after the log no longer names them (or,
// with Options.DropReplaced, as soon as their key is replaced or deleted;
// a read that finds one gone reads the log again). A reader knows the log
// it read by its inode and its first line: a compacted log may get the
// inode of the one it replaced.
//
// A put's line records its value file's SHA-256, and a read checks the
// file against it (opened as a state file: no link followed, its owner and
// mode checked): a value file cut short, emptied, changed or another
// revision's is ErrDamaged naming it, never an empty value or another
// version.
//
// # Watches
//
// Each Store keeps the log in memory (the live keys and the history since
// the last compaction) and reads only what was appended since. A watch
// delivers the history after its revision, reading each value at its
// revision, so several writes of one key each arrive. Watches wake on
// this Store's own writes, on inotify (fsnotify) events for the log (the
// writes of other Stores and processes), and every PollInterval in case
// inotify is unavailable or misses one.
//
// # Compaction
//
// When the history holds 2×Retain revisions, a writer rewrites the log
// (atomically) keeping the live keys and the last Retain revisions, and
// removes the values no longer live from before them. A watch resuming
// from before the compaction, or that has not yet read what was dropped,
// ends with store.ErrWatchClosed. Compact does it on demand.
//
// Local has no leases (store.Leaser): on one host nobody is left to see
// a writer's status expire.
package local
