package rollout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	path := write("r.json", threeWaves)
	write("dns-v3.json", "{\n  \"version\": 1\n}\n")
	spec, data, err := ReadFile(path)
	if err != nil || spec.Rollout != "dns-v3" || string(data) != `{"version":1}` {
		t.Fatalf("%v %s %v", spec, data, err)
	}
	write("dns-v3.json", `{"version": 1, "links": 3}`)
	if _, _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "dns-v3.json") {
		t.Errorf("invalid intent: %v", err)
	}
	write("dns-v3.json", strings.Repeat(" ", MaxIntentBytes+1))
	if _, _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "intent: reading") {
		t.Errorf("oversized intent: %v", err)
	}
	bad := write("bad.json", strings.Replace(threeWaves, `"percent": 25`, `"percent": 250`, 1))
	if _, _, err := ReadFile(bad); err == nil || !strings.Contains(err.Error(), "bad.json: waves[1].percent") {
		t.Errorf("bad rollout: %v", err)
	}
}

func TestSummaryOfAHalt(t *testing.T) {
	f, cs, clock := started(t, 20, threeWaves)
	f.fail["edge-002"] = true
	if r, err := drive(t, newController(cs, clock, "c1"), f, clock); err != nil || r.Phase != PhaseHalted {
		t.Fatalf("%s %v", r.Phase, err)
	}
	sum := Summarize(load(t, cs), clock.Now())
	w := sum.Waves[0]
	if sum.Phase != PhaseHalted || sum.Wave != "canary" || w.Counts[HostReverted] != 1 || w.Counts[HostConfirmed] != 1 ||
		w.CountsText() != "confirmed 1, reverted 1" || sum.Waves[1].State != "waiting" || !strings.Contains(sum.Reason, "tolerance of 0") {
		t.Errorf("%+v", sum)
	}
}
