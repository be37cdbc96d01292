package items

import (
	"fmt"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
)

// TypeDHCP4Lease is the type of DHCP4Lease items.
const TypeDHCP4Lease = "dhcp4-lease"

// DHCP4Lease is a DHCPv4 lease to hold on an interface (the intent's
// "dhcp4"): creating it acquires a lease, an asynchronous operation that
// takes seconds (configurators/dhcp), deleting it lets the lease go. Its
// name is the interface. It needs the interface, and on a physical
// interface the carrier of its link (CarrierLink): no lease comes over a
// cable that is out.
type DHCP4Lease struct {
	Dev         string
	Hostname    string // option 12
	ClientID    string // option 61
	VendorClass string // option 60
	// CarrierLink is the Link whose carrier the lease waits for: its own
	// on a physical interface (render fills it); "" on an interface
	// netagent creates (a bridge, a veth, a VLAN), which has no Link item
	// (configurators/link reads it back as an Interface only), so that
	// its client starts once the interface exists and keeps asking until
	// the carrier comes.
	CarrierLink string
	// Kept marks an item read back from a lease kept in the state
	// directory that no server confirmed since the agent started: it
	// differs from the intended item, and the reconciler's Modify asks
	// the server for it again (INIT-REBOOT) while its address stays.
	Kept bool
	// Refused says why render left out the lease's address or some of
	// its routes: they would take over what the intent puts on its own
	// links (agent/render, leaseclaims.go); "": nothing was. Not a kernel
	// attribute nor an exchange: Equal ignores it, so a new reason
	// changes nothing held, and status and check show it.
	Refused string
}

// DHCP4LeaseRef refers to the lease item of an interface.
func DHCP4LeaseRef(dev string) dg.ItemRef { return dg.ItemRef{Type: TypeDHCP4Lease, Name: dev} }

// DHCP4AddressRef stands for the address a lease on dev will give, before
// the lease is known: no item has it, so that a route through a gateway
// only that lease can hold stays blocked ("waits for address/up0/dhcp4")
// until render knows the lease and names its address instead.
func DHCP4AddressRef(dev string) dg.ItemRef {
	return dg.ItemRef{Type: TypeAddress, Name: dev + "/dhcp4"}
}

// IsDHCP4AddressRef reports whether ref is a DHCP4AddressRef.
func IsDHCP4AddressRef(ref dg.ItemRef) bool {
	return ref.Type == TypeAddress && strings.HasSuffix(ref.Name, "/dhcp4")
}

func (l *DHCP4Lease) Type() string   { return TypeDHCP4Lease }
func (l *DHCP4Lease) Name() string   { return l.Dev }
func (l *DHCP4Lease) External() bool { return false }
func (l *DHCP4Lease) Equal(o dg.Item) bool {
	other, ok := o.(*DHCP4Lease)
	if !ok {
		return false
	}
	a, b := *l, *other
	a.Refused, b.Refused = "", ""
	return a == b
}

func (l *DHCP4Lease) String() string {
	kept := ""
	if l.Kept {
		kept = ", kept from before"
	}
	return fmt.Sprintf("dhcp4 lease on %s (hostname %q, client id %q, vendor class %q%s)%s", l.Dev, l.Hostname, l.ClientID, l.VendorClass, kept, refusedNote(l.Refused))
}

func (l *DHCP4Lease) Dependencies() []dg.Dependency {
	return leaseDeps(l.Dev, l.CarrierLink)
}

// leaseDeps are the dependencies of a lease on dev: its interface, and the
// carrier of carrierLink when set.
func leaseDeps(dev, carrierLink string) []dg.Dependency {
	deps := []dg.Dependency{requires(InterfaceRef(dev), "")}
	if carrierLink != "" {
		deps = append(deps, dg.Dependency{RequiredItem: LinkRef(carrierLink), MustSatisfy: HasCarrier, Description: "carrier up"})
	}
	return deps
}

// Validate checks the item names its interface.
func (l *DHCP4Lease) Validate() error {
	if l.Dev == "" {
		return fmt.Errorf("dhcp4 lease without an interface: %w", ErrInvalid)
	}
	return nil
}

// refusedNote is a lease item's Refused for String.
func refusedNote(why string) string {
	if why == "" {
		return ""
	}
	return "; refused: " + why
}
