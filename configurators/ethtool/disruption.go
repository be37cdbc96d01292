package ethtool

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
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
	w := flat(want)
	var o map[string]string
	if old != nil {
		o = flat(old)
	}
	var why []string
	for _, key := range changedKeys(op, o, w) {
		group, _ := splitKey(key)
		if reason, ok := resetting[group]; ok {
			why = append(why, fmt.Sprintf("%s %s: %s", key, describeChange(op, o, w, key), reason))
		}
	}
	if len(why) == 0 {
		return disrupt.In("changed in place")
	}
	return disrupt.Maybe(disrupt.Flap, strings.Join(why, "; "), want.Interface)
}

// flat is every setting of e as its value's text: numbers in decimal,
// sets as their names joined by commas.
func flat(e *items.Ethtool) map[string]string {
	out := make(map[string]string, len(e.Settings)+len(e.Sets))
	for key, v := range e.Settings {
		out[key] = strconv.FormatUint(uint64(v), 10)
	}
	for key, v := range e.Sets {
		out[key] = strings.Join(v, ",")
	}
	return out
}

// changedKeys are the settings the operation may write, sorted.
func changedKeys(op reconciler.Operation, old, want map[string]string) []string {
	if op == reconciler.OpDelete || old == nil {
		return slices.Sorted(maps.Keys(want))
	}
	var out []string
	for key, v := range want {
		if cur, ok := old[key]; !ok || cur != v {
			out = append(out, key)
		}
	}
	for key := range old {
		if _, ok := want[key]; !ok {
			out = append(out, key) // given back
		}
	}
	slices.Sort(out)
	return out
}

// describeChange is "1 -> 2", "-> 2" (old unknown) or "given back".
func describeChange(op reconciler.Operation, old, want map[string]string, key string) string {
	v, named := want[key]
	switch {
	case op == reconciler.OpDelete || !named:
		return "given back"
	case old != nil:
		if cur, ok := old[key]; ok {
			return fmt.Sprintf("%s -> %s", cur, v)
		}
	}
	return "-> " + v
}
