package vm

import (
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The emulated NIC models. Each is a qemu device driver name.
const (
	ModelE1000  = "e1000"          // Intel 82540EM; the guest's e1000 driver
	ModelVirtio = "virtio-net-pci" // virtio over PCI; the guest's virtio_net driver
	ModelE100   = "i82559c"        // Intel 82559C; the guest's e100 driver (takes forced speed/duplex and Wake-on magic)
)

// nicModels maps a model to the guest driver that binds it and the modules
// that driver needs (their own dependencies come from modules.dep).
var nicModels = map[string]struct {
	driver  string
	modules []string
}{
	ModelE1000:  {driver: "e1000", modules: []string{"e1000"}},
	ModelVirtio: {driver: "virtio_net", modules: []string{"virtio_pci", "virtio_net"}},
	ModelE100:   {driver: "e100", modules: []string{"e100"}},
}

// NIC is an emulated network card on the VM's PCI bus pci.0 (the pc
// machine's root bus, which has ACPI hotplug). Every NIC's netdev is a port
// of one qemu hub that has no other ports: the NICs reach each other and
// nothing outside the VM.
type NIC struct {
	ID    string // qemu device id; its netdev is "net-<ID>". Letters, digits, '-', '_'
	Model string // ModelE1000, ModelVirtio or ModelE100
	MAC   string // the card's burnt-in (permanent) address, e.g. "52:54:00:00:00:01"
	Slot  int    // PCI slot on bus 0 (addr=0x<Slot>), 2 to 31; the function is 0
	Hot   bool   // not there at boot: plugged when the guest calls HotAdd(ID)
}

// PCIAddress is the NIC's PCI address in the guest, "0000:00:<slot>.0", as
// sysfs and ethtool's bus-info name it.
func (n NIC) PCIAddress() string { return fmt.Sprintf("0000:00:%02x.0", n.Slot) }

// Path is the NIC's path in udev's ID_PATH form, "pci-0000:00:<slot>.0".
func (n NIC) Path() string { return "pci-" + n.PCIAddress() }

// Driver is the guest kernel driver that binds the NIC ("e1000", "virtio_net").
func (n NIC) Driver() string { return nicModels[n.Model].driver }

// SwapSlots returns a copy of nics in which NICs i and j have traded PCI
// slots: the same cards (model and MAC), each in the other's slot, as if
// someone had moved them between boots.
func SwapSlots(nics []NIC, i, j int) []NIC {
	out := slices.Clone(nics)
	out[i].Slot, out[j].Slot = nics[j].Slot, nics[i].Slot
	return out
}

var nicIDPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,30}$`)

// validateNICs checks each NIC and that no ID, MAC or slot is used twice.
func validateNICs(nics []NIC) error {
	seen := map[string]string{}
	var errs []error
	for i, n := range nics {
		if err := n.validate(); err != nil {
			errs = append(errs, fmt.Errorf("NICs[%d]: %w", i, err))
			continue
		}
		mac, _ := net.ParseMAC(n.MAC)
		for _, key := range []string{"id " + n.ID, "MAC " + mac.String(), "slot " + strconv.Itoa(n.Slot)} {
			if other, dup := seen[key]; dup {
				errs = append(errs, fmt.Errorf("NICs[%d] (%s): %s is also NIC %s's", i, n.ID, key, other))
			}
			seen[key] = n.ID
		}
	}
	return errors.Join(errs...)
}

func (n NIC) validate() error {
	if !nicIDPattern.MatchString(n.ID) {
		return fmt.Errorf("id %q: want a letter, then up to 30 letters, digits, '-' or '_'", n.ID)
	}
	if _, ok := nicModels[n.Model]; !ok {
		return fmt.Errorf("NIC %s: model %q: want %s, %s or %s", n.ID, n.Model, ModelE1000, ModelVirtio, ModelE100)
	}
	mac, err := net.ParseMAC(n.MAC)
	if err != nil || len(mac) != 6 || mac[0]&1 != 0 || mac.String() == "00:00:00:00:00:00" {
		return fmt.Errorf("NIC %s: MAC %q: want a unicast Ethernet address", n.ID, n.MAC)
	}
	if n.Slot < 2 || n.Slot > 31 { // 0 is the host bridge, 1 the ISA/IDE/ACPI functions
		return fmt.Errorf("NIC %s: slot %d: want 2 to 31", n.ID, n.Slot)
	}
	return nil
}

// nicModules adds to modules the drivers of nics that it lacks.
func nicModules(modules []Module, nics []NIC) []Module {
	out := modules
	for _, n := range nics {
		out = withModules(out, nicModels[n.Model].modules)
	}
	return out
}

// withModules returns modules with each of names that it lacks appended.
func withModules(modules []Module, names []string) []Module {
	out := slices.Clone(modules)
	for _, name := range names {
		if !slices.ContainsFunc(out, func(m Module) bool { return normModName(m.Name) == name }) {
			out = append(out, Module{Name: name})
		}
	}
	return out
}

// nicArgs are qemu's options for the NICs present at boot: a hub port and
// a device with its MAC and PCI address for each.
func nicArgs(nics []NIC) []string {
	var args []string
	for _, n := range nics {
		if !n.Hot {
			args = append(args, "-netdev", "hubport,id="+n.netdevID()+",hubid=0", "-device", n.deviceOption())
		}
	}
	return args
}

func (n NIC) netdevID() string { return "net-" + n.ID }

func (n NIC) deviceOption() string {
	return fmt.Sprintf("%s,id=%s,netdev=%s,mac=%s,bus=pci.0,addr=0x%x", n.Model, n.ID, n.netdevID(), n.MAC, n.Slot)
}

// The guest learns the NICs from the environment variable NICsEnv: one
// "id,model,mac,slot,hot" record per NIC, separated by ';'.
const NICsEnv = "NETAGENT_VM_NICS"

func encodeNICs(nics []NIC) string {
	recs := make([]string, len(nics))
	for i, n := range nics {
		recs[i] = fmt.Sprintf("%s,%s,%s,%d,%t", n.ID, n.Model, n.MAC, n.Slot, n.Hot)
	}
	return strings.Join(recs, ";")
}

func decodeNICs(s string) ([]NIC, error) {
	var nics []NIC
	for _, rec := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' }) {
		f := strings.Split(rec, ",")
		if len(f) != 5 {
			return nil, fmt.Errorf("%s record %q: want id,model,mac,slot,hot", NICsEnv, rec)
		}
		slot, err1 := strconv.Atoi(f[3])
		hot, err2 := strconv.ParseBool(f[4])
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%s record %q: %w", NICsEnv, rec, err)
		}
		nics = append(nics, NIC{ID: f[0], Model: f[1], MAC: f[2], Slot: slot, Hot: hot})
	}
	if err := validateNICs(nics); err != nil {
		return nil, fmt.Errorf("%s: %w", NICsEnv, err)
	}
	return nics, nil
}

// GuestNICs returns, inside the VM, the NICs the harness was configured
// with (Config.NICs), the hot-pluggable ones included (Hot set). Outside the
// VM, and in a VM without NICs, it returns none.
func GuestNICs() ([]NIC, error) {
	return decodeNICs(os.Getenv(NICsEnv))
}
