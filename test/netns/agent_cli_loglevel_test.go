//go:build !vmtest

package netns_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// apply logs warnings and errors only by default (TestAgentCLIApplyGateway
// checks that its stderr is empty); --log-level info gives a line per
// operation, and the operations of one kernel batch share one duration,
// logged once on the batch's line: the ops of the batch lines and the
// operations logged on their own with a duration add up to the 18 run.
func TestAgentCLIApplyLogLevelInfo(t *testing.T) {
	e := cliNewEnv(t)
	res := e.mustRun(0, "apply", cliGatewayFile, "--log-level", "info")
	if !strings.Contains(res.stdout, "converged: 18 operations") {
		t.Fatalf("apply: %s", res)
	}
	ops, batches, alone, batched := 0, 0, 0, 0
	opsField := regexp.MustCompile(` ops=(\d+)`)
	for _, line := range strings.Split(strings.TrimSpace(res.stderr), "\n") {
		switch {
		case strings.Contains(line, `msg="kernel batch"`):
			m := opsField.FindStringSubmatch(line)
			if m == nil || !strings.Contains(line, " duration=") {
				t.Errorf("batch line without ops or duration: %s", line)
				continue
			}
			n, _ := strconv.Atoi(m[1])
			batches++
			batched += n
		case strings.Contains(line, `msg="kernel operation"`):
			ops++
			if strings.Contains(line, " duration=") {
				alone++
			}
		}
	}
	if ops != 18 || batches == 0 || batched+alone != 18 {
		t.Errorf("%d operation lines (%d with a duration), %d batch lines of %d operations; want 18 = batched + alone:\n%s",
			ops, alone, batches, batched, res.stderr)
	}
	if !strings.Contains(res.stderr, "item=interface/br-lan op=create outcome=ok") {
		t.Errorf("no line for interface/br-lan:\n%s", res.stderr)
	}
}
