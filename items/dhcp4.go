package items

import (
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
)

// TypeDHCP4Lease is the type of DHCP4Lease items.
const TypeDHCP4Lease = "dhcp4-lease"

// DHCP4Lease is a DHCPv4 lease to hold on an interface (the intent's
// "dhcp4"): creating it acquires a lease, an asynchronous operation that
// takes seconds (configurators/dhcp), deleting it lets the lease go. Its
// name is the interface. It needs the interface, and the carrier of its
// link: no lease comes over a cable that is out.
type DHCP4Lease struct {
	Dev         string
	Hostname    string // option 12
	ClientID    string // option 61
	VendorClass string // option 60
}

// DHCP4LeaseRef refers to the lease item of an interface.
func DHCP4LeaseRef(dev string) dg.ItemRef { return dg.ItemRef{Type: TypeDHCP4Lease, Name: dev} }

func (l *DHCP4Lease) Type() string   { return TypeDHCP4Lease }
func (l *DHCP4Lease) Name() string   { return l.Dev }
func (l *DHCP4Lease) External() bool { return false }
func (l *DHCP4Lease) Equal(o dg.Item) bool {
	other, ok := o.(*DHCP4Lease)
	return ok && *l == *other
}

func (l *DHCP4Lease) String() string {
	return fmt.Sprintf("dhcp4 lease on %s (hostname %q, client id %q, vendor class %q)", l.Dev, l.Hostname, l.ClientID, l.VendorClass)
}

func (l *DHCP4Lease) Dependencies() []dg.Dependency {
	return []dg.Dependency{
		requires(InterfaceRef(l.Dev), ""),
		{RequiredItem: LinkRef(l.Dev), MustSatisfy: HasCarrier, Description: "carrier up"},
	}
}
