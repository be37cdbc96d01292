package oneshot

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/lease"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/configurators/dhcp"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items/lease4"
)

// Leases renders a command's intent files with the DHCPv4 leases known:
// first those the state directory keeps (a later run: the lease's address
// and routes stay intended while the server is asked again), then, after
// an apply that acquired or confirmed leases, the leases held.
//
// The DHCPv6 leases go the same way: host (Facts) reads the ones the state
// directory keeps, with the host's other facts, at each render.
type Leases struct {
	files map[string]*intent.Intent
	ifs   []string                 // the interfaces with dhcp4, sorted
	used  map[string]*lease4.Lease // the leases of the last render
	// host returns the host's facts (IPv6 forwarding, --resolv-conf, the
	// DHCPv6 leases kept); used6, the DHCPv6 addresses of the last render.
	host  func() (render.Facts, error)
	used6 map[string]render.Lease6
	// render renders the files with facts.
	render Renderer
	// graph is the last render (its lease items say what was refused:
	// render.LeaseRefused).
	graph *dg.Graph
}

// NewLeases returns nil when no interface of files has dhcp4 or
// ipv6.dhcp6. host reads the host's facts (Facts) at each render.
func NewLeases(files map[string]*intent.Intent, host func() (render.Facts, error), r Renderer) *Leases {
	lf := &Leases{files: files, host: host, render: r}
	if lf.render == nil {
		lf.render = render.RenderFilesWith
	}
	for _, in := range files {
		for _, ifc := range in.Interfaces {
			if ifc.DHCP4.Enabled() {
				lf.ifs = append(lf.ifs, ifc.Name)
			}
		}
	}
	if len(lf.ifs) == 0 && len(DHCP6Interfaces(files)) == 0 {
		return nil
	}
	slices.Sort(lf.ifs)
	return lf
}

// KeptLeases renders files with the leases the state directory of rt
// keeps and the host's facts (Facts), when some interface has dhcp4 or
// dhcp6 (else it returns nils): a later apply keeps the lease's address
// and routes intended while the lease item asks the server for it again,
// and check and plan compare with them. r renders (nil:
// render.RenderFilesWith).
func KeptLeases(rt *host.Runtime, files map[string]*intent.Intent, resolvConf string, r Renderer) (*Leases, *dg.Graph, error) {
	facts := func() (render.Facts, error) { return Facts(rt, files, resolvConf) }
	lf := NewLeases(files, facts, r)
	if lf == nil {
		return nil, nil, nil
	}
	g, err := lf.renderLeases(lf.keptOrFound(rt, time.Now()))
	return lf, g, err
}

// keptOrFound are the leases the state directory of rt keeps, still valid
// at now, and, when rt adopts, the leases other DHCP clients hold on the
// interfaces with dhcp4 that have none kept (FindLeases): their addresses
// and routes are adopted while the lease items ask the server for the
// same address (INIT-REBOOT), and stay meanwhile.
func (lf *Leases) keptOrFound(rt *host.Runtime, now time.Time) map[string]*lease4.Lease {
	kept := lease.V4{}.Kept(rt.StateDir(), now)
	if !rt.Adopting() || rt.Target() == nil {
		return kept
	}
	missing := slices.DeleteFunc(slices.Clone(lf.ifs), func(name string) bool { return kept[name] != nil })
	maps.Copy(kept, FindLeases(rt)(missing))
	return kept
}

// FindLeases returns what finds, on the interfaces named, the DHCPv4
// leases other clients hold in the namespace of rt (dhcp.FindLeases) and
// holds them in rt's Leases as found (their lease items read back Kept
// and ask for their addresses): apply --adopt's, and the daemon's with
// run --adopt (agent.Config.FindLeases). A failed read is logged: the
// interfaces then acquire leases as without an adoption.
func FindLeases(rt *host.Runtime) func(ifnames []string) map[string]*lease4.Lease {
	return func(ifnames []string) map[string]*lease4.Lease {
		found, err := dhcp.FindLeases(rt.Target(), ifnames, time.Now())
		if err != nil {
			rt.Log().WithError(err).Warn("reading the leases of other DHCP clients to adopt")
			return nil
		}
		rt.Leases().SetFound(found)
		for name, l := range found {
			rt.Log().WithField("interface", name).WithField("address", l.Address.String()).
				Info("dhcp4: adopting the lease another client holds; asking the server for its address")
		}
		return found
	}
}

// DaemonFindLeases is agent.Config.FindLeases for `run --adopt`
// (FindLeases), nil without adopt.
func DaemonFindLeases(adopt bool, rt *host.Runtime) func(ifnames []string) map[string]*lease4.Lease {
	if !adopt {
		return nil
	}
	return FindLeases(rt)
}

// Interfaces are the interfaces with dhcp4, sorted.
func (lf *Leases) Interfaces() []string {
	if lf == nil {
		return nil
	}
	return lf.ifs
}

// TrustKept holds the leases of the last render in rt, as if a server
// had confirmed them: check compares the kernel with them and asks no
// server (the lease items read back as intended).
func (lf *Leases) TrustKept(rt *host.Runtime) {
	if lf == nil {
		return
	}
	for _, l := range lf.used {
		rt.Leases().Set(l)
	}
}

// TrustFresh holds in rt, as if a server had confirmed them, the leases of
// the last render (those the state directory keeps) that have not reached
// their renewal time (T1) at now: a client asks nothing of its server
// before T1 (RFC 2131 4.4.5), so neither does a second apply of the same
// intent, which then runs no operation for them (their items read back as
// intended). A lease past T1 is asked for again (INIT-REBOOT).
func (lf *Leases) TrustFresh(rt *host.Runtime, now time.Time) {
	if lf != nil {
		lease.TrustFresh(rt.Leases(), lf.used, now)
	}
}

// Again renders with the leases rt holds, if they differ from the last
// render's (a binding or an expiry: a lease confirmed again refreshes its
// address's lifetime); nil when they do not.
func (lf *Leases) Again(rt *host.Runtime) (*dg.Graph, error) {
	held, _ := rt.Leases().Snapshot()
	same := lease.SameLeases(lf.used, held)
	f, err := lf.host()
	if err != nil {
		return nil, err
	}
	if same && maps.EqualFunc(f.DHCP6, lf.used6, sameLease6) {
		return nil, nil
	}
	return lf.renderWith(f, held)
}

// sameLease6 reports whether two renders of a DHCPv6 lease are the same.
func sameLease6(a, b render.Lease6) bool {
	return a.Address == b.Address && a.ValidUntil.Equal(b.ValidUntil) && a.PreferredUntil.Equal(b.PreferredUntil)
}

func (lf *Leases) renderLeases(leases map[string]*lease4.Lease) (*dg.Graph, error) {
	f, err := lf.host()
	if err != nil {
		return nil, err
	}
	return lf.renderWith(f, leases)
}

// renderWith renders with the host's facts f and the DHCPv4 leases.
func (lf *Leases) renderWith(f render.Facts, leases map[string]*lease4.Lease) (*dg.Graph, error) {
	lf.used, lf.used6 = leases, f.DHCP6
	f.Leases = leases
	g, err := lf.render(lf.files, f)
	if err == nil {
		lf.graph = g
	}
	return g, err
}

// Refusals lists what the last render left out of the leases because it
// would take over the intent's own networks (render.LeaseRefused).
func (lf *Leases) Refusals() []status.LeaseRefusal {
	if lf == nil {
		return nil
	}
	return status.LeaseRefusals(status.RefusalsOf(lf.graph))
}

// ApplyLeases runs an apply's lease rounds after the first (res), as long
// as the last round changed the leases (acquired, confirmed or lost one:
// Leases.Again): the intent rendered with them (their addresses, routes
// and DNS), judged by the same protection (gd), applied, its operations
// after the earlier rounds'. A lease that failed in one round is asked for
// again in the next (its item is still intended), and what it gives is
// applied in the round after: the apply is over only when a round changed
// no lease, so that what it reports converged holds every lease acquired.
// The rounds are bounded (rounds); leases still changing after the last
// are an error of the result (not converged).
func ApplyLeases(ctx context.Context, rt *host.Runtime, lf *Leases, gd *Guarded,
	res *host.Applied, opts host.ApplyOptions) (*host.Applied, error) {
	if lf == nil {
		return res, nil
	}
	for range lf.rounds() {
		next, err := lf.Again(rt)
		if err != nil || next == nil {
			return res, err
		}
		if res, err = applyRound(ctx, rt, next, gd, res, opts); err != nil {
			return nil, err
		}
	}
	next, err := lf.Again(rt)
	if err != nil {
		return res, err
	}
	if next != nil {
		res.Err = errors.Join(res.Err, fmt.Errorf("the leases still changed after %d rounds of the apply: what the last acquired is not applied", lf.rounds()))
	}
	return res, nil
}

// ApplyLeasesResult is ApplyLeases on a host.Result (try's rounds).
func ApplyLeasesResult(ctx context.Context, rt *host.Runtime, lf *Leases, gd *Guarded,
	res *host.Result, opts host.ApplyOptions) (*host.Result, error) {
	a, err := ApplyLeases(ctx, rt, lf, gd, &host.Applied{Result: *res}, opts)
	if a == nil {
		return nil, err
	}
	return &a.Result, err
}

// rounds bounds an apply's lease rounds after the first: each but the last
// follows a round that changed a lease, and each lease interface (DHCPv4
// and DHCPv6 apart) gets its lease at most once, so one more than there
// are of them is enough for any that arrives late.
func (lf *Leases) rounds() int {
	return len(lf.ifs) + len(DHCP6Interfaces(lf.files)) + 1
}

// applyRound applies next (a render with the leases of the rounds before,
// res), judged by the protection unless forced, its operations and
// predictions after res's.
func applyRound(ctx context.Context, rt *host.Runtime, next *dg.Graph, gd *Guarded,
	res *host.Applied, opts host.ApplyOptions) (*host.Applied, error) {
	want := next
	if !gd.Force {
		judged, err := rt.Guard(ctx, next, gd.Protection)
		if err != nil {
			return nil, err
		}
		want = judged.Intended
	}
	res2, err := rt.ApplyPredicted(ctx, want, opts)
	if err != nil {
		return nil, err
	}
	res2.Ops = append(slices.Clip(res.Ops), res2.Ops...)
	if res.Disruptions == nil || res2.Disruptions == nil {
		res2.Disruptions = nil
	} else {
		res2.Disruptions = append(slices.Clip(res.Disruptions), res2.Disruptions...)
	}
	return res2, nil
}
