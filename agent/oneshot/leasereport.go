package oneshot

import (
	"fmt"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/lease"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// LeaseReport is the DHCPv4 lease of an interface after an apply (apply's
// --json "leases", and its text lines), or why none is held.
type LeaseReport struct {
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

// Report describes the lease held in rt on each interface with dhcp4
// after an apply whose result is res.
func (lf *Leases) Report(rt *host.Runtime, res *host.Result) []LeaseReport {
	if lf == nil {
		return nil
	}
	var out []LeaseReport
	for _, name := range lf.ifs {
		l := rt.Leases().Get(name)
		if l == nil {
			why := "no lease"
			for _, p := range res.Problems {
				if p.Ref.Type == "dhcp4-lease" && p.Ref.Name == name {
					why = "no lease: " + p.Reason
				}
			}
			out = append(out, LeaseReport{Interface: name, Error: why})
			continue
		}
		j := LeaseOf(l)
		j.Refused = render.LeaseRefused(lf.graph, items.DHCP4LeaseRef(name))
		out = append(out, j)
	}
	return out
}

// LeaseOf reports a lease.
func LeaseOf(l *lease4.Lease) LeaseReport {
	j := LeaseReport{Interface: l.Interface, Address: l.Address.String(), LeaseTime: l.LeaseTime.String(),
		Obtained: l.Obtained, Domains: l.Domains, Dropped: l.Dropped,
		Acquired: l.Acquired.Format(time.RFC3339), Renew: l.RenewAt().Format(time.RFC3339),
		Rebind: l.RebindAt().Format(time.RFC3339), Expires: l.Expires().Format(time.RFC3339)}
	row := lease.V4{}.Row(l) // the server, gateway and DNS servers as status shows them
	j.Server, j.Gateway, j.DNS = row.Server, row.Gateway, row.DNS
	return j
}

// String is the lease's line in apply's and status's text output.
func (j LeaseReport) String() string {
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
