package host

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
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
	log := logrus.New()
	log.SetOutput(io.Discard)
	rt, err := OpenFakeWith(f, t.TempDir(), log, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
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
