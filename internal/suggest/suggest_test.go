package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"apply", "check", "confirm", "plan", "status"}
	for name, want := range map[string]string{"aply": "apply", "conf": "confirm", "paln": "plan", "frobnicate": "", "c": ""} {
		if got := Closest(name, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", name, got, want)
		}
	}
	if d := Distance("ab", "ba"); d != 1 {
		t.Errorf("a transposition: distance %d, want 1", d)
	}
}
