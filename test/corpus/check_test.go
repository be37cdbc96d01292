//go:build !vmtest

package corpus_test

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/testns"
)

// checkKernel compares what the kernel's own tools print with what the
// intent says, object by object: links, addresses, routes, rules,
// neighbours, sysctls and iptables chains.
func (e *env) checkKernel(in *intent.Intent) {
	e.t.Helper()
	for i := range in.Interfaces {
		e.checkLink(&in.Interfaces[i])
	}
	for i := range in.Routes {
		e.checkRoute(&in.Routes[i])
	}
	for i := range in.Rules {
		e.checkRule(&in.Rules[i])
	}
	for _, n := range in.Neighbors {
		e.checkNeighbor(n)
	}
	for k, v := range in.Sysctls {
		if got := strings.TrimSpace(e.exec("cat", sysctlPath(k))); got != v {
			e.t.Errorf("sysctl %s = %q, want %q", k, got, v)
		}
	}
	for i := range in.Firewall.Chains {
		e.checkChain(&in.Firewall.Chains[i])
	}
}

// linkKinds maps the intent's link types to IFLA_INFO_KIND.
var linkKinds = map[intent.LinkType]string{
	"bond": "bond", "vlan": "vlan", "bridge": "bridge", "veth": "veth", "macvlan": "macvlan", "vxlan": "vxlan",
}

func (e *env) checkLink(ifc *intent.Interface) {
	e.t.Helper()
	list := e.ipJSON("-d", "link", "show", "dev", ifc.Name)
	if len(list) != 1 {
		e.t.Errorf("interface %s: not in the kernel", ifc.Name)
		return
	}
	l := list[0]
	errf := func(format string, args ...any) {
		e.t.Errorf("interface %s: %s", ifc.Name, fmt.Sprintf(format, args...))
	}
	info, _ := l["linkinfo"].(map[string]any)
	data, _ := info["info_data"].(map[string]any)
	if kind, ok := linkKinds[ifc.Type]; ok && info["info_kind"] != kind {
		errf("kind %v, want %s", info["info_kind"], kind)
	}
	if ifc.MTU != 0 && num(l["mtu"]) != float64(ifc.MTU) {
		errf("mtu %v, want %d", l["mtu"], ifc.MTU)
	}
	up := slices.Contains(anyStrings(l["flags"]), "UP")
	if wantUp := ifc.State != "down"; up != wantUp {
		errf("admin up %v, want %v (flags %v)", up, wantUp, l["flags"])
	}
	if ifc.MAC != "" && !strings.EqualFold(str(l["address"]), ifc.MAC) {
		errf("mac %v, want %s", l["address"], ifc.MAC)
	}
	if master := str(l["master"]); master != ifc.Master {
		errf("master %q, want %q", master, ifc.Master)
	}
	if ifc.Type != "physical" {
		want := "netagent"
		if ifc.Alias != "" {
			want += ":" + ifc.Alias
		}
		if alias := str(l["ifalias"]); alias != want {
			errf("alias %q, want %q", alias, want)
		}
	}
	switch ifc.Type {
	case "bridge":
		b := ifc.Bridge
		if b == nil {
			b = &intent.Bridge{}
		}
		wantNum(errf, data, "stp_state", boolNum(b.STP))
		wantNum(errf, data, "vlan_filtering", boolNum(b.VLANFiltering))
		if fd := b.ForwardDelay.Centi(); fd != 0 {
			wantNum(errf, data, "forward_delay", float64(fd))
		}
	case "veth":
		e.checkVethPeer(ifc, errf)
	case "macvlan":
		if got := str(data["mode"]); got != string(ifc.Macvlan.EffectiveMode()) {
			errf("macvlan mode %q, want %q", got, ifc.Macvlan.EffectiveMode())
		}
		if got := str(l["link"]); got != ifc.Macvlan.Parent {
			errf("parent %q, want %q", got, ifc.Macvlan.Parent)
		}
	case "vxlan":
		e.checkVXLAN(ifc.VXLAN, l, data, errf)
	case "vlan":
		wantNum(errf, data, "id", float64(ifc.VLAN.ID))
		if got := str(l["link"]); got != ifc.VLAN.Parent {
			errf("parent %q, want %q", got, ifc.VLAN.Parent)
		}
		if got := strings.ToLower(str(data["protocol"])); got != string(ifc.VLAN.EffectiveProtocol()) {
			errf("protocol %q, want %q", got, ifc.VLAN.EffectiveProtocol())
		}
	case "bond":
		if ifc.Bond != nil {
			if got := str(data["mode"]); got != string(ifc.Bond.EffectiveMode()) {
				errf("bond mode %q, want %q", got, ifc.Bond.EffectiveMode())
			}
			wantNum(errf, data, "miimon", float64(ifc.Bond.MIIMon.Units()))
		}
	}
	e.checkAddresses(ifc, errf)
}

func (e *env) checkVethPeer(ifc *intent.Interface, errf func(string, ...any)) {
	e.t.Helper()
	var out string
	if ns := ifc.Veth.PeerNetns; ns != "" {
		if e.peer == nil || e.peer.Name != ns {
			errf("peer namespace %q is not the case's", ns)
			return
		}
		out = testns.Exec(e.t, e.peer, "ip", "-j", "-d", "link", "show", "dev", ifc.Veth.Peer)
	} else {
		out = e.ip("-j", "-d", "link", "show", "dev", ifc.Veth.Peer)
	}
	peer := decodeList(e.t, out)
	if len(peer) != 1 {
		errf("peer %s missing", ifc.Veth.Peer)
		return
	}
	if info, _ := peer[0]["linkinfo"].(map[string]any); info["info_kind"] != "veth" {
		errf("peer %s is a %v", ifc.Veth.Peer, info["info_kind"])
	}
}

func (e *env) checkVXLAN(v *intent.VXLAN, l, data map[string]any, errf func(string, ...any)) {
	wantNum(errf, data, "id", float64(v.VNI))
	wantNum(errf, data, "port", float64(v.EffectivePort()))
	for field, want := range map[string]string{"local": v.Local, "remote": v.Remote, "group": v.Group} {
		if got := str(data[field]); got != want {
			errf("vxlan %s %q, want %q", field, got, want)
		}
	}
	if got, _ := data["learning"].(bool); got != v.EffectiveLearning() {
		errf("vxlan learning %v, want %v", data["learning"], v.EffectiveLearning())
	}
	if v.Parent != "" && str(data["link"]) != v.Parent {
		errf("vxlan parent %v, want %s", data["link"], v.Parent)
	}
}

func (e *env) checkAddresses(ifc *intent.Interface, errf func(string, ...any)) {
	e.t.Helper()
	have := map[string]bool{}
	for _, l := range e.ipJSON("addr", "show", "dev", ifc.Name) {
		for _, a := range anyMaps(l["addr_info"]) {
			have[fmt.Sprintf("%s/%v", a["local"], a["prefixlen"])] = true
		}
	}
	for _, a := range ifc.Addresses {
		p := netip.MustParsePrefix(a)
		if !have[fmt.Sprintf("%s/%d", p.Addr(), p.Bits())] {
			errf("address %s missing (have %v)", a, have)
		}
	}
}

// checkRoute finds the route by family, table, destination, metric and
// type, and compares the rest.
func (e *env) checkRoute(r *intent.Route) {
	e.t.Helper()
	fam := "-4"
	if r.EffectiveFamily() == intent.FamilyIPv6 {
		fam = "-6"
	}
	dst, err := r.Dst()
	if err != nil {
		e.t.Fatal(err)
	}
	name := fmt.Sprintf("route %s table %d metric %d", dst, r.EffectiveTable(), r.EffectiveMetric())
	var found map[string]any
	for _, k := range e.ipJSON(fam, "route", "show", "table", "all") {
		if routeDst(k, fam == "-6") == dst && routeTable(k) == r.EffectiveTable() && uint32(num(k["metric"])) == r.EffectiveMetric() &&
			routeType(k) == string(r.EffectiveType()) {
			found = k
			break
		}
	}
	if found == nil {
		e.t.Errorf("%s: not in the kernel", name)
		return
	}
	errf := func(format string, args ...any) { e.t.Errorf("%s: %s", name, fmt.Sprintf(format, args...)) }
	if str(found["protocol"]) != "211" && str(found["protocol"]) != "netagent" {
		errf("protocol %v, want netagent's", found["protocol"])
	}
	if r.Via != "" && str(found["gateway"]) != netip.MustParseAddr(r.Via).String() {
		errf("gateway %v, want %s", found["gateway"], r.Via)
	}
	if r.Dev != "" && str(found["dev"]) != r.Dev {
		errf("dev %v, want %s", found["dev"], r.Dev)
	}
	if r.Src != "" && str(found["prefsrc"]) != r.Src {
		errf("src %v, want %s", found["prefsrc"], r.Src)
	}
	if r.Scope != "" {
		scope := str(found["scope"])
		if scope == "" {
			scope = "global"
		}
		if scope != string(r.Scope) {
			errf("scope %s, want %s", scope, r.Scope)
		}
	}
}

func routeDst(k map[string]any, v6 bool) netip.Prefix {
	s := str(k["dst"])
	if s == "default" {
		if v6 {
			return netip.MustParsePrefix("::/0")
		}
		return netip.MustParsePrefix("0.0.0.0/0")
	}
	if !strings.Contains(s, "/") {
		a := netip.MustParseAddr(s)
		return netip.PrefixFrom(a, a.BitLen())
	}
	return netip.MustParsePrefix(s)
}

func routeTable(k map[string]any) uint32 {
	switch t := str(k["table"]); t {
	case "", "main":
		return 254
	case "local":
		return 255
	case "default":
		return 253
	default:
		n, _ := strconv.ParseUint(t, 10, 32)
		return uint32(n)
	}
}

func routeType(k map[string]any) string {
	if t := str(k["type"]); t != "" {
		return t
	}
	return "unicast"
}

// checkRule finds the rule by family, priority and every selector.
func (e *env) checkRule(r *intent.Rule) {
	e.t.Helper()
	fam := "-4"
	if r.EffectiveFamily() == intent.FamilyIPv6 {
		fam = "-6"
	}
	for _, k := range e.ipJSON(fam, "rule") {
		if uint32(num(k["priority"])) != r.Priority || routeTable(k) != uint32(r.Table) ||
			rulePrefix(k, "src") != normPrefix(r.From) || rulePrefix(k, "dst") != normPrefix(r.To) ||
			str(k["iif"]) != r.IIF || str(k["oif"]) != r.OIF || !ruleMark(k, r) {
			continue
		}
		return
	}
	e.t.Errorf("rule %+v: not in the kernel (ip %s rule: %v)", *r, fam, e.ipJSON(fam, "rule"))
}

func rulePrefix(k map[string]any, field string) string {
	s := str(k[field])
	if s == "" || s == "all" {
		return ""
	}
	a := netip.MustParseAddr(s)
	bits := a.BitLen()
	if n, ok := k[field+"len"].(float64); ok {
		bits = int(n)
	}
	return normPrefix(netip.PrefixFrom(a, bits).String())
}

func normPrefix(s string) string {
	if s == "" {
		return ""
	}
	p := netip.MustParsePrefix(s).Masked()
	if p.Bits() == 0 {
		return "" // the kernel keeps no selector for a /0
	}
	return p.String()
}

func ruleMark(k map[string]any, r *intent.Rule) bool {
	if r.FwMark == 0 && r.FwMask == 0 {
		return k["fwmark"] == nil
	}
	mask := r.FwMask
	if mask == 0 {
		mask = 0xffffffff
	}
	mark, _ := strconv.ParseUint(strings.TrimPrefix(str(k["fwmark"]), "0x"), 16, 32)
	kmask := uint64(0xffffffff)
	if s := str(k["fwmask"]); s != "" {
		kmask, _ = strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 32)
	}
	return uint32(mark) == r.FwMark && uint32(kmask) == mask
}

func (e *env) checkNeighbor(n intent.Neighbor) {
	e.t.Helper()
	ip := netip.MustParseAddr(n.IP).String()
	for _, k := range e.ipJSON("neigh", "show", "dev", n.Dev, "nud", "permanent") {
		if str(k["dst"]) == ip && strings.EqualFold(str(k["lladdr"]), n.MAC) {
			return
		}
	}
	e.t.Errorf("neighbour %s %s lladdr %s: not in the kernel", n.Dev, n.IP, n.MAC)
}

// checkChain checks a chain in each of its families: it exists, holds
// exactly the intent's rules (iptables -C finds each, in the count
// expected, besides netagent's own comment rule), and its jump is where
// the intent puts it.
func (e *env) checkChain(c *intent.Chain) {
	e.t.Helper()
	for _, fam := range c.Families() {
		prog := "iptables"
		if fam == intent.FamilyIPv6 {
			prog = "ip6tables"
		}
		name := fmt.Sprintf("%s -t %s chain %s", prog, c.Table, c.Name)
		if !e.try(prog, "-t", string(c.Table), "-S", c.Name) {
			e.t.Errorf("%s: not in the kernel", name)
			continue
		}
		var rules []string
		for _, line := range strings.Split(e.exec(prog, "-t", string(c.Table), "-S", c.Name), "\n") {
			if strings.HasPrefix(line, "-A ") && !strings.Contains(line, `--comment netagent`) {
				rules = append(rules, line)
			}
		}
		if len(rules) != len(c.Args) {
			e.t.Errorf("%s: %d rules, want %d:\n%s", name, len(rules), len(c.Args), strings.Join(rules, "\n"))
		}
		for i, args := range c.Args {
			check := append([]string{"-t", string(c.Table), "-C", c.Name}, args...)
			if !e.try(prog, check...) {
				e.t.Errorf("%s: rule %d %q not found", name, i, c.Rules[i])
			}
		}
		if c.JumpFrom != "" {
			e.checkJump(prog, c, name)
		}
	}
}

func (e *env) checkJump(prog string, c *intent.Chain, name string) {
	e.t.Helper()
	pos := 0
	for _, line := range strings.Split(e.exec(prog, "-t", string(c.Table), "-S", string(c.JumpFrom)), "\n") {
		if !strings.HasPrefix(line, "-A ") {
			continue
		}
		pos++
		if strings.HasSuffix(line, " -j "+c.Name) {
			if c.Position != 0 && pos != c.Position {
				e.t.Errorf("%s: jump from %s at position %d, want %d", name, c.JumpFrom, pos, c.Position)
			}
			return
		}
	}
	e.t.Errorf("%s: no jump from %s", name, c.JumpFrom)
}

func wantNum(errf func(string, ...any), data map[string]any, field string, want float64) {
	if got := num(data[field]); got != want {
		errf("%s %v, want %v", field, data[field], want)
	}
}

func boolNum(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, str(x))
	}
	return out
}

func anyMaps(v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
