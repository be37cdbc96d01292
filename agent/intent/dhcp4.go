package intent

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/netagent/netagent/items"
)

// DHCP4 is an interface's "dhcp4" section: the interface gets an IPv4
// address, its default route (and the classless routes of option 121) and
// DNS servers from a DHCPv4 server. "dhcp4": true is the section with
// every default; false, the same as leaving it out.
//
//   - hostname: sent as option 12 (a DNS name: labels of letters, digits
//     and '-', at most 253 bytes); absent, none is sent.
//   - clientId: sent as option 61 (1-255 bytes, as given); absent, the
//     server identifies the client by its MAC address.
//   - useRoutes (default true): install the lease's routes, the default
//     route through the router of option 3, or the routes of option 121
//     when the server sends them (RFC 3442: option 3 is then ignored).
//   - useDNS (default true): hand the lease's DNS servers on.
//   - routeMetric: the metric of the lease's routes and of the leased
//     subnet's prefix route (0-4294967295; 0 is the kernel's default).
//     Two interfaces using their leases' routes need distinct metrics:
//     both default routes would be one route.
//   - vendorClass: sent as option 60 (1-255 bytes of printable ASCII).
//
// An interface with dhcp4 may also have static addresses. It cannot be a
// port of a bond or bridge (the master holds the addresses) nor be
// declared down (no lease comes over a link that is down).
type DHCP4 struct {
	Hostname    string `json:"hostname,omitempty"`
	ClientID    string `json:"clientId,omitempty"`
	UseRoutes   *bool  `json:"useRoutes,omitempty"`
	UseDNS      *bool  `json:"useDNS,omitempty"`
	RouteMetric int64  `json:"routeMetric,omitempty"`
	VendorClass string `json:"vendorClass,omitempty"`

	// off: the section was given as false.
	off bool
}

// Limits of the dhcp4 section.
const (
	maxOptionLen = 255 // a DHCP option's length byte
	maxMetric    = 1<<32 - 1
)

// Enabled reports whether d asks for DHCPv4 (present and not false).
func (d *DHCP4) Enabled() bool { return d != nil && !d.off }

// EffectiveUseRoutes returns useRoutes, true when absent.
func (d *DHCP4) EffectiveUseRoutes() bool { return d.UseRoutes == nil || *d.UseRoutes }

// EffectiveUseDNS returns useDNS, true when absent.
func (d *DHCP4) EffectiveUseDNS() bool { return d.UseDNS == nil || *d.UseDNS }

// jsonBoolOrObject marks a section the shape check accepts as a boolean
// as well as an object.
func (*DHCP4) jsonBoolOrObject() {}

// dhcp4Fields decodes the object form without the methods of DHCP4.
type dhcp4Fields DHCP4

// UnmarshalJSON reads true, false or the object form (unknown fields are
// refused, as everywhere in an intent).
func (d *DHCP4) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "true":
		*d = DHCP4{}
		return nil
	case "false":
		*d = DHCP4{off: true}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f dhcp4Fields
	if err := dec.Decode(&f); err != nil {
		return err
	}
	*d = DHCP4(f)
	return nil
}

// MarshalJSON writes false for a section given as false, true for one
// with every default, the object otherwise: what UnmarshalJSON reads back.
func (d DHCP4) MarshalJSON() ([]byte, error) {
	switch {
	case d.off:
		return []byte("false"), nil
	case d == DHCP4{}:
		return []byte("true"), nil
	}
	return json.Marshal(dhcp4Fields(d))
}

// dhcp4 checks an interface's dhcp4 section, and that no two interfaces'
// leases make the same default route (metrics holds the first interface
// using its lease's routes with each metric).
func (c *checker) dhcp4(ifc *Interface, at Origin, metrics map[int64]string) {
	d := ifc.DHCP4
	if !d.Enabled() {
		return
	}
	o := at.field("dhcp4")
	if ifc.Master != "" {
		if def, ok := c.links[ifc.Master]; ok && (def.ifc.Type == LinkBond || def.ifc.Type == LinkBridge) {
			c.fail(o, "interface %q is a port of %s %q, which holds the addresses: run DHCP there", ifc.Name, def.ifc.Type, ifc.Master)
		}
	}
	if ifc.State == StateDown {
		c.fail(o, "interface %q is declared down: no lease comes over a link that is down", ifc.Name)
	}
	if d.Hostname != "" && !items.IsDomainName(d.Hostname) {
		c.fail(o.field("hostname"), "%q is not a host name (labels of letters, digits and '-', at most %d bytes)", d.Hostname, items.MaxDomainName)
	}
	if d.ClientID != "" && len(d.ClientID) > maxOptionLen {
		c.fail(o.field("clientId"), "is %d bytes long, longer than a DHCP option's %d", len(d.ClientID), maxOptionLen)
	}
	c.vendorClass(o.field("vendorClass"), d.VendorClass)
	if d.RouteMetric < 0 || d.RouteMetric > maxMetric {
		c.fail(o.field("routeMetric"), "%d is out of range 0-%d", d.RouteMetric, int64(maxMetric))
	} else if d.EffectiveUseRoutes() {
		if prev, ok := metrics[d.RouteMetric]; ok {
			c.fail(o.field("routeMetric"), "%d is the metric of the lease routes of interface %q too: their default routes would be one route (give each uplink its own routeMetric)", d.RouteMetric, prev)
		} else {
			metrics[d.RouteMetric] = ifc.Name
		}
	}
}

// vendorClass checks option 60's value.
func (c *checker) vendorClass(o Origin, v string) {
	switch {
	case len(v) > maxOptionLen:
		c.fail(o, "is %d bytes long, longer than a DHCP option's %d", len(v), maxOptionLen)
	case strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r > 0x7e }):
		c.fail(o, "%q has a character that is not printable ASCII", v)
	}
}
