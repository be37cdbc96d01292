package oneshot

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/versions"
)

// VersionSpec says how a writer records the intent it accepted as a
// numbered version of the namespace (agent/versions).
type VersionSpec struct {
	// Source names where the version came from ("apply lan.json").
	Source string
	// IfVersion (--if-version) refuses the write unless the current
	// version is it (versions.Any: any).
	IfVersion int
	// Keep is how many versions to keep.
	Keep int
}

// RecordVersion checks s.IfVersion and records files (the accepted
// intent, by name) as the new version from s.Source in o.StateDir. The
// caller holds the namespace's lock. A refused compare-and-swap is
// versions.ErrConflict.
func RecordVersion(o *Options, s VersionSpec, files map[string]*intent.Intent) (versions.Meta, error) {
	st := versions.Open(o.StateDir, s.Keep)
	defer st.Close()
	rec := versions.Recorder{Store: st, Log: o.log()}
	cur, _, err := rec.Record(s.Source, files, s.IfVersion)
	return cur, err
}
