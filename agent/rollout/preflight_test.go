package rollout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/snapshot"
	"github.com/netagent/netagent/configurators/nftables"
)

// fakePreflight: hosts in snaps have a snapshot; verdicts says what
// their plan finds.
type fakePreflight struct {
	snaps    map[string]bool
	verdicts map[string]string
	planned  map[string]int
}

func (f *fakePreflight) Snapshot(_ context.Context, host string) ([]byte, error) {
	if !f.snaps[host] {
		return nil, ErrNoSnapshot
	}
	return []byte("{}"), nil
}

func (f *fakePreflight) Plan(_ context.Context, host string, _ []byte, docs []Doc, _ []string) Finding {
	f.planned[host]++
	if len(docs) == 0 || docs[0].Source != "hosts/"+host+"/20-dns.json" {
		return Finding{Host: host, Verdict: VerdictFails, Detail: fmt.Sprintf("docs %v", docs)}
	}
	return Finding{Host: host, Verdict: f.verdicts[host], Detail: "because"}
}

// TestPreflightHoldsTheWave: a wave whose pre-flight flags a host pushes
// nothing until the host is excluded; the next wave's flagged host waits
// for approve; hosts without a snapshot are counted, not held.
func TestPreflightHoldsTheWave(t *testing.T) {
	f, cs, clock := started(t, 6, `{"rollout": "dns-v3", "document": "groups/edge/20-dns.json", "intent": "x.json", "waves": [
 {"name": "canary", "hosts": ["edge-001", "edge-002", "edge-003"]}, {"name": "rest", "percent": 100}]}`)
	fp := &fakePreflight{snaps: map[string]bool{}, verdicts: map[string]string{"edge-002": VerdictRefused}, planned: map[string]int{}}
	for _, h := range f.hosts {
		fp.snaps[h] = h != "edge-003"
	}
	rest := ""
	for _, h := range f.hosts {
		if !strings.Contains("edge-001 edge-002 edge-003", h) && rest == "" {
			rest = h
			fp.verdicts[h] = VerdictCritical
		}
	}
	c := newController(cs, clock, "c1")
	c.Preflight = &Preflight{Snapshots: fp, Planner: fp}
	ctx := context.Background()
	steps := func(n int) {
		for range n {
			if _, err := c.Step(ctx); err != nil {
				t.Fatal(err)
			}
			f.react()
			clock.advance(10 * time.Second)
		}
	}
	steps(10)
	s := load(t, cs)
	sum := Summarize(s, clock.Now()).Waves[0]
	if len(cs.pushes) != 0 || sum.State != "awaiting approval (pre-flight)" || sum.Preflight != "planned 3/3, flagged 1, no snapshot 1" ||
		len(sum.Findings) != 1 || sum.Findings[0].Host != "edge-002" {
		t.Fatalf("pushed %v; wave %+v", cs.pushes, sum)
	}
	if _, err := Exclude(ctx, cs, layout, "dns-v3", "edge-004"); err == nil {
		t.Error("excluded a host of another wave")
	}
	if _, err := Exclude(ctx, cs, layout, "dns-v3", "edge-002"); err != nil {
		t.Fatal(err)
	}
	steps(20)
	s = load(t, cs)
	if s.Wave != 1 || s.Hosts["edge-002"] != nil || s.Hosts["edge-001"].State != HostConfirmed {
		t.Fatalf("after the exclusion: wave %d, %+v", s.Wave, Summarize(s, clock.Now()).Waves)
	}
	sum = Summarize(s, clock.Now()).Waves[1]
	if sum.State != "awaiting approval (pre-flight)" || len(sum.Findings) != 1 || sum.Findings[0].Host != rest {
		t.Fatalf("rest wave %+v", sum)
	}
	for _, h := range s.Waves[1].Hosts {
		if h == "edge-002" {
			t.Error("the excluded host is in the next wave")
		}
	}
	if _, err := Approve(ctx, cs, layout, "dns-v3"); err != nil {
		t.Fatal(err)
	}
	if r, err := drive(t, c, f, clock); err != nil || r.Phase != PhaseCompleted {
		t.Fatalf("%s %v", r.Phase, err)
	}
	if n := pushedOnce(t, cs); n != 5 {
		t.Errorf("%d pushed, want 5 (all but the excluded)", n)
	}
	for h, n := range fp.planned {
		if n != 1 {
			t.Errorf("%s planned %d times", h, n)
		}
	}
}

// TestOfflinePlannerPlansAgainstTheSnapshot: the real planner, against a
// snapshot of a namespace with a dummy link: a document that adds a
// route converges; one that defines the link again (a merge conflict
// with the host's own document) fails; one that sets the link down takes
// a critical link down.
func TestOfflinePlannerPlansAgainstTheSnapshot(t *testing.T) {
	d := &snapshot.Document{Version: snapshot.Version, Netns: "n1", Identity: snapshot.Identity{BootID: "b", Netns: "n1", NsID: "NS(1:2)"},
		Links: []snapshot.Link{
			{Index: 1, Name: "lo", Kind: "loopback", MTU: 65536, Up: true, Carrier: true},
			{Index: 2, Name: "uplink0", Kind: "dummy", MTU: 1500, MAC: "02:00:00:00:00:01", Up: true, Carrier: true},
		},
		Sysctls: map[string]string{"/proc/sys/net/ipv4/ip_forward": "0"}, Nftables: &nftables.State{}}
	snap, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	base := Doc{Source: "hosts/h1/10-uplink.json", Intent: []byte(`{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]}]}`)}
	plan := func(doc string) Finding {
		return OfflinePlanner{}.Plan(context.Background(), "h1", snap, []Doc{{Source: "hosts/h1/20-x.json", Intent: []byte(doc)}, base}, []string{"uplink0"})
	}
	if f := plan(`{"version": 1, "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`); f.Verdict != "" {
		t.Errorf("a route: %+v", f)
	}
	if f := plan(`{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}]}`); f.Verdict != VerdictFails || !strings.Contains(f.Detail, "uplink0") {
		t.Errorf("a conflict: %+v", f)
	}
	if f := plan(`{"version": 1}`); f.Verdict != "" {
		t.Errorf("nothing: %+v", f)
	}
	if f := plan(`{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "mtu": 9000}]}`); f.Verdict != VerdictFails {
		t.Errorf("a conflict: %+v", f)
	}
}

// TestStoreSnapshotsReadsWhatMembersPublish: a snapshot published as
// members publish it (EncodeStored, at fleet.Layout.Snapshot) reads back
// as the document's JSON; none is ErrNoSnapshot; one that is not the
// stored form (plain JSON) is refused.
func TestStoreSnapshotsReadsWhatMembersPublish(t *testing.T) {
	f, _ := newFleet(t, 1)
	ctx := context.Background()
	src := StoreSnapshots{Store: f.st, Layout: layout}
	if _, err := src.Snapshot(ctx, "h1"); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("none: %v", err)
	}
	d := &snapshot.Document{Version: snapshot.Version, Netns: "n1", Identity: snapshot.Identity{BootID: "b", Netns: "n1", NsID: "NS(1:2)"},
		Links: []snapshot.Link{{Index: 1, Name: "lo", Kind: "loopback", MTU: 65536, Up: true, Carrier: true}}, Nftables: &nftables.State{}}
	stored, err := d.EncodeStored()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(d)
	if _, err := f.st.WriteCAS(ctx, layout.Snapshot("h1"), stored, 0); err != nil {
		t.Fatal(err)
	}
	if got, err := src.Snapshot(ctx, "h1"); err != nil || !bytes.Equal(got, want) {
		t.Errorf("h1: %q %v", got, err)
	}
	if _, err := f.st.WriteCAS(ctx, layout.Snapshot("h2"), want, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Snapshot(ctx, "h2"); err == nil || errors.Is(err, ErrNoSnapshot) {
		t.Errorf("plain JSON: %v", err)
	}
}
