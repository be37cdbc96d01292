// Package source is where the daemon's intent documents come from.
//
// An IntentSource holds documents by name: Load returns all of them now,
// Watch says only "changed" (the agent's loop Loads the source again after
// a quiet period and compares contents). A source that can tell a change
// known complete (a file renamed into place) from one that may be half
// made is a SettledWatcher: the loop then waits a short settle window
// instead of the quiet period.
//
// DirSource is a directory of *.json files, watched as a directory (with
// fsnotify) so that rename-based writes are seen. It trusts a file only if
// no one but root (or the agent's own user) can change it, or anything on
// the way to it: the strict modes of package internal/safefile, the state
// directory's rule too (strictmodes.go). A file that fails them comes back
// in a *RefusedError, beside the documents that pass; the loop keeps the
// refused file's last good version and shows why in status.
//
// The fleet member's source over a shared store is package agent/member's
// StoreSource; the socket API's in-memory document is the loop's own.
//
// Rules: the package knows nothing of the loop (it never imports package
// agent); a source's Watch runs in a goroutine of its own and only sends
// names; Load may be called from the loop at any time and never blocks
// on anything but the filesystem.
package source
