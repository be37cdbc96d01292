package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/api"
)

// metricsFakeDaemon answers the metrics command with resp.
func metricsFakeDaemon(t *testing.T, resp api.Response) string {
	return fakeDaemon(t, api.CmdMetrics, resp)
}

// TestMetricsCommand: `netagent metrics` prints what the daemon answers,
// as it is; an error answer, no answer, or no daemon is exit 3.
func TestMetricsCommand(t *testing.T) {
	text := "# TYPE netagent_blocked_items gauge\nnetagent_blocked_items 2\n"
	var out, errOut bytes.Buffer
	if code := run([]string{"metrics", "--socket", metricsFakeDaemon(t, api.Response{Metrics: text})}, &out, &errOut); code != exitOK || out.String() != text {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	for name, sock := range map[string]string{
		"an error":  metricsFakeDaemon(t, api.Response{Error: "boom"}),
		"nothing":   metricsFakeDaemon(t, api.Response{}),
		"no daemon": filepath.Join(t.TempDir(), "none.sock"),
	} {
		out.Reset()
		errOut.Reset()
		if code := run([]string{"metrics", "--socket", sock}, &out, &errOut); code != exitInternal || out.Len() != 0 || !strings.HasPrefix(errOut.String(), "netagent: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out.String(), errOut.String())
		}
	}
}
