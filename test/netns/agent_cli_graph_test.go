//go:build !vmtest

package netns_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// graph --current draws the links netagent does not own as external
// (dashed), never as deletions; the physical uplink that netagent's
// objects sit on as present, with or without the intent; and each file's
// cluster labelled with the file's path. Graphviz renders every version.
func TestAgentCLIGraphCurrent(t *testing.T) {
	e := cliNewEnv(t)
	e.placeForeign()
	file, err := filepath.Abs(cliGatewayFile)
	if err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "apply", file)

	diff := e.mustRun(0, "graph", "--current", file).stdout
	for _, l := range []string{"link/uplink0", "link/uplink0-peer", "link/lo", "link/foreign0"} {
		line := graphNode(t, diff, l)
		if strings.Contains(line, "delete") || strings.Contains(line, "color=red") || !strings.Contains(line, "style=dashed") {
			t.Errorf("graph --current FILE draws external %s as %s", l, line)
		}
	}
	if !strings.Contains(diff, "label="+`"`+file+`";`) || strings.Contains(diff, "%2F") {
		t.Errorf("the cluster is not labelled with the file %s:\n%s", file, diff)
	}
	if line := graphNode(t, diff, "interface/uplink0"); strings.Contains(line, "color=") {
		t.Errorf("graph --current FILE draws the converged uplink as %s", line)
	}

	cur := e.mustRun(0, "graph", "--current").stdout
	line := graphNode(t, cur, "interface/uplink0")
	if strings.Contains(line, "dotted") || strings.Contains(line, "grey") {
		t.Errorf("graph --current draws the present uplink0 as missing: %s", line)
	}
	if !strings.Contains(cur, `"interface/uplink0" -> "link/uplink0" [label="present"]`) {
		t.Errorf("graph --current does not put uplink0 on its link:\n%s", cur)
	}

	e.mustRun(0, "apply", e.writeFile("empty.json", `{"version": 1}`))
	gone := e.mustRun(0, "graph", "--current", file).stdout
	if line := graphNode(t, gone, "link/uplink0"); strings.Contains(line, "delete") {
		t.Errorf("external link drawn as a deletion: %s", line)
	}
	if line := graphNode(t, gone, "interface/br-lan"); !strings.Contains(line, "create: ") {
		t.Errorf("br-lan, removed, is not drawn as a create: %s", line)
	}

	for _, dot := range []string{diff, cur, gone} {
		cmd := exec.Command("dot", "-Tsvg")
		cmd.Stdin = strings.NewReader(dot)
		if svg, err := cmd.Output(); err != nil || !strings.Contains(string(svg), "<svg") {
			t.Errorf("dot -Tsvg: %v\n%s", err, dot)
		}
	}
}

// graphNode returns the line of a DOT text that declares ref's node.
func graphNode(t *testing.T, dot, ref string) string {
	t.Helper()
	for _, line := range strings.Split(dot, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), `"`+ref+`" [`) {
			return line
		}
	}
	t.Fatalf("no node %s in:\n%s", ref, dot)
	return ""
}
