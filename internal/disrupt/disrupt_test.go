package disrupt

import (
	"slices"
	"testing"
)

// TestWorse keeps the higher effect, the certain one at the same effect,
// and the links down and routes of both.
func TestWorse(t *testing.T) {
	a := Maybe(Flap, "mtu", "eth0")
	b := Certainly(Down, "set down", "eth0")
	w := Worse(a, b)
	if w.Effect != Down || !w.Certain || !slices.Equal(w.LinksDown, []string{"eth0"}) || w.Why != "set down; mtu" {
		t.Errorf("Worse: %+v", w)
	}
	c := Worse(Maybe(Flap, "x", "a"), Certainly(Flap, "y", "b"))
	if !c.Certain || !slices.Equal(c.LinksDown, []string{"b", "a"}) {
		t.Errorf("Worse at the same effect: %+v", c)
	}
	d := Worse(In("new"), Prediction{Effect: Removed, Certain: true, Routes: []string{"10.0.0.0/24 dev v0"}})
	if d.Effect != Removed || !slices.Equal(d.Routes, []string{"10.0.0.0/24 dev v0"}) {
		t.Errorf("Worse with routes: %+v", d)
	}
	if got := Maybe(Flap, "why").String(); got != "link flap (possible): why" {
		t.Errorf("String: %q", got)
	}
}
