// Package disrupt names what one operation of a plan does to traffic, as
// the configurator that runs it behaves: each configurator package
// predicts its own items' operations (link.Predict, link.PredictPort,
// l3.Predict, firewall.Predict), each link kind its own settings (next to
// the kind's code), and configurators.Predict picks the package by the
// item's type. It is pure data: no kernel calls.
package disrupt

import "strings"

// Effect is what an operation does to traffic.
type Effect string

// The effects, from the mildest.
const (
	// None: the object is new, or changes in place without a moment out
	// of service (an MTU change on a veth or a bridge, a new address).
	None Effect = "none"
	// Atomic: the object is replaced in one kernel transaction, with no
	// window without it (a route replaced with NLM_F_REPLACE, a
	// neighbour entry replaced, an iptables chain rewritten by one
	// iptables-restore).
	Atomic Effect = "atomic"
	// Detach: a port leaves its bond, bridge or vrf (and joins another):
	// between the two it forwards in neither.
	Detach Effect = "detach"
	// Withdrawn: the object (a route, a neighbour, an address) is deleted
	// and added again: it is missing for the duration.
	Withdrawn Effect = "withdrawn"
	// Flap: the link goes down and comes back up (admin or carrier).
	Flap Effect = "flap"
	// Down: the link is set down and stays down.
	Down Effect = "down"
	// Recreate: the link is deleted and created again, and everything on
	// it (addresses, routes, neighbours, ports) goes with it and comes
	// back; its ifindex changes.
	Recreate Effect = "recreate"
	// Removed: the object is deleted for good (a link: it goes down and
	// away).
	Removed Effect = "removed"
)

// rank orders the effects by severity, for Worse.
var rank = map[Effect]int{None: 0, Atomic: 1, Detach: 2, Withdrawn: 3, Flap: 4, Down: 5, Recreate: 6, Removed: 7}

// Prediction is what one operation does to traffic.
type Prediction struct {
	Effect Effect
	// Certain: the effect happens whenever the operation runs; otherwise
	// it depends on what the kernel or the driver does then (a NIC
	// driver that resets the link on an MTU change), and Effect is the
	// worst case.
	Certain bool
	// LinksDown are the links that go down during the operation (a flap,
	// a set down, a recreate, a delete), the operation's own link first.
	LinksDown []string
	// Routes are the kernel's own routes the operation withdraws with it
	// (an address's subnet route), `ip route` style: "10.4.0.0/24 dev v3".
	Routes []string
	// Why says what happens, in words, as the configurator does it.
	Why string
}

// In is the prediction of an operation without effect on traffic.
func In(why string) Prediction { return Prediction{Effect: None, Certain: true, Why: why} }

// Certainly is a certain prediction of effect, with the links that go
// down.
func Certainly(e Effect, why string, linksDown ...string) Prediction {
	return Prediction{Effect: e, Certain: true, Why: why, LinksDown: linksDown}
}

// Maybe is a prediction of effect that depends on the kernel or the
// driver.
func Maybe(e Effect, why string, linksDown ...string) Prediction {
	return Prediction{Effect: e, Why: why, LinksDown: linksDown}
}

// Worse returns the worse of p and q: the higher effect; at the same one,
// the certain one. The links down and the reasons of both are kept.
func Worse(p, q Prediction) Prediction {
	hi, lo := p, q
	if rank[q.Effect] > rank[p.Effect] || rank[q.Effect] == rank[p.Effect] && q.Certain && !p.Certain {
		hi, lo = q, p
	}
	for _, l := range lo.LinksDown {
		if !contains(hi.LinksDown, l) {
			hi.LinksDown = append(hi.LinksDown, l)
		}
	}
	for _, r := range lo.Routes {
		if !contains(hi.Routes, r) {
			hi.Routes = append(hi.Routes, r)
		}
	}
	if lo.Effect != None && lo.Why != "" && !strings.Contains(hi.Why, lo.Why) {
		hi.Why += "; " + lo.Why
	}
	return hi
}

// String renders the prediction as "flap (maybe): why".
func (p Prediction) String() string {
	var b strings.Builder
	b.WriteString(p.Label())
	if p.Why != "" {
		b.WriteString(": " + p.Why)
	}
	return b.String()
}

// Label names the effect in words: "in place", "link flap", "recreate",
// "withdrawn for the duration", ..., with "(possible)" when not certain.
func (p Prediction) Label() string {
	s := labels[p.Effect]
	if s == "" {
		s = string(p.Effect)
	}
	if !p.Certain {
		s += " (possible)"
	}
	return s
}

var labels = map[Effect]string{
	None:      "in place",
	Atomic:    "replaced atomically",
	Detach:    "port detached for the duration",
	Withdrawn: "withdrawn for the duration",
	Flap:      "link flap",
	Down:      "link down",
	Recreate:  "recreate",
	Removed:   "removed",
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
