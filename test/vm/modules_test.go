package vm

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A modules.dep in Debian's shape: dependencies listed last-loaded first.
const testModulesDep = `kernel/net/llc/llc.ko:
kernel/net/802/stp.ko: kernel/net/llc/llc.ko
kernel/net/802/garp.ko: kernel/net/802/stp.ko kernel/net/llc/llc.ko
kernel/net/802/mrp.ko:
kernel/net/8021q/8021q.ko: kernel/net/802/garp.ko kernel/net/802/stp.ko kernel/net/802/mrp.ko kernel/net/llc/llc.ko
kernel/net/tls/tls.ko:
kernel/drivers/net/bonding/bonding.ko: kernel/net/tls/tls.ko
kernel/drivers/net/dummy.ko.xz:
kernel/drivers/net/vxlan/vxlan.ko: kernel/net/ipv6/ip6_udp_tunnel.ko kernel/net/ipv4/udp_tunnel.ko
kernel/net/ipv4/udp_tunnel.ko:
kernel/net/ipv6/ip6_udp_tunnel.ko:
kernel/a.ko: kernel/b.ko
kernel/b.ko: kernel/a.ko
`

func writeModulesDir(t *testing.T, dep, builtin string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{"modules.dep": dep, "modules.builtin": builtin} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func names(mods []Module) string {
	var n []string
	for _, m := range mods {
		n = append(n, m.Name)
	}
	return strings.Join(n, " ")
}

func TestLoadOrderPutsDependenciesFirst(t *testing.T) {
	ix, err := readModuleIndex(writeModulesDir(t, testModulesDep, "kernel/drivers/net/veth.ko\n"))
	if err != nil {
		t.Fatal(err)
	}
	order, err := ix.loadOrder([]Module{
		{Name: "8021q"}, {Name: "bonding", Params: []string{"max_bonds=0"}},
		{Name: "dummy"}, {Name: "veth"}, {Name: "vxlan"}, {Name: "llc"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "llc mrp stp garp 8021q tls bonding dummy udp_tunnel ip6_udp_tunnel vxlan"
	if got := names(order); got != want {
		t.Errorf("load order:\n got %s\nwant %s (veth is built in)", got, want)
	}
	if !reflect.DeepEqual(order[6].Params, []string{"max_bonds=0"}) {
		t.Errorf("bonding params = %q, want [max_bonds=0]", order[6].Params)
	}
}

func TestLoadOrderTreatsDashAsUnderscore(t *testing.T) {
	ix, err := readModuleIndex(writeModulesDir(t, testModulesDep, ""))
	if err != nil {
		t.Fatal(err)
	}
	order, err := ix.loadOrder([]Module{{Name: "ip6-udp-tunnel"}})
	if err != nil || names(order) != "ip6_udp_tunnel" {
		t.Errorf("loadOrder(ip6-udp-tunnel) = %q, %v; want ip6_udp_tunnel", names(order), err)
	}
}

func TestLoadOrderErrors(t *testing.T) {
	ix, err := readModuleIndex(writeModulesDir(t, testModulesDep, ""))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"nosuch": "not in modules.dep", "a": "dependency cycle"} {
		if _, err := ix.loadOrder([]Module{{Name: name}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("loadOrder(%s) error = %v, want one saying %q", name, err, want)
		}
	}
}
