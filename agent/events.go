package agent

// The status stream (`netagent status --watch`): a client sends CmdWatch
// and keeps the connection open; the daemon answers with its status, then
// writes one Event per line (JSON) whenever the status changes: a
// condition of a document flips, an item changes state (fails, recovers,
// is blocked), an item drifts, an external link goes down or up, a trial
// starts or ends, the agent becomes ready or stops being so.
//
// The loop publishes at the end of each turn, and only while someone
// watches (it builds the status then, as for CmdStatus). It never waits
// for a client: each subscriber has a bounded buffer; when it is full the
// events that follow are dropped, counted, and the client gets one
// "missed" event with their number once it has read what was buffered.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/netagent/netagent/agent/status"
	"github.com/sirupsen/logrus"
)

// watchBuffer is how many events a subscriber may have unread before the
// next ones are dropped (and counted).
const watchBuffer = 256

// eventHub holds the subscribers; its methods are safe anywhere. prev is
// the status last published, owned by the loop.
type eventHub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
	prev *watchSnap
}

func newEventHub() *eventHub { return &eventHub{subs: map[*subscriber]struct{}{}} }

// subscriber is one watching client: a bounded buffer and the count of
// the events dropped since it last read (guarded by the hub's mu).
type subscriber struct {
	ch     chan Event
	missed int
	wake   chan struct{} // signalled when missed becomes non-zero
}

func newSubscriber(n int) *subscriber {
	return &subscriber{ch: make(chan Event, n), wake: make(chan struct{}, 1)}
}

func (h *eventHub) add(s *subscriber) {
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
}

func (h *eventHub) remove(s *subscriber) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

func (h *eventHub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// publish hands evs to every subscriber without waiting: a subscriber
// whose buffer is full, or that already missed events, misses them too
// (in order: nothing is delivered after a gap before the gap is told).
func (h *eventHub) publish(evs []Event) {
	if len(evs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		for _, e := range evs {
			if s.missed == 0 {
				select {
				case s.ch <- e:
					continue
				default:
				}
			}
			s.missed++
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
}

// next returns the subscriber's next event: what is buffered, then the
// count of the events it missed; false when done is closed first.
func (h *eventHub) next(s *subscriber, done <-chan struct{}) (Event, bool) {
	for {
		select {
		case e := <-s.ch:
			return e, true
		default:
		}
		h.mu.Lock()
		n := s.missed
		s.missed = 0
		h.mu.Unlock()
		if n > 0 {
			return Event{Format: EventFormat, Time: time.Now(), Kind: EventMissed, Missed: n}, true
		}
		select {
		case e := <-s.ch:
			return e, true
		case <-s.wake:
		case <-done:
			return Event{}, false
		}
	}
}

// watchSnap is what the events compare of two statuses.
type watchSnap struct {
	ready bool
	conds map[string]status.Condition // file + "\x00" + type
	files map[string]string           // the file of a condition key
	items map[string]status.ItemStatus
	drift map[string]status.DriftStatus
	links map[string]string
	trial bool
	last  string // the last trial's result and time
}

func snapOf(st *status.Status) *watchSnap {
	w := &watchSnap{ready: st.Ready, conds: map[string]status.Condition{}, files: map[string]string{},
		items: map[string]status.ItemStatus{}, drift: map[string]status.DriftStatus{}, links: map[string]string{}, trial: st.Trial != nil}
	for _, f := range st.Files {
		for _, c := range f.Conditions {
			k := f.Name + "\x00" + c.Type
			w.conds[k], w.files[k] = c, f.Name
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

// eventsBetween lists what changed from old to cur, sorted by kind, then
// by name.
func eventsBetween(old, cur *watchSnap, st *status.Status, now time.Time) []Event {
	ev := func(kind string) Event { return Event{Format: EventFormat, Time: now, Kind: kind} }
	var out []Event
	if old.trial != cur.trial || old.last != cur.last {
		e := ev(EventTrial)
		if old.trial {
			e.From = "pending"
		}
		switch {
		case cur.trial:
			e.To = "pending"
		case st.LastTrial != nil:
			e.To, e.Message = st.LastTrial.Result, st.LastTrial.Reason
		}
		out = append(out, e)
	}
	for _, k := range unionKeys(old.conds, cur.conds) {
		o, had := old.conds[k]
		c, has := cur.conds[k]
		if had == has && o.Status == c.Status && o.Reason == c.Reason {
			continue
		}
		e := ev(EventCondition)
		e.File = firstNonEmpty(cur.files[k], old.files[k])
		e.Condition = firstNonEmpty(c.Type, o.Type)
		if had {
			e.From = boolName(o.Status)
		}
		if has {
			e.To, e.Reason, e.Message = boolName(c.Status), c.Reason, c.Message
		}
		out = append(out, e)
	}
	for _, k := range unionKeys(old.items, cur.items) {
		o, had := old.items[k]
		c, has := cur.items[k]
		if had == has && o.State == c.State && o.LastError == c.LastError && o.BlockedOn == c.BlockedOn {
			continue
		}
		e := ev(EventItem)
		e.Item, e.File = k, firstNonEmpty(c.File, o.File)
		if had {
			e.From = o.State
		}
		if has {
			e.To, e.Message = c.State, firstNonEmpty(c.LastError, firstNonEmpty(c.BlockedOn, c.Orphaned))
		}
		out = append(out, e)
	}
	for _, k := range unionKeys(old.drift, cur.drift) {
		o, had := old.drift[k]
		c, has := cur.drift[k]
		if had == has && driftText(o) == driftText(c) {
			continue
		}
		e := ev(EventDrift)
		e.Item, e.File = k, firstNonEmpty(c.File, o.File)
		if had {
			e.From = "drifted"
		}
		if has {
			e.To, e.Message = "drifted", driftText(c)
		}
		out = append(out, e)
	}
	for _, k := range unionKeys(old.links, cur.links) {
		if old.links[k] != cur.links[k] {
			e := ev(EventLink)
			e.Link, e.From, e.To = k, old.links[k], cur.links[k]
			out = append(out, e)
		}
	}
	if old.ready != cur.ready {
		e := ev(EventReady)
		e.From, e.To = fmt.Sprint(old.ready), fmt.Sprint(cur.ready)
		out = append(out, e)
	}
	return out
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

// publishEvents publishes what changed in the status since the last turn,
// in the loop, while someone watches.
func (a *Agent) publishEvents() {
	if a.ev.count() == 0 {
		a.ev.prev = nil
		return
	}
	a.snapshotEvents()
}

// snapshotEvents builds the status, publishes its changes since the last
// one (if any) and keeps it as the last.
func (a *Agent) snapshotEvents() status.Status {
	st := a.status()
	cur := snapOf(&st)
	if a.ev.prev != nil {
		a.ev.publish(eventsBetween(a.ev.prev, cur, &st, time.Now()))
	}
	a.ev.prev = cur
	return st
}

// startWatch, in the loop, publishes what changed to the others, then adds
// s: its events are the changes from the status it is answered with.
func (a *Agent) startWatch(s *subscriber) Response {
	st := a.snapshotEvents()
	a.ev.add(s)
	return Response{Status: &st}
}

// watchCall hands a CmdWatch with its subscriber to the loop and waits for
// the status it starts from.
func (a *Agent) watchCall(ctx context.Context, s *subscriber) (Response, error) {
	return a.send(ctx, call{req: Request{Command: CmdWatch}, reply: make(chan Response, 1), sub: s})
}

// Subscribe streams the agent's events to f, starting with an EventStatus,
// until ctx ends, the agent stops or f fails (in-process; the socket
// server does the same over a connection).
func (a *Agent) Subscribe(ctx context.Context, f func(Event) error) error {
	return a.subscribe(ctx, newSubscriber(watchBuffer), f)
}

func (a *Agent) subscribe(ctx context.Context, s *subscriber, f func(Event) error) error {
	defer a.ev.remove(s)
	resp, err := a.watchCall(ctx, s)
	if err != nil {
		return err
	}
	if err := f(Event{Format: EventFormat, Time: time.Now(), Kind: EventStatus, Status: resp.Status}); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-a.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	done := ctx.Done()
	for {
		e, ok := a.ev.next(s, done)
		if !ok {
			select {
			case <-a.done:
				return ErrNotRunning
			default:
				return ctx.Err()
			}
		}
		if err := f(e); err != nil {
			return err
		}
	}
}

// serveWatch streams events on conn until the client hangs up, a write
// takes longer than requestTimeout, or ctx ends.
func (a *Agent) serveWatch(ctx context.Context, conn *net.UnixConn, log logrus.FieldLogger) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn.SetReadDeadline(time.Time{})
	go func() { // the client sends nothing more: its end of the stream is a hang-up
		io.Copy(io.Discard, conn)
		cancel()
	}()
	enc := json.NewEncoder(conn)
	err := a.Subscribe(ctx, func(e Event) error {
		conn.SetWriteDeadline(time.Now().Add(requestTimeout))
		return enc.Encode(e)
	})
	if err != nil && ctx.Err() == nil {
		log.WithError(err).Debug("api: watch ended")
	}
}

// Watcher reads the event stream of an agent's socket (Watch).
type Watcher struct {
	conn net.Conn
	dec  *json.Decoder
	stop func() bool
}

// Watch connects to the agent at path and subscribes to its events; the
// first one Next returns is the status they start from (EventStatus).
// Ending ctx ends the stream.
func Watch(ctx context.Context, path string) (*Watcher, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("connecting to the agent at %s: %w", path, err)
	}
	if err := json.NewEncoder(conn).Encode(Request{Command: CmdWatch}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("sending the request to %s: %w", path, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	return &Watcher{conn: conn, dec: json.NewDecoder(conn), stop: stop}, nil
}

// Next returns the next event. An agent that refused the request answers
// with an Error: Next returns it.
func (w *Watcher) Next() (Event, error) {
	var raw struct {
		Event
		Error string `json:"error,omitempty"`
	}
	if err := w.dec.Decode(&raw); err != nil {
		return Event{}, err
	}
	if raw.Error != "" {
		return Event{}, fmt.Errorf("the agent answered: %s", raw.Error)
	}
	return raw.Event, nil
}

// Close ends the stream.
func (w *Watcher) Close() error {
	w.stop()
	return w.conn.Close()
}

// startWatchCall answers a CmdWatch in the loop: one without a subscriber
// (not from watchCall) is refused.
func (a *Agent) startWatchCall(c call) Response {
	if c.sub == nil {
		return Response{Error: "watch streams events: use the socket (netagent status --watch) or Agent.Subscribe"}
	}
	return a.startWatch(c.sub)
}
