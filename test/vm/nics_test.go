package vm

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

var testNICs = []NIC{
	{ID: "nic0", Model: ModelE1000, MAC: "52:54:00:00:00:10", Slot: 4},
	{ID: "nic1", Model: ModelVirtio, MAC: "52:54:00:00:00:11", Slot: 0x1f},
	{ID: "hot0", Model: ModelE1000, MAC: "52:54:00:00:00:20", Slot: 8, Hot: true},
}

func TestNICNames(t *testing.T) {
	n := testNICs[1]
	if n.PCIAddress() != "0000:00:1f.0" || n.Path() != "pci-0000:00:1f.0" || n.Driver() != "virtio_net" {
		t.Errorf("NIC %s: PCI address %s, path %s, driver %s", n.ID, n.PCIAddress(), n.Path(), n.Driver())
	}
}

func TestNICArgsLeaveHotNICsOut(t *testing.T) {
	want := []string{
		"-netdev", "hubport,id=net-nic0,hubid=0", "-device", "e1000,id=nic0,netdev=net-nic0,mac=52:54:00:00:00:10,bus=pci.0,addr=0x4",
		"-netdev", "hubport,id=net-nic1,hubid=0", "-device", "virtio-net-pci,id=nic1,netdev=net-nic1,mac=52:54:00:00:00:11,bus=pci.0,addr=0x1f",
	}
	if got := nicArgs(testNICs); !reflect.DeepEqual(got, want) {
		t.Errorf("nicArgs =\n%q\nwant\n%q", got, want)
	}
}

func TestNICModulesAddsDriversOnce(t *testing.T) {
	got := nicModules([]Module{{Name: "dummy"}, {Name: "e1000"}}, testNICs)
	want := []Module{{Name: "dummy"}, {Name: "e1000"}, {Name: "virtio_pci"}, {Name: "virtio_net"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nicModules = %v, want %v", got, want)
	}
}

func TestSwapSlotsMovesCards(t *testing.T) {
	got := SwapSlots(testNICs, 0, 1)
	if got[0].Slot != 0x1f || got[1].Slot != 4 || got[0].MAC != testNICs[0].MAC || got[1].Model != ModelVirtio {
		t.Errorf("SwapSlots = %+v", got)
	}
	if testNICs[0].Slot != 4 {
		t.Error("SwapSlots changed its argument")
	}
}

func TestNICsRoundTripThroughTheEnvironment(t *testing.T) {
	got, err := decodeNICs(encodeNICs(testNICs))
	if err != nil || !reflect.DeepEqual(got, testNICs) {
		t.Errorf("decodeNICs(encodeNICs) = %+v, %v; want %+v", got, err, testNICs)
	}
	if got, err := decodeNICs(""); err != nil || got != nil {
		t.Errorf("decodeNICs(\"\") = %+v, %v; want none", got, err)
	}
	if _, err := decodeNICs("nic0,e1000,52:54:00:00:00:10,4"); err == nil || !strings.Contains(err.Error(), "want id,model,mac,slot,hot") {
		t.Errorf("decodeNICs of a short record: %v", err)
	}
}

func TestValidateNICs(t *testing.T) {
	if err := validateNICs(testNICs); err != nil {
		t.Fatalf("valid NICs: %v", err)
	}
	for name, c := range map[string]struct {
		edit func([]NIC)
		want string
	}{
		"id":        {func(n []NIC) { n[0].ID = "0bad" }, `NICs[0]: id "0bad"`},
		"model":     {func(n []NIC) { n[0].Model = "rtl8139" }, `NIC nic0: model "rtl8139"`},
		"multicast": {func(n []NIC) { n[0].MAC = "01:00:5e:00:00:01" }, `NIC nic0: MAC "01:00:5e:00:00:01": want a unicast`},
		"slot":      {func(n []NIC) { n[2].Slot = 1 }, "NIC hot0: slot 1: want 2 to 31"},
		"dup slot":  {func(n []NIC) { n[2].Slot = 4 }, "NICs[2] (hot0): slot 4 is also NIC nic0's"},
		"dup MAC":   {func(n []NIC) { n[1].MAC = "52:54:00:00:00:10" }, "NICs[1] (nic1): MAC 52:54:00:00:00:10 is also NIC nic0's"},
		"dup id":    {func(n []NIC) { n[1].ID = "nic0" }, "NICs[1] (nic0): id nic0 is also NIC nic0's"},
	} {
		nics := slices.Clone(testNICs)
		c.edit(nics)
		if err := validateNICs(nics); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: validateNICs = %v, want %q", name, err, c.want)
		}
	}
}

func TestHotNICWantsAHotOne(t *testing.T) {
	t.Setenv(GuestEnv, "1")
	t.Setenv(NICsEnv, encodeNICs(testNICs))
	if n, err := hotNIC("hot0"); err != nil || n.MAC != "52:54:00:00:00:20" {
		t.Errorf("hotNIC(hot0) = %+v, %v", n, err)
	}
	if _, err := hotNIC("nic0"); err == nil || !strings.Contains(err.Error(), "no NIC with Hot set") {
		t.Errorf("hotNIC(nic0) = %v, want an error: it is there at boot", err)
	}
}
