//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// A new default route the kernel refuses (someone else's route holds its
// table, destination and metric) does not take the old default route with
// it: apply fails the new one and reports the old one kept, the host keeps
// its default route; once the way is clear, the next apply makes the new
// one and only then deletes the old one.
func TestAgentCLIFailedReplacementKeepsTheOld(t *testing.T) {
	e := cliNewEnv(t)
	e.mustRun(0, "apply", e.mbbUplink("192.0.2.10/24", 100))
	e.ip("route", "add", "default", "via", "192.0.2.1", "dev", "uplink0", "metric", "300")

	metric300 := e.mbbUplink("192.0.2.10/24", 300)
	res := e.mustRun(1, "apply", "--wait", "0", metric300)
	if !strings.Contains(res.stderr, "route/main 0.0.0.0/0 metric 100: failed: not deleted: kept until route/main 0.0.0.0/0 metric 300") {
		t.Errorf("apply does not report the old default route kept:\n%s", res)
	}
	e.mbbMustRoute("default", "metric 100")

	e.ip("route", "del", "default", "via", "192.0.2.1", "dev", "uplink0", "metric", "300")
	e.mustRun(0, "apply", metric300)
	if got := e.ip("route", "show", "default"); strings.Contains(got, "metric 100") || !strings.Contains(got, "metric 300") {
		t.Errorf("default routes after the way is clear:\n%s", got)
	}
	e.mustRun(0, "check", metric300)
}
