package source

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// IntentSource delivers intent documents: a directory of files today, a
// key prefix of a distributed store tomorrow. The loop calls Load; Watch
// runs in a goroutine of its own.
type IntentSource interface {
	// Name identifies the source in logs and status ("dir:/etc/netagent").
	Name() string
	// Load returns every document the source holds now, keyed by a name
	// unique across sources (a file name). An error leaves the source's
	// documents as they were: a source that cannot be read is not a source
	// that is empty.
	Load() (map[string][]byte, error)
	// Watch sends Name on changed whenever the documents may have changed,
	// until ctx ends. It coalesces: while a send is pending, further
	// changes are the same change. It handles its own errors (logging
	// them, watching again) and returns when ctx ends.
	Watch(ctx context.Context, changed chan<- string)
}

// SettledWatcher is a source that can tell a change known complete (a
// file renamed into place) from one that may be half made: it reports the
// first on settled, which the agent's loop handles after its settle window
// (agent.Config.IntentSettle) instead of its quiet period.
type SettledWatcher interface {
	WatchSettled(ctx context.Context, changed, settled chan<- string)
}

// RefusedError is what Load returns, with the other documents, when some
// documents exist but must not be applied (an intent file that a user
// other than root can change): the loop keeps each one's last good version
// and shows the reason in status.
type RefusedError struct {
	Docs map[string]error // by document name
}

func (e *RefusedError) Error() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(e.Docs)) {
		parts = append(parts, fmt.Sprintf("%s: %v", name, e.Docs[name]))
	}
	return "refusing intent files: " + strings.Join(parts, "; ")
}
