package render

// notYetDHCP4 refuses the interfaces with "dhcp4": the intent format
// takes the section (intent.DHCP4), but no item yet acquires a lease, and
// rendering the interface without it would apply an uplink with no
// address while reporting success.
func (b *builder) notYetDHCP4() {
	for i := range b.in.Interfaces {
		ifc := &b.in.Interfaces[i]
		if ifc.DHCP4.Enabled() {
			at := b.in.Locate(ifc.Origin, "interfaces", i)
			b.fail(field(at, "dhcp4"), "DHCPv4 is not implemented yet: the agent cannot acquire a lease for %q", ifc.Name)
		}
	}
}
