package api

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/status"
)

// Snapshot is what the events compare of two statuses (SnapshotOf).
type Snapshot struct {
	ready bool
	conds map[string]fileCondition // file + "\x00" + type
	items map[string]status.ItemStatus
	drift map[string]status.DriftStatus
	links map[string]string
	trial bool
	last  string // the last trial's result and time
}

// fileCondition is a condition of the document file.
type fileCondition struct {
	file string
	status.Condition
}

// SnapshotOf is what the events compare of st.
func SnapshotOf(st *status.Status) *Snapshot {
	w := &Snapshot{ready: st.Ready, conds: map[string]fileCondition{}, items: map[string]status.ItemStatus{},
		drift: map[string]status.DriftStatus{}, links: map[string]string{}, trial: st.Trial != nil}
	for _, f := range st.Files {
		for _, c := range f.Conditions {
			w.conds[f.Name+"\x00"+c.Type] = fileCondition{f.Name, c}
		}
	}
	for _, it := range st.Items {
		w.items[it.Item] = it
	}
	for _, d := range st.Drifted {
		w.drift[d.Item] = d
	}
	for _, l := range st.Links {
		w.links[l.Name] = linkState(l)
	}
	if t := st.LastTrial; t != nil {
		w.last = t.Result + "@" + t.At.String()
	}
	return w
}

// linkState names a link's state in events.
func linkState(l status.LinkStatus) string {
	switch {
	case !l.AdminUp:
		return "admin-down"
	case !l.Carrier:
		return "no-carrier"
	case !l.OperUp:
		return "down"
	}
	return "up"
}

// EventsBetween lists what changed from old to cur, sorted by kind, then
// by name; st is cur's status (it says how the last trial ended).
func EventsBetween(old, cur *Snapshot, st *status.Status, now time.Time) []Event {
	var out []Event
	if old.trial != cur.trial || old.last != cur.last {
		out = append(out, trialEvent(old.trial, cur.trial, st.Trial, st.LastTrial))
	}
	out = append(out, changes(old.conds, cur.conds, sameCondition, conditionEvent)...)
	out = append(out, changes(old.items, cur.items, sameItem, itemEvent)...)
	out = append(out, changes(old.drift, cur.drift, sameDrift, driftEvent)...)
	out = append(out, changes(old.links, cur.links, func(o, c string) bool { return o == c }, linkEvent)...)
	if old.ready != cur.ready {
		out = append(out, Event{Kind: EventReady, From: fmt.Sprint(old.ready), To: fmt.Sprint(cur.ready)})
	}
	for i := range out {
		out[i].Format, out[i].Time = EventFormat, now
	}
	return out
}

// changes lists, in the order of their keys, the events of what old and
// cur do not both hold the same of (same); ev makes one (had, has: old,
// cur hold it).
func changes[V any](old, cur map[string]V, same func(o, c V) bool, ev func(k string, o, c V, had, has bool) Event) []Event {
	var out []Event
	for _, k := range unionKeys(old, cur) {
		o, had := old[k]
		c, has := cur[k]
		if had != has || !same(o, c) {
			out = append(out, ev(k, o, c, had, has))
		}
	}
	return out
}

// trialEvent: a trial started (was pending: from; the message names
// the probes that failed before it, which do not judge it), ended (last)
// or both.
func trialEvent(was, is bool, pending *status.TrialStatus, last *status.TrialOutcome) Event {
	e := Event{Kind: EventTrial}
	if was {
		e.From = "pending"
	}
	switch {
	case is:
		e.To = "pending"
		if pending != nil && len(pending.FailingBefore) > 0 {
			e.Message = "not counted, failing before the change: " + strings.Join(pending.FailingBefore, "; ")
		}
	case last != nil:
		e.To, e.Message = last.Result, last.Reason
	}
	return e
}

func sameCondition(o, c fileCondition) bool { return o.Status == c.Status && o.Reason == c.Reason }

func conditionEvent(_ string, o, c fileCondition, had, has bool) Event {
	e := Event{Kind: EventCondition, File: cmp.Or(c.file, o.file), Condition: cmp.Or(c.Type, o.Type)}
	if had {
		e.From = boolName(o.Status)
	}
	if has {
		e.To, e.Reason, e.Message = boolName(c.Status), c.Reason, c.Message
	}
	return e
}

func sameItem(o, c status.ItemStatus) bool {
	return o.State == c.State && o.LastError == c.LastError && o.BlockedOn == c.BlockedOn
}

func itemEvent(k string, o, c status.ItemStatus, had, has bool) Event {
	e := Event{Kind: EventItem, Item: k, File: cmp.Or(c.File, o.File)}
	if had {
		e.From = o.State
	}
	if has {
		e.To, e.Message = c.State, cmp.Or(c.LastError, c.BlockedOn, c.Orphaned)
	}
	return e
}

func sameDrift(o, c status.DriftStatus) bool { return driftText(o) == driftText(c) }

func driftEvent(k string, o, c status.DriftStatus, had, has bool) Event {
	e := Event{Kind: EventDrift, Item: k, File: cmp.Or(c.File, o.File)}
	if had {
		e.From = "drifted"
	}
	if has {
		e.To, e.Message = "drifted", driftText(c)
	}
	return e
}

func linkEvent(k string, o, c string, _, _ bool) Event {
	return Event{Kind: EventLink, Link: k, From: o, To: c}
}

// driftText says what drifted: each attribute, intended and running.
func driftText(d status.DriftStatus) string {
	if len(d.Fields) == 0 {
		return d.What
	}
	var parts []string
	for _, f := range d.Fields {
		parts = append(parts, fmt.Sprintf("%s: intended %s, running %s", f.Field, f.Intended, f.Running))
	}
	return strings.Join(parts, "; ")
}

func boolName(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
