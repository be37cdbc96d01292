//go:build !vmtest

package netns_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestAgentCLIKilledApplyRecovers kills `netagent apply` (SIGKILL) at many
// points of creating 30 bridges and a veth pair, counted in the kernel's
// own link notifications: after each kill the next apply converges (exit
// 0) and every link carries netagent's mark, whatever the kill left half
// done (a link added and not yet marked is adopted through the create
// journal, never refused as someone else's).
func TestAgentCLIKilledApplyRecovers(t *testing.T) {
	e := cliNewEnv(t)
	var ifaces []string
	for i := range 30 {
		ifaces = append(ifaces, fmt.Sprintf(`{"name": "kb%d", "type": "bridge"}`, i))
	}
	ifaces = append(ifaces, `{"name": "kv0", "type": "veth", "veth": {"peer": "kv1"}}`)
	full := e.writeFile("full.json", `{"version": 1, "interfaces": [`+strings.Join(ifaces, ",")+`]}`)
	empty := e.writeFile("empty.json", `{"version": 1}`)

	w := e.watch()
	for _, k := range []int{1, 2, 3, 5, 8, 13, 21} {
		e.mustRun(0, "apply", empty)
		for drained := false; !drained; {
			select {
			case <-w.events:
			default:
				drained = true
			}
		}
		cmd := exec.Command(e.bin, "--state-dir", e.stateDir, "apply", "--netns", e.tgt.Name, full)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		killed := false
		for seen := 0; !killed; {
			select {
			case ev := <-w.events:
				if strings.HasPrefix(ev, "link 16 k") {
					seen++
				}
				if seen >= k {
					_ = cmd.Process.Kill() // it may have finished
					<-exited
					killed = true
				}
			case <-exited: // finished before the kill: the next round kills earlier
				killed = true
			}
		}

		if res := e.netagent("apply", full); res.code != 0 {
			t.Fatalf("apply after a kill at link notification %d: %s", k, res)
		}
		for _, l := range e.ipJSON("link", "show") {
			name := l["ifname"].(string)
			if strings.HasPrefix(name, "k") && l["ifalias"] != "netagent" {
				t.Errorf("after the kill at %d: %s has alias %v", k, name, l["ifalias"])
			}
		}
	}
}
