package main

import (
	"bytes"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent"
)

// metricsFakeDaemon answers the metrics command on a unix socket with
// resp, and anything else with an error.
func metricsFakeDaemon(t *testing.T, resp agent.Response) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var req agent.Request
			json.NewDecoder(c).Decode(&req)
			if req.Command != agent.CmdMetrics {
				json.NewEncoder(c).Encode(agent.Response{Error: "want metrics"})
			} else {
				json.NewEncoder(c).Encode(resp)
			}
			c.Close()
		}
	}()
	return path
}

// TestMetricsCommand: `netagent metrics` prints what the daemon answers,
// as it is; an error answer, no answer, or no daemon is exit 3.
func TestMetricsCommand(t *testing.T) {
	text := "# TYPE netagent_blocked_items gauge\nnetagent_blocked_items 2\n"
	var out, errOut bytes.Buffer
	if code := run([]string{"metrics", "--socket", metricsFakeDaemon(t, agent.Response{Metrics: text})}, &out, &errOut); code != exitOK || out.String() != text {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	for name, sock := range map[string]string{
		"an error":  metricsFakeDaemon(t, agent.Response{Error: "boom"}),
		"nothing":   metricsFakeDaemon(t, agent.Response{}),
		"no daemon": filepath.Join(t.TempDir(), "none.sock"),
	} {
		out.Reset()
		errOut.Reset()
		if code := run([]string{"metrics", "--socket", sock}, &out, &errOut); code != exitInternal || out.Len() != 0 || !strings.HasPrefix(errOut.String(), "netagent: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out.String(), errOut.String())
		}
	}
}
