package ethtool

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// resetting are the groups whose change many drivers apply by resetting
// the link (carrier down and up): channels and rings reallocate the
// queues, a link mode renegotiates.
var resetting = map[string]string{
	"channels": "many NIC drivers reset the link (carrier down and up) on a channel change",
	"rings":    "many NIC drivers reset the link (carrier down and up) on a ring change",
	"link":     "the link renegotiates",
}

// Predict says what an operation on ethtool settings does to traffic:
// old is the settings as read back before (nil: not known), want the
// operation's item (the old one for a delete, which gives back the
// values found: every setting it holds may change).
func Predict(op reconciler.Operation, old, want *items.Ethtool) disrupt.Prediction {
	changed := changedKeys(op, old, want)
	var why []string
	for _, key := range changed {
		group, _ := splitKey(key)
		if reason, ok := resetting[group]; ok {
			why = append(why, fmt.Sprintf("%s %s: %s", key, describeChange(op, old, want, key), reason))
		}
	}
	if len(why) == 0 {
		return disrupt.In("changed in place")
	}
	return disrupt.Maybe(disrupt.Flap, strings.Join(why, "; "), want.Interface)
}

// changedKeys are the settings the operation may write, sorted.
func changedKeys(op reconciler.Operation, old, want *items.Ethtool) []string {
	if op == reconciler.OpDelete || old == nil {
		return slices.Sorted(maps.Keys(want.Settings))
	}
	var out []string
	for key, v := range want.Settings {
		if cur, ok := old.Settings[key]; !ok || cur != v {
			out = append(out, key)
		}
	}
	for key := range old.Settings {
		if _, ok := want.Settings[key]; !ok {
			out = append(out, key) // given back
		}
	}
	slices.Sort(out)
	return out
}

// describeChange is "1 -> 2", "-> 2" (old unknown) or "given back".
func describeChange(op reconciler.Operation, old, want *items.Ethtool, key string) string {
	v, named := want.Settings[key]
	switch {
	case op == reconciler.OpDelete || !named:
		return "given back"
	case old != nil:
		if cur, ok := old.Settings[key]; ok {
			return fmt.Sprintf("%d -> %d", cur, v)
		}
	}
	return fmt.Sprintf("-> %d", v)
}
