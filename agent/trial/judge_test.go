package trial

import (
	"errors"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/host"
	dg "github.com/netagent/netagent/depgraph"
)

var (
	refA = dg.ItemRef{Type: "route", Name: "a"}
	refB = dg.ItemRef{Type: "route", Name: "b"}
)

// The one rule both drivers follow: failed items revert (unless keep
// partial), blocked ones are waited for, then revert (unless keep
// partial), unkept changes revert whatever keep partial says, and items
// failed before the trial count for nothing.
func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name    string
		p       Problems
		keep    bool
		step    Step
		fault   Fault
		contain string
	}{
		{"clean", Problems{}, false, Stands, 0, ""},
		{"failed", Problems{Failed: []dg.ItemRef{refA}}, false, Reverts, Failed, "1 item failed or stayed blocked (route/a first)"},
		{"failed kept", Problems{Failed: []dg.ItemRef{refA}}, true, Stands, 0, ""},
		{"blocked waiting", Problems{Blocked: []dg.ItemRef{refA}, Waiting: true}, false, Wait, 0, ""},
		{"blocked expired", Problems{Blocked: []dg.ItemRef{refA}}, false, Reverts, Failed, "1 item failed or stayed blocked (route/a first, blocked)"},
		{"blocked kept", Problems{Blocked: []dg.ItemRef{refA}}, true, Stands, 0, ""},
		{"unkept", Problems{Unkept: []dg.ItemRef{refB}}, true, Reverts, Unkept, "verification found 1 difference from the intent"},
		{"unkept beside failed kept", Problems{Failed: []dg.ItemRef{refA}, Unkept: []dg.ItemRef{refB}}, true, Stands, 0, ""},
		{"unkept beside failed", Problems{Failed: []dg.ItemRef{refA}, Unkept: []dg.ItemRef{refB}}, false, Reverts, Failed, "item failed"},
		{"before", Problems{Failed: []dg.ItemRef{refA}}.Since(map[dg.ItemRef]bool{refA: true}), false, Stands, 0, ""},
	} {
		step, rev := Judge(c.p, c.keep)
		if step != c.step || (rev == nil) != (c.step != Reverts) {
			t.Errorf("%s: %v %+v, want step %v", c.name, step, rev, c.step)
			continue
		}
		if rev != nil && (rev.Fault != c.fault || !strings.Contains(rev.Reason, c.contain) || FaultOf(rev.Reason) != c.fault) {
			t.Errorf("%s: %+v, want fault %v and %q", c.name, rev, c.fault, c.contain)
		}
	}
}

// A one-shot apply's problems sort into failed, blocked and unkept.
func TestFromApply(t *testing.T) {
	p := FromApply(&host.Result{Problems: []host.Problem{{Ref: refA, Unkept: true}, {Ref: refB, Blocked: true}, {Ref: refA}}})
	if len(p.Unkept) != 1 || len(p.Blocked) != 1 || len(p.Failed) != 1 {
		t.Fatalf("%+v", p)
	}
	// Operations failed: an unkept change is one more failed item, and
	// errors without a problem still revert (unless keep partial).
	p = FromApply(&host.Result{Problems: []host.Problem{{Ref: refA, Unkept: true}}, Err: errors.New("x")})
	if len(p.Failed) != 1 || len(p.Unkept) != 0 {
		t.Fatalf("%+v", p)
	}
	p = FromApply(&host.Result{Err: errors.New("x")})
	if step, rev := Judge(p, false); step != Reverts || rev.Fault != Failed {
		t.Fatalf("errors alone: %v %+v", step, rev)
	}
	if step, _ := Judge(p, true); step != Stands {
		t.Fatalf("errors alone, kept: %v", step)
	}
}

// The daemon's reasons read back as the faults the one-shot's exit codes
// name.
func TestFaultOf(t *testing.T) {
	for reason, want := range map[string]Fault{
		"probe failed: not passed within 3s: x":                    Probe,
		ProbeFailed(errors.New("probe tcp:x did not pass")).Reason: Probe,
		"verification: differs":                                    Unkept,
		"2 items failed (a first)":                                 Failed,
		"timeout: not confirmed by 12:00":                          Timeout,
		"rolled back on request":                                   Timeout,
	} {
		if got := FaultOf(reason); got != want {
			t.Errorf("%q: %v, want %v", reason, got, want)
		}
	}
}

// A request's timings: the defaults when empty, positive timeouts, a
// wait of 0 or more.
func TestParseParams(t *testing.T) {
	p, err := ParseParams("", "", "")
	if err != nil || p != (Params{DefaultTimeout, DefaultProbeTimeout, DefaultWait}) {
		t.Fatalf("defaults: %+v %v", p, err)
	}
	if p, err := ParseParams("5m", "3s", "0s"); err != nil || p.Timeout.String() != "5m0s" || p.ProbeTimeout.String() != "3s" || p.Wait != 0 {
		t.Fatalf("given: %+v %v", p, err)
	}
	for _, bad := range [][3]string{{"0s", "", ""}, {"", "-1s", ""}, {"", "", "-1s"}, {"x", "", ""}} {
		if _, err := ParseParams(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
