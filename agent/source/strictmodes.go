package source

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/safefile"
)

// strictModes is the intent directory's trust rule: safefile.StrictModes
// (the state directory's rule too), with the names DirSource uses.
type strictModes struct {
	uid int    // the agent's own uid (besides root)
	dir string // the intent directory, as the real path
}

// resolved is an intent file that passed the checks: its real path, and
// the paths whose change changes it (the links followed, the real file).
type resolved struct {
	real string
	deps []string
}

var (
	// errRefused marks a file that exists but must not be trusted.
	errRefused = safefile.ErrRefused
	// errNotRegular: a directory or a device named like an intent file;
	// not a document.
	errNotRegular = safefile.ErrNotRegular
	// errTooLarge: a file larger than an intent document may be.
	errTooLarge = safefile.ErrTooLarge
)

func (m strictModes) rule() safefile.StrictModes { return safefile.StrictModes{UID: m.uid, Dir: m.dir} }

// checkDir checks the intent directory itself: its ancestors and itself.
func (m strictModes) checkDir() error { return m.rule().CheckDir() }

// check resolves path (an entry of the intent directory) and checks it and
// everything on the way to it (safefile.StrictModes.Check).
func (m strictModes) check(path string) (resolved, error) {
	r, err := m.rule().Check(path)
	return resolved{real: r.Real, deps: r.Deps}, err
}

// readChecked reads the file at real (a path check returned), refusing it
// if it was replaced in between by a link or a file that fails the checks,
// or if it is larger than an intent document may be
// (intent.MaxDocumentSize: errTooLarge).
func (m strictModes) readChecked(real string) ([]byte, error) {
	return m.rule().ReadChecked(real, intent.MaxDocumentSize)
}
