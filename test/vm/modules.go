package vm

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Module is a kernel module to load in the VM, with its insmod parameters.
// Name is the module name ("8021q", "ip6_udp_tunnel"); '-' and '_' are the same.
type Module struct {
	Name   string
	Params []string
}

// DefaultModules are the link kinds netagent manages that the host kernel may
// lack. Their dependencies (llc, stp, garp, mrp, tls, udp_tunnel, gre,
// ip_tunnel, tunnel4, tunnel6, ...) are
// found in modules.dep and loaded first. bonding gets max_bonds=0, or it makes
// a bond0 of its own.
var DefaultModules = []Module{
	{Name: "8021q"},
	{Name: "bonding", Params: []string{"max_bonds=0"}},
	{Name: "dummy"},
	{Name: "veth"},
	{Name: "bridge"},
	{Name: "macvlan"},
	{Name: "vxlan"},
	{Name: "ip_gre"},     // gre (and its fallback devices gre0, gretap0, erspan0)
	{Name: "ipip"},       // ipip (tunl0)
	{Name: "sit"},        // sit (sit0)
	{Name: "ip6_tunnel"}, // ip6tnl (ip6tnl0)
	// wireguard needs the crypto library modules (chacha, poly1305,
	// curve25519: their x86 versions fall back to the generic code on a
	// CPU without SSSE3/AVX/ADX, as qemu's TCG one) and udp_tunnel.
	{Name: "wireguard"},
	{Name: "ipvlan"},
	{Name: "vrf"},
	// nlmon: TestInVMBridgeVLANTrunk reads netagent's requests on one.
	{Name: "nlmon"},
}

// moduleIndex is what modules.dep and modules.builtin say about a kernel.
type moduleIndex struct {
	paths   map[string]string   // module name -> path relative to the modules dir
	deps    map[string][]string // module name -> direct dependencies
	builtin map[string]bool
}

func normModName(name string) string { return strings.ReplaceAll(name, "-", "_") }

// modNameOf turns "kernel/net/8021q/8021q.ko.xz" into "8021q".
func modNameOf(path string) string {
	base := filepath.Base(path)
	return normModName(base[:strings.Index(base, ".ko")])
}

func readModuleIndex(modulesDir string) (*moduleIndex, error) {
	ix := &moduleIndex{paths: map[string]string{}, deps: map[string][]string{}, builtin: map[string]bool{}}
	if err := readLines(filepath.Join(modulesDir, "modules.dep"), ix.addDepLine); err != nil {
		return nil, err
	}
	err := readLines(filepath.Join(modulesDir, "modules.builtin"), func(line string) error {
		ix.builtin[modNameOf(line)] = true
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	return ix, nil
}

// addDepLine parses "kernel/a.ko: kernel/b.ko kernel/c.ko".
func (ix *moduleIndex) addDepLine(line string) error {
	path, rest, ok := strings.Cut(line, ":")
	if !ok {
		return fmt.Errorf("modules.dep line %q: no colon", line)
	}
	name := modNameOf(path)
	ix.paths[name] = path
	for _, dep := range strings.Fields(rest) {
		ix.deps[name] = append(ix.deps[name], modNameOf(dep))
	}
	return nil
}

func readLines(path string, fn func(string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			if err := fn(line); err != nil {
				return fmt.Errorf("reading %s: %w", path, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// loadOrder returns want plus every dependency, each once, dependencies
// before the modules that need them. Built-in modules are left out.
func (ix *moduleIndex) loadOrder(want []Module) ([]Module, error) {
	params := map[string][]string{}
	for _, m := range want {
		params[normModName(m.Name)] = m.Params
	}
	o := orderer{ix: ix, state: map[string]int{}}
	for _, m := range want {
		if err := o.visit(normModName(m.Name)); err != nil {
			return nil, err
		}
	}
	for i := range o.order {
		o.order[i].Params = params[o.order[i].Name]
	}
	return o.order, nil
}

// orderer is a depth-first topological sort over modules.dep.
type orderer struct {
	ix    *moduleIndex
	state map[string]int // 1 visiting, 2 done
	order []Module
}

func (o *orderer) visit(name string) error {
	switch {
	case o.state[name] == 2 || o.ix.builtin[name]:
		return nil
	case o.state[name] == 1:
		return fmt.Errorf("module %s: dependency cycle", name)
	case o.ix.paths[name] == "":
		return fmt.Errorf("module %s: not in modules.dep", name)
	}
	o.state[name] = 1
	deps := o.ix.deps[name]
	for i := len(deps) - 1; i >= 0; i-- { // modules.dep lists them last-loaded first
		if err := o.visit(deps[i]); err != nil {
			return fmt.Errorf("module %s: %w", name, err)
		}
	}
	o.state[name] = 2
	o.order = append(o.order, Module{Name: name})
	return nil
}
