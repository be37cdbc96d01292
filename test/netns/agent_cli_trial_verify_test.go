//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// A trial whose verification after the apply finds a difference reverts
// with exit 8 and says why on stderr; the namespace is again what it was.
// The difference comes from the real kernel: it does not keep an inverted
// net.ipv4.ping_group_range ("5 3"), which it stores as "1 0" (nobody may
// ping), and the intent's validation cannot know that.
func TestTrialVerifyDifferenceReverts(t *testing.T) {
	e := cliNewEnv(t)
	before := e.writeFile("before.json", `{"version": 1,
  "interfaces": [{"name": "br0", "type": "bridge", "addresses": ["10.0.0.1/24"]}],
  "sysctls": {"net.ipv4.conf.all.rp_filter": "1"}}`)
	e.mustRun(0, "apply", before)
	want := e.trialSnapshot()
	wantRange := e.exec("sysctl", "-n", "net.ipv4.ping_group_range")
	odd := e.writeFile("odd.json", `{"version": 1,
  "interfaces": [{"name": "br0", "type": "bridge", "addresses": ["10.0.1.1/24"]},
    {"name": "br9", "type": "bridge", "addresses": ["10.99.0.1/24"]}],
  "sysctls": {"net.ipv4.conf.all.rp_filter": "2", "net.ipv4.ping_group_range": "5 3"}}`)
	res := e.trialRun(nil, "--timeout", "5m", odd)
	if res.code != 8 {
		t.Fatalf("want exit 8 (the verification found a difference), got %s", res)
	}
	for _, s := range []string{"reverted: verification found 1 difference from the intent", "sysctl/net.ipv4.ping_group_range", "did not keep"} {
		if !strings.Contains(res.stderr, s) {
			t.Errorf("stderr does not say %q:\n%s", s, res)
		}
	}
	if got := e.trialSnapshot(); got != want {
		t.Fatalf("not exact:\n%s", lineDiff(want, got))
	}
	if got := e.exec("sysctl", "-n", "net.ipv4.ping_group_range"); got != wantRange {
		t.Errorf("ping_group_range is %q after the revert, was %q", got, wantRange)
	}
	e.mustRun(0, "check", before)
}
