//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// viaDaemonCheck is check --json's document, as the test reads it.
type viaDaemonCheck struct {
	Format    int            `json:"format"`
	Converged bool           `json:"converged"`
	Counts    map[string]int `json:"counts"`
	Items     []struct {
		Item, State, Drift string
		Fields             []struct{ Field, Intended, Running string }
	} `json:"items"`
}

// TestAgentDaemonViaDaemonJSON: apply and check through the daemon print
// what the one-shot commands print: apply its operations with their
// traffic line and the summary, or apply's JSON document (format 1);
// check --all every item with its state, check --json check's document,
// with the drift policy of the document sent (report: differs, marked).
func TestAgentDaemonViaDaemonJSON(t *testing.T) {
	e := daemonNewEnv(t)
	e.converge()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := write("one.json", `{"version": 1,
	  "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)
	two := write("two.json", `{"version": 1,
	  "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10},
	             {"to": "203.0.114.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)
	// A check takes its file as the whole intent: the daemon's uplink
	// and route with the documents' routes.
	uplink := `"interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]}],
	  "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10},`
	twoWhole := write("two-whole.json", `{"version": 1, `+uplink+`
	             {"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10},
	             {"to": "203.0.114.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)
	mtuWhole := write("mtu-whole.json", `{"version": 1, `+uplink+`
	             {"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10, "mtu": 1400, "drift": "report"},
	             {"to": "203.0.114.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)

	res := e.cli("apply", "--via-daemon", one)
	for _, want := range []string{"  1. create route/main 203.0.113.0/24 metric 10\n       route 203.0.113.0/24 via 192.0.2.1",
		"       traffic: ", "converged: 1 operation: 1 done, 0 failed, 0 blocked in "} {
		if res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Errorf("apply --via-daemon: want exit 0 and %q, got %s", want, res)
		}
	}

	res = e.cli("apply", "--via-daemon", "--json", two)
	var applied struct {
		Format       int  `json:"format"`
		Converged    bool `json:"converged"`
		Done, Failed int
		Blocked      int
		Duration     string
		Operations   []struct {
			Op, Item, Description string
			Disruption            *struct{ Effect string }
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &applied); err != nil || res.code != 0 {
		t.Fatalf("apply --via-daemon --json: %v\n%s", err, res)
	}
	if applied.Format != 1 || !applied.Converged || applied.Done != 1 || applied.Failed != 0 || applied.Duration == "" ||
		len(applied.Operations) != 1 || applied.Operations[0].Op != "create" || applied.Operations[0].Item != "route/main 203.0.114.0/24 metric 10" ||
		!strings.HasPrefix(applied.Operations[0].Description, "route 203.0.114.0/24 via 192.0.2.1") ||
		applied.Operations[0].Disruption == nil || applied.Operations[0].Disruption.Effect != "none" {
		t.Errorf("apply --via-daemon --json: %+v\n%s", applied, res.stdout)
	}

	res = e.cli("check", "--via-daemon", "--all", twoWhole)
	for _, want := range []string{"ITEM", "STATE", daemonRouteRef, "route/main 203.0.114.0/24 metric 10", " ok "} {
		if res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Errorf("check --via-daemon --all: want exit 0 and %q, got %s", want, res)
		}
	}
	if !strings.Contains(res.stdout, " items: ") || strings.Contains(res.stdout, "differs") {
		t.Errorf("check --via-daemon --all: %s", res)
	}

	res = e.cli("check", "--via-daemon", "--json", mtuWhole)
	var check viaDaemonCheck
	if err := json.Unmarshal([]byte(res.stdout), &check); err != nil || res.code != 1 {
		t.Fatalf("check --via-daemon --json: want exit 1 and JSON: %v\n%s", err, res)
	}
	states := map[string]string{}
	for _, it := range check.Items {
		states[it.Item] = it.State + " " + it.Drift
		if it.Item == "route/main 203.0.113.0/24 metric 10" &&
			(len(it.Fields) != 1 || it.Fields[0].Intended != "1400" || it.Fields[0].Running != "0") {
			t.Errorf("check --via-daemon --json: the MTU: %+v", it)
		}
	}
	if check.Format != 1 || check.Converged || check.Counts["differs"] != 1 ||
		states["route/main 203.0.113.0/24 metric 10"] != "differs report" ||
		states["route/main 203.0.114.0/24 metric 10"] != "ok " || states[daemonRouteRef] != "ok " {
		t.Errorf("check --via-daemon --json: %+v\n%s", states, res.stdout)
	}
	if r, _ := e.route("203.0.113.0/24"); strings.Contains(e.ip("route", "show", "203.0.113.0/24"), "mtu") {
		t.Errorf("check changed the route: %+v", r)
	}
}

// TestAgentDaemonViaDaemonWaits: apply --via-daemon waits, following the
// daemon's event stream, for the document's items blocked on a link's
// carrier, and ends converged as soon as the carrier comes and the daemon
// creates them.
func TestAgentDaemonViaDaemonWaits(t *testing.T) {
	e := daemonNewEnv(t)
	e.converge()
	e.ip("link", "add", "side0", "type", "veth", "peer", "name", "side0-peer")
	e.ip("link", "set", "side0", "up") // the peer down: no carrier
	doc := filepath.Join(t.TempDir(), "side.json")
	if err := os.WriteFile(doc, []byte(`{"version": 1,
	  "interfaces": [{"name": "side0", "type": "physical", "addresses": ["10.55.0.1/24"]}],
	  "routes": [{"to": "10.56.0.0/16", "via": "10.55.0.254", "dev": "side0"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e.bin, "--state-dir", e.stateDir, "apply", "--netns", e.tgt.Name, "--via-daemon", "--wait", "2m", doc)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	e.waitFor("the route blocked on side0's carrier", func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		it, ok := daemonItem(st, "route/main 10.56.0.0/16 metric 0")
		return ok && it.State == "blocked", it.State
	})
	select {
	case err := <-done:
		t.Fatalf("apply --via-daemon ended while the route was blocked: %v\n%s%s", err, out.String(), errOut.String())
	default:
	}
	e.ip("link", "set", "side0-peer", "up")
	if err := <-done; err != nil || !strings.Contains(out.String(), "converged: ") || !strings.Contains(out.String(), ", 0 blocked in ") {
		t.Errorf("apply --via-daemon after the carrier came: %v\n%s%s", err, out.String(), errOut.String())
	}
}
