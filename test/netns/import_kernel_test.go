//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/testns"
)

// kimportEnv is a namespace configured by hand, as an administrator does
// it with ip(8), and the namespace its uplink veth's peer lives in.
type kimportEnv struct {
	*cliEnv
	peer *cliEnv
}

// newKimportEnv makes two namespaces: the host (e) and the far end of its
// uplink (peer). Duplicate address detection is off in both, before any
// link is made (the environment, as for cliNewEnv: IPv6 addresses are
// final at once).
func newKimportEnv(t *testing.T) *kimportEnv {
	e := &kimportEnv{
		cliEnv: &cliEnv{t: t, tgt: testns.New(t), bin: cliBinary(t), stateDir: t.TempDir()},
		peer:   &cliEnv{t: t, tgt: testns.New(t), bin: cliBinary(t), stateDir: t.TempDir()},
	}
	e.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")
	return e
}

// configureByHand is the host an administrator made: an uplink veth whose
// peer is in the other namespace, a macvlan and a vxlan on it, a bridge
// with a veth port, addresses of
// both families, routes in two tables, a rule, a permanent neighbour, and
// sysctls changed.
func (e *kimportEnv) configureByHand() {
	for _, args := range [][]string{
		{"link", "add", "up0", "type", "veth", "peer", "name", "up0-far", "netns", e.peer.tgt.Name},
		{"link", "add", "br0", "type", "bridge"},
		{"link", "add", "lan0", "type", "veth", "peer", "name", "lan0-host"},
		{"link", "set", "lan0", "master", "br0"},
		{"link", "set", "up0", "mtu", "1400"},
		{"link", "add", "mv0", "link", "up0", "type", "macvlan", "mode", "bridge"},
		{"link", "add", "vx0", "type", "vxlan", "id", "42", "dstport", "4789", "local", "10.77.0.1", "remote", "10.77.0.9", "dev", "up0"},
		{"link", "set", "mv0", "up"}, {"link", "set", "vx0", "up"},
		{"addr", "add", "10.90.0.1/24", "dev", "vx0"},
		{"link", "set", "br0", "up"}, {"link", "set", "up0", "up"}, {"link", "set", "lan0", "up"},
		{"addr", "add", "10.77.0.1/24", "dev", "up0"},
		{"addr", "add", "2001:db8:77::1/64", "dev", "up0"},
		{"addr", "add", "192.168.77.1/24", "dev", "br0"},
		{"route", "add", "10.78.0.0/16", "via", "10.77.0.2"},
		{"route", "add", "default", "via", "10.77.0.2", "table", "100"},
		{"-6", "route", "add", "2001:db8:78::/48", "via", "2001:db8:77::2", "table", "100"},
		{"rule", "add", "from", "192.168.77.0/24", "lookup", "100", "pref", "100"},
		{"neigh", "add", "10.77.0.5", "lladdr", "02:00:00:00:77:05", "dev", "up0", "nud", "permanent"},
	} {
		e.ip(args...)
	}
	e.exec("sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.conf.up0.rp_filter=2")
	e.peer.ip("link", "set", "up0-far", "up") // the far end has its cable in
}

// normalizedState is the namespace as ip(8) prints it (ip -j -d link,
// addr, route and rule of every table and both families, the permanent
// neighbours), less what differs between two namespaces that hold the
// same configuration: the order of creation, interface indexes (a peer, a master, a route's
// device are named instead), the protocol and alias marks netagent
// writes, counters and timers, the operational state (carrier follows
// the far end). The MAC of a link in random (a veth peer no intent can
// give settings to: the kernel picks it) is left out.
func (e *cliEnv) normalizedState(random ...string) string {
	e.t.Helper()
	var b strings.Builder
	names := map[float64]string{}
	for _, l := range e.ipJSON("link", "show") {
		names[l["ifindex"].(float64)] = l["ifname"].(string)
	}
	for _, l := range e.ipJSON("-d", "link", "show") {
		if slices.Contains(random, l["ifname"].(string)) {
			delete(l, "address")
		}
		fmt.Fprintf(&b, "link %s\n", normalizedLink(l, names))
	}
	for _, l := range e.ipJSON("addr", "show") {
		for _, a := range l["addr_info"].([]any) {
			a := a.(map[string]any)
			if slices.Contains(random, l["ifname"].(string)) && a["scope"] == "link" {
				continue // made of the random MAC
			}
			fmt.Fprintf(&b, "addr %s %v/%v scope %v\n", l["ifname"], a["local"], a["prefixlen"], a["scope"])
		}
	}
	for _, fam := range []string{"-4", "-6"} {
		for _, r := range e.ipJSON(fam, "route", "show", "table", "all") {
			if dev, _ := r["dev"].(string); slices.Contains(random, dev) && strings.HasPrefix(r["dst"].(string), "fe80::") && r["type"] == "local" {
				continue // the link-local address made of the random MAC
			}
			delete(r, "protocol")
			fmt.Fprintf(&b, "route %s %s\n", fam, sortedJSON(r))
		}
		for _, r := range e.ipJSON(fam, "rule", "show") {
			delete(r, "protocol")
			fmt.Fprintf(&b, "rule %s %s\n", fam, sortedJSON(r))
		}
	}
	for _, n := range e.ipJSON("neigh", "show", "nud", "permanent") {
		delete(n, "protocol")
		fmt.Fprintf(&b, "neigh %s\n", sortedJSON(n))
	}
	lines := strings.Split(b.String(), "\n")
	slices.Sort(lines) // the kernel lists in creation order
	return strings.Join(lines, "\n")
}

// settledState waits until two normalizedStates in a row are the same
// (links settle for a moment after they come up) and returns it.
func (e *cliEnv) settledState(random ...string) string {
	e.t.Helper()
	prev := e.normalizedState(random...)
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond)
		cur := e.normalizedState(random...)
		if cur == prev {
			return cur
		}
		prev = cur
	}
	e.t.Fatal("the namespace never settled")
	return ""
}

// normalizedLink is one link of ip -j -d link, normalized (see
// normalizedState).
func normalizedLink(l map[string]any, names map[float64]string) string {
	out := map[string]any{}
	for _, k := range []string{"ifname", "flags", "mtu", "link_type", "address", "master", "linkinfo"} {
		if v, ok := l[k]; ok {
			out[k] = v
		}
	}
	if _, other := l["link_netnsid"]; other {
		out["peer"] = "in another namespace"
	} else if p, ok := l["link_index"].(float64); ok {
		out["peer"] = names[p]
	}
	if li, ok := out["linkinfo"].(map[string]any); ok {
		for _, k := range []string{"info_data", "info_slave_data"} {
			d, _ := li[k].(map[string]any)
			for _, timer := range []string{"hello_timer", "tcn_timer", "topology_change_timer", "gc_timer", "forward_delay_timer", "hold_timer", "message_age_timer"} {
				delete(d, timer)
			}
		}
	}
	return sortedJSON(out)
}

// sortedJSON is v as JSON with sorted keys (encoding/json sorts maps).
func sortedJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// A namespace configured by hand with ip(8) is described by import
// kernel: the intent validates, names no warning (everything there is
// expressible; the uplink, a veth whose peer is in another namespace, is
// a physical interface with its MTU), and applied to a fresh namespace
// made the same way for its physical parts (the uplink and its peer
// namespace) gives the same state, as ip(8) prints it, normalized.
func TestImportKernelHandMadeRoundTrip(t *testing.T) {
	a := newKimportEnv(t)
	a.configureByHand()
	res := a.mustRun(0, "import", "kernel")
	if res.stderr != "" {
		t.Errorf("import kernel warns:\n%s", res.stderr)
	}
	a.mustRun(0, "validate", a.writeFile("imported.json", res.stdout))
	b := newKimportEnv(t)
	// The uplink is the fresh host's physical part, made as a's was: a
	// veth whose peer is in the other namespace (a container's NIC),
	// nothing set on it. The intent sets the rest.
	b.ip("link", "add", "up0", "type", "veth", "peer", "name", "up0-far", "netns", b.peer.tgt.Name)
	b.peer.ip("link", "set", "up0-far", "up")
	b.mustRun(0, "apply", b.writeFile("imported.json", res.stdout))
	// up0's MAC is its hardware's; lan0-host's is the kernel's random one
	want, got := a.settledState("up0", "lan0-host"), b.settledState("up0", "lan0-host")
	if got != want {
		t.Errorf("the imported intent applied gives another state:\n%s", lineDiff(want, got))
	}
	for _, want := range []string{`"type": "physical"`, `"mtu": 1400`, `"type": "macvlan"`, `"type": "vxlan"`, `"sysctls"`, `"net.ipv4.ip_forward": "1"`, `"net.ipv4.conf.up0.rp_filter": "2"`, `"table": 100`, `"neighbors"`, `"master": "br0"`} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("the import lacks %s:\n%s", want, res.stdout)
		}
	}
	if v := b.exec("sysctl", "-n", "net.ipv4.conf.up0.rp_filter"); strings.TrimSpace(v) != "2" {
		t.Errorf("rp_filter of up0 applied: %q, want 2", v)
	}
}

// What import kernel cannot declare it names in a warning, never
// silently: the up state of a veth end the intent leaves out (the other
// end declares the pair), a link of a kind the intent has not (a tun:
// described as physical, so that its route stays), a dynamic address (a
// lifetime), a rule of a built-in iptables chain; the rest is still
// imported (a chain of its own with its jump) and validates.
func TestImportKernelWarnsWhatItCannotDeclare(t *testing.T) {
	e := newKimportEnv(t)
	e.configureByHand()
	e.ip("link", "set", "lan0-host", "up")
	e.ip("tuntap", "add", "dev", "tun0", "mode", "tun")
	e.ip("link", "set", "tun0", "up")
	e.ip("route", "add", "10.81.0.0/16", "dev", "tun0")
	e.ip("addr", "add", "10.79.0.1/24", "dev", "up0", "valid_lft", "300", "preferred_lft", "300")
	e.exec("iptables", "-A", "INPUT", "-s", "10.79.0.0/24", "-j", "ACCEPT")
	e.exec("iptables", "-N", "MINE")
	e.exec("iptables", "-A", "MINE", "-s", "10.80.0.0/24", "-j", "RETURN")
	e.exec("iptables", "-A", "FORWARD", "-j", "MINE")
	res := e.mustRun(0, "import", "kernel")
	for _, want := range []string{
		"warning: kernel: interface lan0-host: the peer of veth lan0 is declared by it and created down, with its MTU and no alias: its state up cannot be declared",
		"warning: kernel: interface tun0 kind tuntap: links of kind tuntap are not in the intent: described as a physical interface, there and not made by netagent",
		"warning: kernel: address 10.79.0.1/24 dev up0 scope global proto 0: a dynamic address (valid lifetime",
		"warning: kernel: iptables-chain ipv4/filter/INPUT rule -s 10.79.0.0/24 -j ACCEPT: a rule of a built-in chain",
	} {
		wantWarning(t, res.stderr, want)
	}
	if n := strings.Count(res.stderr, "warning:"); n != 4 {
		t.Errorf("%d warnings, want 4:\n%s", n, res.stderr)
	}
	for _, want := range []string{`"name": "MINE"`, `"jumpFrom": "FORWARD"`, `"10.77.0.1/24"`, `"name": "tun0"`, `"to": "10.81.0.0/16"`, `"dev": "tun0"`} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("the import lacks %s:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "10.79.0.1") {
		t.Errorf("the import holds what it warned about:\n%s", res.stdout)
	}
	e.mustRun(0, "validate", e.writeFile("imported.json", res.stdout))
}

// import takes --netns before the source's name (and after it): either
// way the import reads that namespace, not the one netagent runs in.
func TestImportKernelNetnsPlacement(t *testing.T) {
	e := newKimportEnv(t)
	e.configureByHand()
	names := func(stdout string) []string {
		var doc struct{ Interfaces []struct{ Name string } }
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		var out []string
		for _, i := range doc.Interfaces {
			out = append(out, i.Name)
		}
		return out
	}
	want := []string{"br0", "lan0", "mv0", "up0", "vx0"}
	for _, argv := range [][]string{
		{"--state-dir", e.stateDir, "import", "--netns", e.tgt.Name, "kernel"},
		{"--state-dir", e.stateDir, "import", "kernel", "--netns", e.tgt.Name},
		{"--state-dir", e.stateDir, "--netns", e.tgt.Name, "import", "kernel"},
	} {
		res := e.run(nil, argv...)
		if res.code != 0 {
			t.Fatalf("netagent %v: %s", argv, res)
		}
		if got := names(res.stdout); !slices.Equal(got, want) {
			t.Errorf("netagent %v: interfaces %v, want %v (namespace %s's)", argv, got, want, e.tgt.Name)
		}
	}
}

// With --all the kernel's own objects are in: lo in the intent, and the
// others the kernel makes by itself (the loopback's and link-local
// addresses, protocol kernel routes, the default rules) named in
// warnings, since no intent can declare them; the intent validates.
func TestImportKernelAll(t *testing.T) {
	e := newKimportEnv(t)
	e.configureByHand()
	res := e.mustRun(0, "import", "kernel", "--all")
	if !strings.Contains(res.stdout, `"name": "lo"`) {
		t.Errorf("--all leaves lo out:\n%s", res.stdout)
	}
	for _, want := range []string{
		"warning: kernel: address 127.0.0.1/8 dev lo",
		"warning: kernel: route 10.77.0.0/24 dev up0 table main metric 0 scope link src 10.77.0.1 proto 2: the kernel's own",
		"warning: kernel: route local 10.77.0.1/32",
		"warning: kernel: rule ipv4 32766: from all lookup main proto 2: the kernel's own",
		"warning: kernel: rule ipv6 0: from all lookup local proto 2: the kernel's own",
	} {
		wantWarning(t, res.stderr, want)
	}
	e.mustRun(0, "validate", e.writeFile("all.json", res.stdout))
	plain := e.mustRun(0, "import", "kernel")
	if plain.stderr != "" || strings.Contains(plain.stdout, `"name": "lo"`) {
		t.Errorf("without --all, lo or the kernel's own objects are named:\n%s\n%s", plain.stdout, plain.stderr)
	}
}

// wantWarning fails the test unless stderr holds the warning.
func wantWarning(t *testing.T, stderr, warning string) {
	t.Helper()
	if !strings.Contains(stderr, warning) {
		t.Errorf("import kernel does not warn %q:\n%s", warning, stderr)
	}
}
