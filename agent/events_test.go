package agent

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/status"
)

// A watcher sees an item go blocked and a condition flip when the
// uplink loses its carrier, then both come back.
func TestWatchStreamsConditionAndItemChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		events := make(chan Event, 100)
		ctx, cancel := context.WithCancel(context.Background())
		ended := make(chan error, 1)
		go func() {
			ended <- r.a.Subscribe(ctx, func(e Event) error { events <- e; return nil })
		}()
		first := <-events
		if first.Kind != EventStatus || first.Status == nil || !first.Status.Ready || first.Format != EventFormat {
			t.Fatalf("first event %+v", first)
		}
		r.k.setLink(uplink(2, false))
		r.linkEvent("uplink0")
		time.Sleep(time.Second)
		synctest.Wait()
		got := drain(events)
		want := []string{
			"condition 20-routes.json Converged: True -> False",
			"item route/" + routeRef.Name + " (20-routes.json): created -> blocked",
			"link uplink0: up -> no-carrier",
			"ready true -> false",
		}
		checkEvents(t, got, want)
		r.k.setLink(uplink(2, true))
		r.linkEvent("uplink0")
		time.Sleep(time.Second)
		synctest.Wait()
		checkEvents(t, drain(events), []string{
			"condition 20-routes.json Converged: False -> True",
			"item route/" + routeRef.Name + " (20-routes.json): blocked -> created",
			"link uplink0: no-carrier -> up",
			"ready false -> true",
		})
		cancel()
		if err := <-ended; err != context.Canceled {
			t.Errorf("Subscribe after cancel: %v", err)
		}
		if n := r.a.ev.count(); n != 0 {
			t.Errorf("%d subscribers left after the watcher went", n)
		}
	})
}

// A client that does not read never holds the loop up: it misses events
// and is told how many once it reads again.
func TestWatchSlowClientDoesNotBlockTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		s := newSubscriber(2)
		if _, err := r.a.watchCall(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		for i := range 6 { // each flap: several events, far more than 2
			r.k.setLink(uplink(2, i%2 == 1))
			r.linkEvent("uplink0")
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if !r.status().Ready { // the loop answers: it was not held up
			t.Error("not ready after the last flap")
		}
		var kinds []string
		missed := 0
		for range 3 {
			e, ok := r.a.ev.next(s, nil)
			if !ok {
				t.Fatal("next: not ok")
			}
			kinds = append(kinds, e.Kind)
			missed += e.Missed
		}
		if kinds[0] == EventMissed || kinds[1] == EventMissed || kinds[2] != EventMissed || missed < 10 {
			t.Errorf("events read %v, %d missed; want the 2 buffered, then a missed event", kinds, missed)
		}
		r.a.ev.remove(s)
	})
}

func drain(ch chan Event) []Event {
	var out []Event
	for {
		select {
		case e := <-ch:
			out = append(out, e)
		default:
			return out
		}
	}
}

func checkEvents(t *testing.T, got []Event, want []string) {
	t.Helper()
	var lines []string
	for _, e := range got {
		if e.Format != EventFormat || e.Time.IsZero() {
			t.Errorf("event without format or time: %+v", e)
		}
		lines = append(lines, e.String())
	}
	all := strings.Join(lines, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("events lack %q:\n%s", w, all)
		}
	}
}

// The events between two statuses: a trial that starts and ends, an item
// that drifts and one whose drift is gone, a document that goes away.
func TestEventsBetween(t *testing.T) {
	now := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	file := status.FileStatus{Name: "a.json", Conditions: []status.Condition{{Type: status.CondValid, Status: true, Reason: "Accepted"}}}
	before := &status.Status{Ready: true, Files: []status.FileStatus{file},
		Drifted: []status.DriftStatus{{Item: "route/r", File: "a.json", What: "changed", Fields: []status.DriftField{{Field: "metric", Intended: "10", Running: "20"}}}}}
	during := &status.Status{Ready: true, Trial: &status.TrialStatus{Since: now},
		Drifted: []status.DriftStatus{{Item: "sysctl/s", File: "b.json", What: "gone"}}}
	after := &status.Status{Ready: true, LastTrial: &status.TrialOutcome{Result: "reverted", Reason: "timeout", At: now}}
	lines := func(old, cur *status.Status) []string {
		var out []string
		for _, e := range eventsBetween(snapOf(old), snapOf(cur), cur, now) {
			out = append(out, e.String())
		}
		return out
	}
	got := strings.Join(lines(before, during), "\n")
	for _, want := range []string{"trial none -> pending", "condition a.json Valid: True -> none",
		"drift route/r (a.json): drifted -> none", "drift sysctl/s (b.json): none -> drifted: gone"} {
		if !strings.Contains(got, want) {
			t.Errorf("events lack %q:\n%s", want, got)
		}
	}
	if got := lines(during, after); len(got) != 2 || got[0] != "trial pending -> reverted: timeout" {
		t.Errorf("trial end: %q", got)
	}
	if got := lines(after, after); len(got) != 0 {
		t.Errorf("events without a change: %q", got)
	}
}
