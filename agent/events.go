package agent

// The status stream (`netagent status --watch`, agent/api): the loop
// publishes the changes of its status at the end of each turn, only while
// someone watches, into the hub (api.Hub), which never waits for a client.

import (
	"context"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/status"
)

// publishEvents publishes what changed in the status since the last turn,
// in the loop, while someone watches.
func (a *Agent) publishEvents() {
	if a.ev.Count() == 0 {
		a.evLast = nil
		return
	}
	a.snapshotEvents()
}

// snapshotEvents builds the status, publishes its changes since the last
// one (if any) and keeps it as the last.
func (a *Agent) snapshotEvents() status.Status {
	st := a.status()
	cur := api.SnapshotOf(&st)
	if a.evLast != nil {
		a.ev.Publish(api.EventsBetween(a.evLast, cur, &st, time.Now()))
	}
	a.evLast = cur
	return st
}

// startWatch answers a CmdWatch in the loop: it publishes what changed to
// the others, then adds the call's subscriber, whose events are the
// changes from the status it is answered with. One without a subscriber
// (not from watchCall) is refused.
func (a *Agent) startWatch(c call) api.Response {
	if c.sub == nil {
		return api.Response{Error: "watch streams events: use the socket (netagent status --watch) or Agent.Subscribe"}
	}
	st := a.snapshotEvents()
	a.ev.Add(c.sub)
	return api.Response{Status: &st}
}

// watchCall hands a CmdWatch with its subscriber to the loop and waits for
// the status it starts from.
func (a *Agent) watchCall(ctx context.Context, s *api.Subscriber) (api.Response, error) {
	return a.send(ctx, call{req: api.Request{Command: api.CmdWatch}, reply: make(chan api.Response, 1), sub: s})
}

// Subscribe streams the agent's events to f, starting with an EventStatus,
// until ctx ends, the agent stops or f fails (api.Handler: the socket
// server streams them to a client).
func (a *Agent) Subscribe(ctx context.Context, f func(api.Event) error) error {
	s := api.NewSubscriber(api.WatchBuffer)
	defer a.ev.Remove(s)
	resp, err := a.watchCall(ctx, s)
	if err != nil {
		return err
	}
	if err := f(api.StatusEvent(resp.Status, time.Now())); err != nil {
		return err
	}
	return a.ev.Stream(ctx, s, a.done, f)
}
