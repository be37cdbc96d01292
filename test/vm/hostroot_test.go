package vm

import (
	"slices"
	"strings"
	"testing"
)

func TestHostRootConfig(t *testing.T) {
	if args := (Config{}).hostRootArgs(); args != nil {
		t.Errorf("qemu options without HostRoot: %q", args)
	}
	c := Config{HostRoot: true}
	args := strings.Join(c.hostRootArgs(), " ")
	for _, want := range []string{"-fsdev local,id=hostroot,path=/,security_model=none,readonly=on",
		"-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot,bus=pci.0,addr=0x1f"} {
		if !strings.Contains(args, want) {
			t.Errorf("qemu options %q lack %q", args, want)
		}
	}
	names := func(c Config) []string {
		var out []string
		for _, m := range c.modules() {
			out = append(out, m.Name)
		}
		return out
	}
	for _, m := range hostRootModules {
		if !slices.Contains(names(c), m) || slices.Contains(names(Config{}), m) {
			t.Errorf("module %s: with HostRoot %v, without %v; want it only with", m, names(c), names(Config{}))
		}
	}
	c.NICs = []NIC{{ID: "nic0", Model: ModelE1000, MAC: "52:54:00:00:00:10", Slot: HostRootSlot}}
	if err := c.validateHostRoot(); err == nil || !strings.Contains(err.Error(), "slot 31") {
		t.Errorf("a NIC in the share's slot: %v", err)
	}
	c.NICs[0].Slot = 4
	if err := c.validateHostRoot(); err != nil {
		t.Errorf("a NIC in slot 4: %v", err)
	}
}
