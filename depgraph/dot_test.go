package depgraph_test

import (
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
)

// DiffDOT draws an external item that only the current state holds (a
// link the agent observes) as external, never as a deletion: a reconcile
// never deletes it. An owned item that intended drops is still a deletion.
func TestDiffDOTExternalIsNotADeletion(t *testing.T) {
	cur := dg.New("cur", &item{typ: "link", name: "eth0", external: true}, &item{typ: "link", name: "lo", external: true},
		mk("if", "eth0", "link/eth0"), mk("addr", "old", "if/eth0"))
	want := dg.New("want", mk("if", "eth0", "link/eth0"))
	dot := dg.DiffDOT(cur, want)
	for _, l := range []string{"link/eth0", "link/lo"} {
		line := dotNode(t, dot, l)
		if strings.Contains(line, "delete") || strings.Contains(line, "color=red") || !strings.Contains(line, "style=dashed") {
			t.Errorf("external %s drawn as %s", l, line)
		}
	}
	if line := dotNode(t, dot, "addr/old"); !strings.Contains(line, "delete: ") || !strings.Contains(line, "color=red") {
		t.Errorf("addr/old is not drawn as a deletion: %s", line)
	}
	if line := dotNode(t, dot, "if/eth0"); strings.Contains(line, "color=") || strings.Contains(line, "dotted") {
		t.Errorf("unchanged if/eth0 drawn as %s", line)
	}
	renderSVG(t, dot)
}

// A subgraph's cluster is labelled with its description when it has one
// (a name may be escaped to stay one path level: "%2Fetc%2Fa.json"), in
// DOT and DiffDOT alike.
func TestDOTClusterLabelIsTheDescription(t *testing.T) {
	g := dg.New("intended")
	sub := g.EditSubGraph("%2Fetc%2Fnetagent%2Fa.json")
	sub.SetDescription("/etc/netagent/a.json")
	sub.Put(mk("if", "br0"))
	g.EditSubGraph("plain").Put(mk("if", "br1"))
	for name, dot := range map[string]string{"DOT": dg.DOT(g), "DiffDOT": dg.DiffDOT(dg.New("cur"), g)} {
		if !strings.Contains(dot, `label="/etc/netagent/a.json";`) || strings.Contains(dot, "%2F") {
			t.Errorf("%s: cluster label is not the description:\n%s", name, dot)
		}
		if !strings.Contains(dot, `label="plain";`) {
			t.Errorf("%s: a cluster without description is not labelled with its name:\n%s", name, dot)
		}
		renderSVG(t, dot)
	}
}

// dotNode returns the line that declares ref's node.
func dotNode(t *testing.T, dot, ref string) string {
	t.Helper()
	for _, line := range strings.Split(dot, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), `"`+ref+`" [`) {
			return line
		}
	}
	t.Fatalf("no node %s in:\n%s", ref, dot)
	return ""
}

// DiffDOTFailing draws the failing items red with a double border and the
// reason, the others as DiffDOT does.
func TestDiffDOTFailing(t *testing.T) {
	cur := dg.New("cur", &item{typ: "link", name: "br0", external: true})
	want := dg.New("want", mk("if", "br0"), mk("addr", "a", "if/br0"))
	dot := dg.DiffDOTFailing(cur, want, map[dg.ItemRef]string{ref("if/br0"): `create failed: "br0" is not ours`})
	if line := dotNode(t, dot, "if/br0"); !strings.Contains(line, "peripheries=2") || !strings.Contains(line, `fails: create failed: \"br0\" is not ours`) {
		t.Errorf("failing if/br0 drawn as %s", line)
	}
	if line := dotNode(t, dot, "addr/a"); !strings.Contains(line, "create: ") || strings.Contains(line, "peripheries") {
		t.Errorf("addr/a drawn as %s", line)
	}
	renderSVG(t, dot)
}
