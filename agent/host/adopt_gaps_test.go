package host

import (
	"context"
	"io"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// With Adopt, a sysctl whose value someone else chose is an adoption: the
// plan says "adopt (mark only)" for one that holds the intended value
// already and "adopt and modify" for one that differs (a plain plan:
// "create"), apply says the same and writes only the differing value, a
// second apply writes nothing, and removing the intent writes the found
// value back (the equal one needs no write).
func TestFakeAdoptSysctls(t *testing.T) {
	const (
		fwd = "/proc/sys/net/ipv4/ip_forward"
		rpf = "/proc/sys/net/ipv4/conf/all/rp_filter"
	)
	f := configurators.NewFake(map[string]string{fwd: "1", rpf: "2"})
	rt := quietRuntime(t, f)
	ctx := context.Background()
	intended := dg.New("intended", &items.Sysctl{Key: "net.ipv4.ip_forward", Value: "1"}, &items.Sysctl{Key: "net.ipv4.conf.all.rp_filter", Value: "1"})
	want := []string{"adopt (mark only) sysctl/net.ipv4.ip_forward", "adopt and modify sysctl/net.ipv4.conf.all.rp_filter"}
	if got := planTexts(t, rt, intended); !sameSet(got, []string{"create sysctl/net.ipv4.ip_forward", "create sysctl/net.ipv4.conf.all.rp_filter"}) {
		t.Errorf("plan without adopt: %v, want two creates", got)
	}
	if err := rt.SetAdopt(true); err != nil {
		t.Fatal(err)
	}
	if got := planTexts(t, rt, intended); !sameSet(got, want) {
		t.Errorf("plan with adopt: %v, want %v", got, want)
	}
	res, err := rt.ApplyPredicted(ctx, intended, ApplyOptions{})
	if err != nil || !res.Converged() {
		t.Fatalf("apply with adopt: %v %v", err, res.Problems)
	}
	var applied []string
	for _, e := range res.Ops {
		applied = append(applied, OpText(e, res.Adoptions))
	}
	if !sameSet(applied, want) {
		t.Errorf("apply with adopt: %v, want as planned %v", applied, want)
	}
	if n, v := f.Firewall.ProcSys.Writes(), f.Firewall.ProcSys.Files()[rpf]; n != 1 || v != "1" {
		t.Errorf("the adoption wrote %d values (rp_filter %q), want 1 (rp_filter 1)", n, v)
	}
	if err := rt.SetAdopt(false); err != nil {
		t.Fatal(err)
	}
	if again, err := rt.Apply(ctx, intended, ApplyOptions{}); err != nil || len(again.Ops) > 0 {
		t.Errorf("second apply: %v %v, want nothing to do", err, again.Ops)
	}
	gone, err := rt.Apply(ctx, dg.New("intended"), ApplyOptions{})
	if err != nil || !gone.Converged() || len(gone.Ops) != 2 || slices.ContainsFunc(gone.Ops, func(e reconciler.OpLogEntry) bool { return e.Op != reconciler.OpDelete }) {
		t.Fatalf("removing the intent: %v %v, want the two deletes", err, gone.Ops)
	}
	files := f.Firewall.ProcSys.Files()
	if n := f.Firewall.ProcSys.Writes(); n != 2 || files[rpf] != "2" || files[fwd] != "1" {
		t.Errorf("after the removal: %d writes, rp_filter %q, ip_forward %q; want 2, the found 2 and 1", n, files[rpf], files[fwd])
	}
}

// planTexts is how a plan of intended names its operations (OpText).
func planTexts(t *testing.T, rt *Runtime, intended *dg.Graph) []string {
	t.Helper()
	plan, err := rt.Plan(context.Background(), intended)
	if err != nil || len(plan.Problems) > 0 {
		t.Fatalf("plan: %v %v", err, plan.Problems)
	}
	var out []string
	for _, e := range plan.Ops {
		out = append(out, OpText(e, plan.Adoptions))
	}
	return out
}

// With Adopt, a NIC the intent finds by its permanent MAC (as import
// kernel writes it) under the name it has already is an adoption: the
// plan says "adopt (mark only)", with no disruption (a plain plan: a
// modify that may flap the link, as the match could find another NIC to
// rename), apply writes nothing to the kernel (the match is recorded),
// and a second plan has nothing to do. A NIC the match finds under
// another name is no adoption: it is renamed, as without adopt.
func TestFakeAdoptMatchedNIC(t *testing.T) {
	f := configurators.NewFake(nil)
	perm := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	f.Links.AddMatchableNIC("eth0", perm, "e1000", "")
	f.Links.AddMatchableNIC("eth9", net.HardwareAddr{2, 0, 0, 0, 0, 9}, "e1000", "")
	f.Links.Take()
	rt := quietRuntime(t, f)
	nic := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, MTU: 1500, Match: &items.NICMatch{PermanentMAC: perm}}
	renamed := &items.Interface{IfName: "wan0", Kind: items.KindPhysical, Match: &items.NICMatch{PermanentMAC: net.HardwareAddr{2, 0, 0, 0, 0, 9}}}
	intended := dg.New("intended", nic, renamed)
	if got := planTexts(t, rt, intended); !sameSet(got, []string{"modify interface/eth0", "create interface/wan0"}) {
		t.Errorf("plan without adopt: %v", got)
	}
	if err := rt.SetAdopt(true); err != nil {
		t.Fatal(err)
	}
	plan, err := rt.Plan(context.Background(), intended)
	if err != nil || len(plan.Problems) > 0 {
		t.Fatalf("plan: %v %v", err, plan.Problems)
	}
	for i, e := range plan.Ops {
		text, effect := OpText(e, plan.Adoptions), plan.Disruptions[i].Effect
		switch e.Ref {
		case dg.Ref(nic):
			if text != "adopt (mark only) interface/eth0" || effect != disrupt.None {
				t.Errorf("plan --adopt of the NIC found by its permanent MAC: %q, %s", text, effect)
			}
		default:
			if strings.HasPrefix(text, "adopt") {
				t.Errorf("plan --adopt of the NIC the match renames: %q, want no adoption", text)
			}
		}
	}
	res, err := rt.ApplyPredicted(context.Background(), dg.New("intended", nic), ApplyOptions{})
	if err != nil || !res.Converged() || len(res.Ops) != 1 || OpText(res.Ops[0], res.Adoptions) != "adopt (mark only) interface/eth0" {
		t.Fatalf("apply --adopt: %v %v %v", err, res.Problems, res.Ops)
	}
	if w := f.Links.Take(); len(w) > 0 {
		t.Errorf("adopting the matched NIC wrote %v, want nothing", w)
	}
	if again := planTexts(t, rt, dg.New("intended", nic)); len(again) > 0 {
		t.Errorf("plan after the adoption: %v, want nothing to do", again)
	}
}

// quietRuntime is a Runtime over f that does not adopt (SetAdopt turns it
// on), logging nowhere.
func quietRuntime(t *testing.T, f *configurators.Fake) *Runtime {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	rt, err := OpenFakeWith(f, t.TempDir(), log, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}
