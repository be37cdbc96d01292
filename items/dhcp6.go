package items

import (
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
)

// TypeDHCP6Lease is the type of DHCP6Lease items.
const TypeDHCP6Lease = "dhcp6-lease"

// DHCP6Lease is a DHCPv6 lease (IA_NA: one address, and the DNS servers
// and search domains of the reply) to hold on an interface (the intent's
// ipv6.dhcp6): creating it acquires the lease, an asynchronous operation
// (configurators/dhcp6), deleting it lets the lease go. Its name is the
// interface. It needs the interface, the carrier of its link on a physical
// interface (CarrierLink, as DHCP4Lease.CarrierLink), and Deps
// (render lists the interface's disable_ipv6 sysctl: the client needs a
// link-local address).
type DHCP6Lease struct {
	Dev         string
	CarrierLink string // see DHCP4Lease.CarrierLink
	Deps        []dg.ItemRef
	// Refused says why render left out the lease's address (it would
	// take over what the intent puts on its own links; see
	// DHCP4Lease.Refused); Equal ignores it.
	Refused string
}

// DHCP6LeaseRef refers to the lease item of an interface.
func DHCP6LeaseRef(dev string) dg.ItemRef { return dg.ItemRef{Type: TypeDHCP6Lease, Name: dev} }

func (l *DHCP6Lease) Type() string   { return TypeDHCP6Lease }
func (l *DHCP6Lease) Name() string   { return l.Dev }
func (l *DHCP6Lease) External() bool { return false }

// Equal compares the interface, CarrierLink and Deps (not Refused).
func (l *DHCP6Lease) Equal(o dg.Item) bool {
	other, ok := o.(*DHCP6Lease)
	return ok && other != nil && l.Dev == other.Dev && l.CarrierLink == other.CarrierLink && slicesEqualRefs(l.Deps, other.Deps)
}

func (l *DHCP6Lease) String() string {
	return fmt.Sprintf("dhcp6 lease on %s%s", l.Dev, refusedNote(l.Refused))
}

// Validate checks the interface name.
func (l *DHCP6Lease) Validate() error {
	if l.Dev == "" {
		return fmt.Errorf("dhcp6 lease: no interface")
	}
	return nil
}

func (l *DHCP6Lease) Dependencies() []dg.Dependency {
	return extraDeps(leaseDeps(l.Dev, l.CarrierLink), l.Deps)
}

func slicesEqualRefs(a, b []dg.ItemRef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
