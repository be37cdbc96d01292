package netns_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/netagent/netagent/agent/status"
)

// What the daemon tests on the host (agent_daemon_helpers_test.go) and in
// the VM (agent_daemon_match_vm_test.go) share.

// item finds an item in a status.
func daemonItem(st status.Status, ref string) (status.ItemStatus, bool) {
	for _, it := range st.Items {
		if it.Item == ref {
			return it, true
		}
	}
	return status.ItemStatus{}, false
}

// daemonLog collects the daemon's JSON log lines.
type daemonLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *daemonLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *daemonLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// entries returns the log lines whose fields include every key=value of
// match.
func (l *daemonLog) entries(match map[string]string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(l.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if daemonMatches(e, match) {
			out = append(out, e)
		}
	}
	return out
}

func daemonMatches(e map[string]any, match map[string]string) bool {
	for k, v := range match {
		got, _ := e[k].(string)
		if !strings.Contains(got, v) {
			return false
		}
	}
	return true
}
