package link

import (
	"fmt"
	"net"
	"slices"

	"github.com/netagent/netagent/internal/netnsx"
)

// PermanentMACs returns every link of t's namespace by name, each with
// its permanent (burnt-in) MAC: IFLA_PERM_ADDRESS, or ethtool's permaddr
// for a device on a kernel whose link dump lacks it; nil for a link the
// kernel reports none for (a veth, a bridge: virtual links have none).
// For import kernel, which matches the NICs by it.
func PermanentMACs(t *netnsx.Target) (map[string]net.HardwareAddr, error) {
	k := &kernel{nl: t.NL, nic: hostNIC{t: t, sysfs: "/sys"}}
	return k.permanentMACs()
}

func (k *kernel) permanentMACs() (map[string]net.HardwareAddr, error) {
	links, err := k.nl.LinkList()
	if err != nil {
		return nil, fmt.Errorf("listing links: %w", err)
	}
	if len(links) > MaxOthers {
		return nil, fmt.Errorf("%d links, more than the %d an import takes", len(links), MaxOthers)
	}
	out := make(map[string]net.HardwareAddr, len(links))
	for _, l := range links {
		a := l.Attrs()
		perm := slices.Clone(a.PermHWAddr)
		if len(perm) == 0 && l.Type() == "device" && k.nic != nil {
			perm, _ = k.nic.nicPermAddr(a.Name) // none: taken by its name
		}
		out[a.Name] = perm
	}
	return out, nil
}

// PermanentMACs is PermanentMACs over the fake.
func (f *FakeKernel) PermanentMACs() (map[string]net.HardwareAddr, error) {
	return (&kernel{nl: f, nic: f}).permanentMACs()
}
