package plural

import "testing"

func TestN(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{N(0, "operation"), "0 operations"},
		{N(1, "operation"), "1 operation"},
		{N(2, "item"), "2 items"},
		{N(-1, "degree"), "-1 degree"},
		{Of(1, "policy", "policies"), "1 policy"},
		{Of(3, "policy", "policies"), "3 policies"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
