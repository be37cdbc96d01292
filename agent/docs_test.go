package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/render"
)

const (
	ifaceA = `{"version": 1, "interfaces": [{"name": "br0", "type": "bridge"}]}`
	routeA = `{"version": 1, "routes": [{"to": "10.0.0.0/8", "dev": "br0"}]}`
	ifaceB = `{"version": 1, "interfaces": [{"name": "br0", "type": "bridge", "mtu": 9000}]}`
)

// resolveStep updates one source's documents and resolves, as the loop
// does after a debounced change.
func resolveStep(t *testing.T, s *docSet, docs map[string]string) resolution {
	t.Helper()
	contents := map[string][]byte{}
	for n, d := range docs {
		contents[n] = []byte(d)
	}
	s.update("dir", contents)
	res, err := s.resolve(time.Now(), render.RenderFiles)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func accepted(s *docSet) map[string]bool {
	out := map[string]bool{}
	for n, d := range s.docs {
		out[n] = d.accepted()
	}
	return out
}

func TestResolveAcceptsValidDocumentsTogether(t *testing.T) {
	s := newDocSet()
	res := resolveStep(t, s, map[string]string{"a.json": ifaceA, "b.json": routeA})
	if !res.changed || res.graph == nil || len(res.rejected) != 0 {
		t.Fatalf("resolution %+v", res)
	}
	if res.graph.SubGraph(render.SubgraphName("b.json")) == nil {
		t.Error("no subgraph for b.json")
	}
	if res := resolveStep(t, s, map[string]string{"a.json": ifaceA, "b.json": routeA}); res.changed {
		t.Error("the same documents again count as a change")
	}
}

func TestResolveFallsBackPerDocument(t *testing.T) {
	s := newDocSet()
	resolveStep(t, s, map[string]string{"a.json": ifaceA, "b.json": routeA})
	goodB := s.docs["b.json"].good
	// b breaks, a changes validly: a's change is applied, b keeps its version.
	res := resolveStep(t, s, map[string]string{"a.json": ifaceB, "b.json": `{"version": 1, "routes": [{"to": "10.0.0.0/8", "dev": "nope0"}]}`})
	if !res.changed || len(res.rejected["b.json"]) == 0 || res.rejected["a.json"] != nil {
		t.Fatalf("resolution %+v", res)
	}
	if s.docs["b.json"].good != goodB || s.docs["a.json"].good.Interfaces[0].MTU != 9000 {
		t.Error("wrong versions applied")
	}
	if !strings.Contains(s.docs["b.json"].errs[0], "b.json: routes[0].dev") {
		t.Errorf("error %q", s.docs["b.json"].errs[0])
	}
}

func TestResolveNewInvalidDocumentIsLeftOut(t *testing.T) {
	s := newDocSet()
	resolveStep(t, s, map[string]string{"a.json": ifaceA})
	res := resolveStep(t, s, map[string]string{"a.json": ifaceA, "c.json": `{"version": 2}`})
	if res.changed || res.rejected["c.json"] == nil && len(s.docs["c.json"].errs) == 0 {
		t.Fatalf("resolution %+v, c errs %v", res, s.docs["c.json"].errs)
	}
	if got := accepted(s); !got["a.json"] || got["c.json"] {
		t.Errorf("accepted %v", got)
	}
	if s.docs["c.json"].good != nil {
		t.Error("an invalid new document has a good version")
	}
}

func TestResolveConflictKeepsBothOldVersions(t *testing.T) {
	s := newDocSet()
	resolveStep(t, s, map[string]string{"a.json": ifaceA, "b.json": routeA})
	// b now also defines br0: a conflict named on both; only b changed.
	res := resolveStep(t, s, map[string]string{"a.json": ifaceA,
		"b.json": `{"version": 1, "interfaces": [{"name": "br0", "type": "bridge"}], "routes": [{"to": "10.0.0.0/8", "dev": "br0"}]}`})
	if res.changed || res.rejected["a.json"] != nil || res.rejected["b.json"] == nil {
		t.Fatalf("resolution %+v", res)
	}
	if got := accepted(s); !got["a.json"] || got["b.json"] {
		t.Errorf("accepted %v", got)
	}
}

func TestResolveRemovalThatBreaksAnotherDocumentIsRejected(t *testing.T) {
	s := newDocSet()
	resolveStep(t, s, map[string]string{"a.json": ifaceA, "b.json": routeA})
	res := resolveStep(t, s, map[string]string{"b.json": routeA})
	if res.changed || res.rejected["a.json"] == nil {
		t.Fatalf("resolution %+v", res)
	}
	if d := s.docs["a.json"]; d == nil || !d.gone || d.good == nil {
		t.Fatalf("a.json after its rejected removal: %+v", d)
	}
	// The referring document fixed: the removal goes through.
	res = resolveStep(t, s, map[string]string{"b.json": `{"version": 1}`})
	if !res.changed || s.docs["a.json"] != nil {
		t.Errorf("resolution %+v; a.json %+v", res, s.docs["a.json"])
	}
}

func TestResolveRetriesARejectedDocumentWhenItsReferenceArrives(t *testing.T) {
	s := newDocSet()
	resolveStep(t, s, map[string]string{"b.json": routeA}) // br0 is not defined yet
	if accepted(s)["b.json"] {
		t.Fatal("b.json accepted without br0")
	}
	res := resolveStep(t, s, map[string]string{"a.json": ifaceA, "b.json": routeA})
	if !res.changed || !accepted(s)["b.json"] || !accepted(s)["a.json"] {
		t.Errorf("resolution %+v, accepted %v", res, accepted(s))
	}
}

func TestUpdateKeepsOtherSourcesDocuments(t *testing.T) {
	s := newDocSet()
	s.update("dir", map[string][]byte{"a.json": []byte(ifaceA)})
	s.update("api", map[string][]byte{"api": []byte(routeA)})
	s.update("dir", map[string][]byte{"a.json": []byte(ifaceB)})
	if s.docs["api"] == nil || s.docs["api"].gone {
		t.Error("an update of one source dropped another's document")
	}
	s.update("api", map[string][]byte{"a.json": []byte(ifaceA)})
	if d := s.docs["a.json"]; d.source != "dir" || len(d.errs) == 0 {
		t.Errorf("a name clash between sources: %+v", d)
	}
}
