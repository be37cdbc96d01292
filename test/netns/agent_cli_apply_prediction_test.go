//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// apply says of each operation what plan said of it: the same traffic
// line under each, in text, and the same disruption object in --json. The
// edit of the gateway is the transcript's: uplink0's MTU 1500 -> 9000 (a
// possible link flap on a NIC, known only from the MTU it had), vx100's
// VNI 100 -> 101 (a recreate) and the default gateway (an atomic replace).
func TestAgentCLIApplyPredictsAsPlan(t *testing.T) {
	e := cliNewEnv(t)
	data, err := os.ReadFile(cliGatewayFile)
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	ifaceOf(in, "uplink0")["mtu"] = 9000
	ifaceOf(in, "vx100")["vxlan"].(map[string]any)["vni"] = 101
	in["routes"].([]any)[0].(map[string]any)["via"] = "192.0.2.2"
	edited, _ := json.Marshal(in)
	site := e.writeFile("site-edited.json", string(edited))

	// Text.
	e.mustRun(0, "apply", cliGatewayFile)
	plan := opTrafficLines(e.mustRun(0, "plan", site).stdout)
	if !hasPrefixIn(plan, "  2. modify interface/uplink0\n       traffic: link flap (possible): mtu 1500 -> 9000") {
		t.Fatalf("plan does not predict uplink0's possible flap:\n%s", strings.Join(plan, "\n"))
	}
	applied := opTrafficLines(e.mustRun(0, "apply", site).stdout)
	if !reflect.DeepEqual(applied, plan) {
		t.Errorf("apply's operations and traffic lines differ from plan's:\nplan:\n%s\napply:\n%s", strings.Join(plan, "\n"), strings.Join(applied, "\n"))
	}

	// JSON, from the gateway again.
	e.mustRun(0, "apply", cliGatewayFile)
	planOut := e.mustRun(0, "plan", "--json", site).stdout
	applyOut := e.mustRun(0, "apply", "--json", site).stdout
	planJSON, applyJSON := opDisruptions(t, planOut), opDisruptions(t, applyOut)
	if len(planJSON) != 8 || !reflect.DeepEqual(applyJSON, planJSON) {
		t.Errorf("apply --json's disruption objects differ from plan --json's:\nplan:  %s\napply: %s", planJSON, applyJSON)
	}
	// The summary: the same links down as plan's.
	planDown, applyDown := linksDown(t, planOut), linksDown(t, applyOut)
	if strings.Count(planDown, `"link":`) != 2 || applyDown != planDown {
		t.Errorf("apply --json's disruption.linksDown differs from plan --json's:\nplan:  %s\napply: %s", planDown, applyDown)
	}
}

// linksDown returns the "disruption" summary's linksDown of a plan or
// apply --json document, as JSON.
func linksDown(t *testing.T, out string) string {
	t.Helper()
	var doc struct {
		Disruption *struct {
			LinksDown json.RawMessage `json:"linksDown"`
		} `json:"disruption"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.Disruption == nil {
		return "no disruption object"
	}
	var list []any
	if err := json.Unmarshal(doc.Disruption.LinksDown, &list); err != nil {
		t.Fatal(err)
	}
	compact, _ := json.Marshal(list)
	return string(compact)
}

// opTrafficLines are the operations of plan's or apply's text, each with
// its traffic line: "  2. modify interface/uplink0\n       traffic: ...".
func opTrafficLines(out string) []string {
	var ops []string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "traffic: ") {
			continue
		}
		j := i - 1
		for j >= 0 && strings.HasPrefix(lines[j], "       ") {
			j--
		}
		if j >= 0 {
			ops = append(ops, lines[j]+"\n"+l)
		}
	}
	return ops
}

// opDisruptions are the operations of plan --json or apply --json, each
// as "op item (recreate): {disruption object}".
func opDisruptions(t *testing.T, out string) []string {
	t.Helper()
	var doc struct {
		Operations []struct {
			Op, Item   string
			Recreate   bool
			Disruption json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var ops []string
	for _, o := range doc.Operations {
		s := o.Op + " " + o.Item
		if o.Recreate {
			s += " (recreate)"
		}
		ops = append(ops, s+": "+string(o.Disruption))
	}
	return ops
}

func hasPrefixIn(list []string, s string) bool {
	for _, x := range list {
		if strings.HasPrefix(x, s) {
			return true
		}
	}
	return false
}

// apply --via-daemon says of each operation what plan --via-daemon said:
// the daemon predicts both from its current state (setting a veth down
// takes it and its peer down, known only from the link being up before).
func TestAgentDaemonViaDaemonApplyPredictsAsPlan(t *testing.T) {
	e := daemonNewEnv(t)
	e.converge()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	up := write("up.json", `{"version": 1, "interfaces": [{"name": "v9", "type": "veth", "veth": {"peer": "v9-peer"}, "addresses": ["10.7.0.1/24"]}]}`)
	down := write("down.json", `{"version": 1, "interfaces": [{"name": "v9", "type": "veth", "veth": {"peer": "v9-peer"}, "state": "down", "addresses": ["10.7.0.1/24"]}]}`)
	if res := e.cli("apply", "--via-daemon", up); res.code != 0 {
		t.Fatalf("apply --via-daemon: %s", res)
	}
	res := e.cli("plan", "--via-daemon", down)
	plan := opTrafficLines(res.stdout)
	if res.code != 0 || !hasPrefixIn(plan, "  1. modify interface/v9\n       traffic: link down") {
		t.Fatalf("plan --via-daemon does not predict v9 going down: %s", res)
	}
	res = e.cli("apply", "--via-daemon", down)
	if applied := opTrafficLines(res.stdout); res.code != 0 || !reflect.DeepEqual(applied, plan) {
		t.Errorf("apply --via-daemon's operations and traffic lines differ from plan's:\nplan:\n%s\napply: %s", strings.Join(plan, "\n"), res)
	}
}
