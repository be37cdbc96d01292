package versions

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/intent"
)

// Recorder writes the versions of one target: the one copy of "the
// accepted intent becomes a version" that every writer calls (the one-shot
// apply, try and rollback; the daemon's documents, its rollbacks and its
// confirmed trials), so that the check of the expected number, the version
// written and what the log says of it are the same for all. The caller
// holds the target's lock (agent/host) from its check to its apply.
type Recorder struct {
	Store Store
	// Log, if set, is told of each new version.
	Log logrus.FieldLogger
}

// Record writes the version of files (the accepted documents, parsed, by
// name) from source; expect is as for Store.Write. It returns the current
// version after the write and whether it is a new one.
func (r Recorder) Record(source string, files map[string]*intent.Intent, expect int) (Meta, bool, error) {
	v, err := NewParsed(source, files)
	if err != nil {
		return Meta{}, false, err
	}
	return r.Write(v, expect)
}

// Write writes v (Store.Write) and logs it when it is a new version.
func (r Recorder) Write(v Version, expect int) (Meta, bool, error) {
	cur, isNew, err := r.Store.Write(v, expect)
	if err != nil {
		return Meta{}, false, err
	}
	m := cur.Meta()
	if isNew && r.Log != nil {
		r.Log.WithFields(LogFields(m)).Info("new version of the intent")
	}
	return m, isNew, nil
}

// Rollback is the package's Rollback on r's store, logged.
func (r Recorder) Rollback(n, expect int) (back *Version, cur Meta, err error) {
	back, v, err := Rollback(r.Store, n, expect)
	if err != nil {
		return nil, Meta{}, err
	}
	cur = v.Meta()
	if r.Log != nil {
		r.Log.WithFields(LogFields(cur)).Info("rollback")
	}
	return back, cur, nil
}

// Current returns the metadata of the current version of s, nil if none,
// reading the index alone (List), never an intent.
func Current(s Store) (*Meta, error) {
	list, err := s.List()
	if err != nil || len(list) == 0 {
		return nil, err
	}
	m := list[len(list)-1]
	return &m, nil
}

// CheckCurrent is Check against a current version already known (nil:
// none yet): a *ConflictError unless its number is expect (Any: never).
func CheckCurrent(cur *Meta, expect int) error {
	if expect == Any {
		return nil
	}
	n := 0
	if cur != nil {
		n = cur.Number
	}
	if n != expect {
		return &ConflictError{Current: n, Expected: expect}
	}
	return nil
}

// LogFields are the fields that name version m in a log.
func LogFields(m Meta) logrus.Fields {
	return logrus.Fields{"version": m.Number, "digest": Short(m.Digest), "source": m.Source}
}

// FilesSource is the source of a version of the files named: verb and
// the names as given ("apply a.json b.json").
func FilesSource(verb string, names []string) string {
	return strings.Join(append([]string{verb}, names...), " ")
}

// DaemonSource is the source of a version of the daemon's documents:
// "daemon: files a.json,b.json" (sorted), or "api" for an apply over the
// socket (viaAPI).
func DaemonSource[V any](files map[string]V, viaAPI bool) string {
	if viaAPI {
		return "api"
	}
	return "daemon: files " + strings.Join(slices.Sorted(maps.Keys(files)), ",")
}

// NextTrialName is the intent file a confirmed daemon trial writes by
// default: trial-<the next version>.json.
func NextTrialName(cur *Meta) string {
	next := 1
	if cur != nil {
		next = cur.Number + 1
	}
	return fmt.Sprintf("trial-%d.json", next)
}
