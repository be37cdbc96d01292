package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/configurators/dhcp"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// leaseFacts renders apply's intent files with the DHCPv4 leases known:
// first those the state directory keeps (a later run: the lease's address
// and routes stay intended while the server is asked again), then, after
// an apply that acquired or confirmed leases, the leases held.
//
// The DHCPv6 leases go the same way: host (hostfacts.go) reads the ones
// the state directory keeps, with the host's other facts, at each render.
type leaseFacts struct {
	files map[string]*intent.Intent
	ifs   []string                 // the interfaces with dhcp4, sorted
	used  map[string]*lease4.Lease // the leases of the last render
	// host returns the host's facts (IPv6 forwarding, --resolv-conf, the
	// DHCPv6 leases kept); used6, the DHCPv6 addresses of the last render.
	host  func() (render.Facts, error)
	used6 map[string]render.Lease6
	// graph is the last render (its lease items say what was refused:
	// render.LeaseRefused).
	graph *dg.Graph
}

// newLeaseFacts returns nil when no interface of files has dhcp4 or
// ipv6.dhcp6.
func newLeaseFacts(files map[string]*intent.Intent, host func() (render.Facts, error)) *leaseFacts {
	lf := &leaseFacts{files: files, host: host}
	for _, in := range files {
		for _, ifc := range in.Interfaces {
			if ifc.DHCP4.Enabled() {
				lf.ifs = append(lf.ifs, ifc.Name)
			}
		}
	}
	if len(lf.ifs) == 0 && len(dhcp6Interfaces(files)) == 0 {
		return nil
	}
	slices.Sort(lf.ifs)
	return lf
}

// kept renders with the leases the state directory keeps, still valid.
func (lf *leaseFacts) kept(stateDir string) (*dg.Graph, error) {
	return lf.render(dhcp.KeptLeases(stateDir, time.Now()))
}

// trustKept holds the leases of the last render in rt, as if a server
// had confirmed them: check compares the kernel with them and asks no
// server (the lease items read back as intended).
func (lf *leaseFacts) trustKept(rt *host.Runtime) {
	if lf == nil {
		return
	}
	for _, l := range lf.used {
		rt.Leases().Set(l)
	}
}

// trustFresh holds in rt, as if a server had confirmed them, the leases of
// the last render (those the state directory keeps) that have not reached
// their renewal time (T1) at now: a client asks nothing of its server
// before T1 (RFC 2131 4.4.5), so neither does a second apply of the same
// intent, which then runs no operation for them (their items read back as
// intended). A lease past T1 is asked for again (INIT-REBOOT).
func (lf *leaseFacts) trustFresh(rt *host.Runtime, now time.Time) {
	if lf == nil {
		return
	}
	for _, l := range lf.used {
		if now.Before(l.RenewAt()) {
			rt.Leases().Set(l)
		}
	}
}

// again renders with the leases rt holds, if they differ from the last
// render's (a binding or an expiry: a lease confirmed again refreshes its
// address's lifetime); nil when they do not.
func (lf *leaseFacts) again(rt *host.Runtime) (*dg.Graph, error) {
	held, _ := rt.Leases().Snapshot()
	same := len(held) == len(lf.used)
	for name, l := range held {
		if u := lf.used[name]; u == nil || !u.SameBinding(l) || !u.Expires().Equal(l.Expires()) {
			same = false
		}
	}
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

func (lf *leaseFacts) render(leases map[string]*lease4.Lease) (*dg.Graph, error) {
	f, err := lf.host()
	if err != nil {
		return nil, err
	}
	return lf.renderWith(f, leases)
}

// renderWith renders with the host's facts f and the DHCPv4 leases.
func (lf *leaseFacts) renderWith(f render.Facts, leases map[string]*lease4.Lease) (*dg.Graph, error) {
	lf.used, lf.used6 = leases, f.DHCP6
	f.Leases = leases
	g, err := render.RenderFilesWith(lf.files, f)
	if err == nil {
		lf.graph = g
	}
	return g, err
}

// refusals lists what the last render left out of the leases because it
// would take over the intent's own networks (render.LeaseRefused).
func (lf *leaseFacts) refusals() []status.LeaseRefusal {
	if lf == nil {
		return nil
	}
	return status.LeaseRefusals(status.RefusalsOf(lf.graph))
}

// applyLeases runs apply's lease rounds (applyLeasesPredicted) after
// the first.
func applyLeases(ctx context.Context, rt *host.Runtime, lf *leaseFacts, gd *guarded, force bool,
	res *host.Result, opts host.ApplyOptions) (*host.Result, error) {
	a, err := applyLeasesPredicted(ctx, rt, lf, gd, force, &host.Applied{Result: *res}, opts)
	if a == nil {
		return nil, err
	}
	return &a.Result, err
}

// applyLeasesPredicted runs apply's lease rounds after the first (res),
// as long as the last round changed the leases (acquired, confirmed or
// lost one: leaseFacts.again): the intent rendered with them (their
// addresses, routes and DNS), judged by the same protection, applied, its
// operations after the earlier rounds'. A lease that failed in one round
// is asked for again in the next (its item is still intended), and what
// it gives is applied in the round after: the apply is over only when a
// round changed no lease, so that what it reports converged holds every
// lease acquired. The rounds are bounded (leaseFacts.rounds); leases still
// changing after the last are an error of the result (not converged).
func applyLeasesPredicted(ctx context.Context, rt *host.Runtime, lf *leaseFacts, gd *guarded, force bool,
	res *host.Applied, opts host.ApplyOptions) (*host.Applied, error) {
	if lf == nil {
		return res, nil
	}
	for range lf.rounds() {
		next, err := lf.again(rt)
		if err != nil || next == nil {
			return res, err
		}
		if res, err = applyRound(ctx, rt, next, gd, force, res, opts); err != nil {
			return nil, err
		}
	}
	next, err := lf.again(rt)
	if err != nil {
		return res, err
	}
	if next != nil {
		res.Err = errors.Join(res.Err, fmt.Errorf("the leases still changed after %d rounds of the apply: what the last acquired is not applied", lf.rounds()))
	}
	return res, nil
}

// rounds bounds apply's lease rounds after the first: each but the last
// follows a round that changed a lease, and each lease interface (DHCPv4
// and DHCPv6 apart) gets its lease at most once, so one more than there
// are of them is enough for any that arrives late.
func (lf *leaseFacts) rounds() int {
	return len(lf.ifs) + len(dhcp6Interfaces(lf.files)) + 1
}

// applyRound applies next (a render with the leases of the rounds before,
// res), judged by the protection unless force, its operations and
// predictions after res's.
func applyRound(ctx context.Context, rt *host.Runtime, next *dg.Graph, gd *guarded, force bool,
	res *host.Applied, opts host.ApplyOptions) (*host.Applied, error) {
	want := next
	if !force {
		judged, err := rt.Guard(ctx, next, gd.prot)
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

// leaseJSON is a lease in apply's --json ("leases") and status.
type leaseJSON struct {
	Interface string   `json:"interface"`
	Address   string   `json:"address,omitempty"`
	Server    string   `json:"server,omitempty"`
	Gateway   string   `json:"gateway,omitempty"`
	DNS       []string `json:"dns,omitempty"`
	Domains   []string `json:"domains,omitempty"`
	LeaseTime string   `json:"leaseTime,omitempty"`
	Obtained  string   `json:"obtained,omitempty"`
	Acquired  string   `json:"acquired,omitempty"`
	Renew     string   `json:"renewAt,omitempty"`
	Rebind    string   `json:"rebindAt,omitempty"`
	Expires   string   `json:"expires,omitempty"`
	// Dropped: what of the server's answer was not used (lease4.Check).
	Dropped []string `json:"dropped,omitempty"`
	// Error: no lease is held (why, when known).
	Error string `json:"error,omitempty"`
	// Refused: what of the lease the intent leaves out, and why (it would
	// take over the intent's own networks: render.LeaseRefused).
	Refused string `json:"refused,omitempty"`
}

// leaseReport describes the lease held on each interface with dhcp4.
func leaseReport(lf *leaseFacts, rt *host.Runtime, res *host.Result) []leaseJSON {
	if lf == nil {
		return nil
	}
	var out []leaseJSON
	for _, name := range lf.ifs {
		l := rt.Leases().Get(name)
		if l == nil {
			why := "no lease"
			for _, p := range res.Problems {
				if p.Ref.Type == "dhcp4-lease" && p.Ref.Name == name {
					why = "no lease: " + p.Reason
				}
			}
			out = append(out, leaseJSON{Interface: name, Error: why})
			continue
		}
		j := leaseOf(l)
		j.Refused = render.LeaseRefused(lf.graph, items.DHCP4LeaseRef(name))
		out = append(out, j)
	}
	return out
}

func leaseOf(l *lease4.Lease) leaseJSON {
	j := leaseJSON{Interface: l.Interface, Address: l.Address.String(), LeaseTime: l.LeaseTime.String(),
		Obtained: l.Obtained, Domains: l.Domains, Dropped: l.Dropped,
		Acquired: l.Acquired.Format(time.RFC3339), Renew: l.RenewAt().Format(time.RFC3339),
		Rebind: l.RebindAt().Format(time.RFC3339), Expires: l.Expires().Format(time.RFC3339)}
	if l.Server.IsValid() {
		j.Server = l.Server.String()
	}
	if l.Router.IsValid() {
		j.Gateway = l.Router.String()
	}
	for _, d := range l.DNS {
		j.DNS = append(j.DNS, d.String())
	}
	return j
}

// String is the lease's line in apply's and status's text output.
func (j leaseJSON) String() string {
	if j.Error != "" {
		return fmt.Sprintf("dhcp4 %s: %s", j.Interface, j.Error)
	}
	gw := j.Gateway
	if gw == "" {
		gw = "none"
	}
	s := fmt.Sprintf("dhcp4 %s: %s from %s (%s), gateway %s, DNS %v, lease %s, renew at %s, expires %s",
		j.Interface, j.Address, j.Server, j.Obtained, gw, j.DNS, j.LeaseTime, j.Renew, j.Expires)
	if j.Refused != "" {
		s += "; refused: " + j.Refused
	}
	if len(j.Dropped) > 0 {
		s += fmt.Sprintf("; not used: %q", j.Dropped)
	}
	return s
}
