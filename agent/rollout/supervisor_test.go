package rollout

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/metrics"
)

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// TestSupervisorRunsEveryRollout: the long-running controller runs both
// running rollouts at once (one completes, one halts on its failing
// host), counts the halt, shows the hosts by state in its metrics, and
// gives its leases up when it stops.
func TestSupervisorRunsEveryRollout(t *testing.T) {
	f, cs := newFleet(t, 4)
	f.fail["edge-002"] = true
	ctx := context.Background()
	for _, spec := range []string{
		`{"rollout": "a", "document": "20-dns.json", "intent": "x.json", "waves": [{"name": "canary", "hosts": ["edge-000", "edge-001"]}]}`,
		`{"rollout": "b", "document": "20-dns.json", "intent": "x.json", "waves": [{"name": "canary", "hosts": ["edge-002"]}, {"name": "rest", "hosts": ["edge-003"]}]}`,
	} {
		if _, err := Start(ctx, cs, layout, testSpec(t, spec), []byte(testIntent), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	m := metrics.NewRollouts()
	v := &Supervisor{Store: cs, Layout: layout, Owner: "sup", Clock: wallClock{}, Poll: 20 * time.Millisecond, Sleep: sleepCtx, Log: log, Metrics: m}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- v.Run(rctx) }()
	phase := func(id string) string {
		s, _, err := Load(ctx, cs, layout, id)
		if err != nil {
			t.Fatal(err)
		}
		return s.Phase
	}
	for i := 0; phase("a") != PhaseCompleted || phase("b") != PhaseHalted; i++ {
		if i == 3000 {
			t.Fatalf("a %s, b %s", phase("a"), phase("b"))
		}
		f.react()
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := m.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`netagent_rollout_hosts{rollout="a",state="confirmed",wave="canary"} 2`,
		`netagent_rollout_hosts{rollout="b",state="reverted",wave="canary"} 1`,
		`netagent_rollout_halted_total{rollout="b"} 1`,
		`netagent_rollout_halted_total{rollout="a"} 0`,
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("metrics lack %s:\n%s", want, text.String())
		}
	}
	if keys := f.keys(t, layout.Rollouts()); strings.Contains(keys, "/lease") {
		t.Errorf("leases left behind: %s", keys)
	}
	if cs.pushes[layout.HostDoc("edge-003", "20-dns.json")] != 0 {
		t.Error("the halted rollout's second wave was pushed")
	}
}

func (f *fleetFake) keys(t *testing.T, prefix string) string {
	t.Helper()
	entries, _, err := f.st.ListKeys(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Key)
	}
	return strings.Join(out, " ")
}
