package intent

import (
	"fmt"
	"net/netip"
)

// The neighbors section.
var neighborsSection = listSection("neighbors", func(in *Intent) *[]Neighbor { return &in.Neighbors },
	func(x *Neighbor) *Origin { return &x.Origin }, oneKey(neighborKey), (*checker).neighbors, true)

// Neighbor is a permanent neighbor (ARP or NDP) entry.
type Neighbor struct {
	Dev string `json:"dev"`
	IP  string `json:"ip"`
	MAC string `json:"mac"`

	Drift DriftPolicy `json:"drift,omitempty"` // "": the file's (DriftPolicy)

	Origin Origin `json:"-"`
}

// neighbors checks every neighbor entry, and that no two share a dev and ip.
func (c *checker) neighbors() {
	seen := map[string]Origin{}
	for i := range c.in.Neighbors {
		n := &c.in.Neighbors[i]
		at := c.in.Locate(n.Origin, "neighbors", i)
		if c.neighbor(n, at) {
			c.unique(seen, neighborKey(n), at)
		}
	}
}

// neighbor checks one neighbor entry; it returns whether its identity is
// sound.
func (c *checker) neighbor(n *Neighbor, at Origin) bool {
	devOK := c.required(at.field("dev"), n.Dev)
	if devOK {
		_, devOK = c.ref(at.field("dev"), n.Dev)
	}
	ipOK := c.required(at.field("ip"), n.IP)
	if ipOK {
		_, ipOK = c.unicastAddr(at.field("ip"), n.IP)
	}
	if c.required(at.field("mac"), n.MAC) {
		c.mac(at.field("mac"), n.MAC, true)
	}
	return devOK && ipOK
}

// neighborKey is a neighbor's device and address.
func neighborKey(n *Neighbor) string {
	ip := n.IP
	if a, err := netip.ParseAddr(n.IP); err == nil {
		ip = a.String()
	}
	return fmt.Sprintf("neighbor %s on %q", ip, n.Dev)
}
