package main

import (
	"testing"
)

func TestParseVersion(t *testing.T) {
	for in, ok := range map[string]bool{"0": true, "7": true, "-1": false, "07": false, "x": false, "1x": false, "": false} {
		if _, err := parseVersion(in); (err == nil) != ok {
			t.Errorf("%q: %v", in, err)
		}
	}
}
