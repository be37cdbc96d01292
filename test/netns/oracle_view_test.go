package netns_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
)

// The oracle's view of a namespace, shared by the host's oracle tests
// (cliEnv) and the VM's (TestInVMENIOracle): one normalizer, so a case
// compared in the VM is compared as on the host.

// eniCache is where scripts/setup.sh unpacks ifupdown2 (never installed).
const eniCache = "/var/cache/netagent-ifupdown2"

// oracleNS is a namespace the oracle reads back with the real tools.
type oracleNS interface {
	tb() testing.TB
	exec(name string, args ...string) string
	ip(args ...string) string
	ipJSON(args ...string) []map[string]any
}

// eniWriteCase writes a case's files into a new directory and returns the
// path of its interfaces file.
func eniWriteCase(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(text, "@DIR@", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "interfaces")
}

// eniVLANFiltering reports whether in has a VLAN-aware bridge.
func eniVLANFiltering(in *intent.Intent) bool {
	return slices.ContainsFunc(in.Interfaces, func(ifc intent.Interface) bool {
		return ifc.Bridge != nil && ifc.Bridge.VLANFiltering
	})
}

// eniStandIns makes a veth for each physical NIC the intent names, its
// peer up.
func eniStandIns(e oracleNS, in *intent.Intent) {
	for i, ifc := range in.Interfaces {
		if ifc.Type == intent.LinkPhysical && ifc.Name != "lo" {
			peer := fmt.Sprintf("standin%d", i)
			e.ip("link", "add", ifc.Name, "type", "veth", "peer", "name", peer)
			e.ip("link", "set", peer, "up") // a carrier once the NIC is up
		}
	}
}

// oracleView is a namespace's links (kind, mtu, master, up), addresses
// (not link-local), routes of every table (gateway, metric, type, scope,
// onlink) and rules, as sorted lines, without what differs by nature or
// is the test's own: ifindexes, protocols, lifetimes, the kernel's
// link-local, multicast and local-table entries, the stand-ins' peers and
// cliNewEnv's uplink0 pair. With auto, rule priorities the kernel chose
// (32765 and down) compare as "the kernel's" (see autoPriorities).
func oracleView(e oracleNS, auto bool) string {
	out := slices.Concat(oracleLinks(e), oracleAddrs(e))
	for _, fam := range []string{"-4", "-6"} {
		out = append(out, oracleRoutes(e, fam)...)
		out = append(out, oracleRules(e, fam, auto)...)
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// oracleTestLink reports whether a link is the test's own, not the
// configuration's: a stand-in's peer or the uplink0 pair.
func oracleTestLink(name string) bool {
	return strings.HasPrefix(name, "standin") || strings.HasPrefix(name, "uplink0")
}

func oracleLinks(e oracleNS) []string {
	var out []string
	for _, l := range e.ipJSON("-d", "link", "show") {
		name, _ := l["ifname"].(string)
		if oracleTestLink(name) {
			continue
		}
		kind := ""
		if li, ok := l["linkinfo"].(map[string]any); ok {
			kind, _ = li["info_kind"].(string)
		}
		out = append(out, fmt.Sprintf("link %s kind=%s mtu=%v master=%v up=%v", name, kind, l["mtu"], l["master"], jsonHas(l["flags"], "UP")))
	}
	return out
}

func oracleAddrs(e oracleNS) []string {
	var out []string
	for _, l := range e.ipJSON("addr", "show") {
		infos, _ := l["addr_info"].([]any)
		for _, x := range infos {
			a, _ := x.(map[string]any)
			if a["scope"] != "link" && a["scope"] != "host" {
				out = append(out, fmt.Sprintf("addr %v %v/%v", l["ifname"], a["local"], a["prefixlen"]))
			}
		}
	}
	return out
}

func oracleRoutes(e oracleNS, fam string) []string {
	var out []string
	for _, r := range e.ipJSON(fam, "route", "show", "table", "all") {
		dst, dev := fmt.Sprint(r["dst"]), fmt.Sprint(r["dev"])
		if r["table"] == "local" || r["type"] == "multicast" || strings.HasPrefix(dst, "fe80:") || strings.HasPrefix(dst, "ff00:") ||
			dev == "lo" || oracleTestLink(dev) {
			continue
		}
		out = append(out, fmt.Sprintf("route %s table=%v dev=%v via=%v metric=%v type=%v scope=%v onlink=%v",
			dst, r["table"], dev, r["gateway"], r["metric"], r["type"], r["scope"], jsonHas(r["flags"], "onlink")))
	}
	return out
}

func oracleRules(e oracleNS, fam string, auto bool) []string {
	var out []string
	for _, r := range e.ipJSON(fam, "rule", "show") {
		prio := fmt.Sprint(r["priority"])
		if p, _ := r["priority"].(float64); auto && p > 32700 && p < 32766 {
			prio = "the kernel's"
		}
		out = append(out, fmt.Sprintf("rule %s prio=%v from=%v/%v to=%v table=%v", fam, prio, r["src"], r["srclen"], r["dst"], r["table"]))
	}
	return out
}

// jsonHas reports whether an `ip -j` list of flags holds flag.
func jsonHas(list any, flag string) bool {
	data, _ := json.Marshal(list)
	return strings.Contains(string(data), `"`+flag+`"`)
}

// eniState is e's links (kind, mtu, master, up, alias), addresses (not link-local)
// and routes (table, metric, gateway, onlink), sorted, without the
// stand-ins' peers, protocols, lifetimes and ifindexes.
func eniState(e oracleNS) string {
	var lines []string
	for _, l := range e.ipJSON("-d", "link", "show") {
		name := l["ifname"].(string)
		if strings.HasPrefix(name, "standin") || strings.HasPrefix(name, "uplink0") {
			continue
		}
		kind := ""
		if li, ok := l["linkinfo"].(map[string]any); ok {
			kind, _ = li["info_kind"].(string)
		}
		flags, _ := json.Marshal(l["flags"])
		up := strings.Contains(string(flags), `"UP"`)
		lines = append(lines, fmt.Sprintf("link %s kind=%s mtu=%v master=%v up=%v alias=%q%s", name, kind, l["mtu"], l["master"], up, unmarked(l["ifalias"]), eniKindState(l)))
	}
	lines = append(lines, eniBridgeVLANs(e)...)
	for _, a := range e.ipJSON("addr", "show") {
		infos, _ := a["addr_info"].([]any)
		for _, x := range infos {
			ai := x.(map[string]any)
			if ai["scope"] == "link" || ai["scope"] == "host" {
				continue
			}
			lines = append(lines, fmt.Sprintf("addr %s %v/%v", a["ifname"], ai["local"], ai["prefixlen"]))
		}
	}
	for _, fam := range []string{"-4", "-6"} {
		for _, r := range e.ipJSON(fam, "route", "show", "table", "all") {
			if r["table"] == "local" || strings.HasPrefix(fmt.Sprint(r["dst"]), "fe80") || strings.HasPrefix(fmt.Sprint(r["dev"]), "uplink0") || r["type"] == "multicast" {
				continue
			}
			flags, _ := json.Marshal(r["flags"])
			lines = append(lines, fmt.Sprintf("route %v table=%v dev=%v via=%v metric=%v onlink=%v", r["dst"], r["table"], r["dev"], r["gateway"], r["metric"], strings.Contains(string(flags), "onlink")))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// eniKindAttrs are the settings of each kind the oracle compares.
var eniKindAttrs = map[string][]string{
	"bridge": {"vlan_filtering", "stp_state"},
	"vxlan":  {"id", "local", "remote", "group", "link", "port", "learning", "ttl", "ageing"},
	// The kinds only the VM's kernel has (TestInVMENIOracle).
	"bond": {"mode", "miimon", "updelay", "downdelay", "primary", "xmit_hash_policy", "ad_lacp_rate", "min_links"},
	"vlan": {"protocol", "id"},
	"vrf":  {"table"},
}

// eniKindState is a link's settings of its kind, as " key=value ...".
func eniKindState(l map[string]any) string {
	li, _ := l["linkinfo"].(map[string]any)
	kind, _ := li["info_kind"].(string)
	data, _ := li["info_data"].(map[string]any)
	var b strings.Builder
	for _, k := range eniKindAttrs[kind] {
		fmt.Fprintf(&b, " %s=%v", k, data[k])
	}
	return b.String()
}

// eniBridgeVLANs are the bridge VLANs of every port and bridge (bridge
// vlan show), one line each.
func eniBridgeVLANs(e oracleNS) []string {
	var list []map[string]any
	if err := json.Unmarshal([]byte(e.exec("bridge", "-j", "vlan", "show")), &list); err != nil {
		e.tb().Fatalf("bridge -j vlan show: %v", err)
	}
	var lines []string
	for _, port := range list {
		vlans, _ := port["vlans"].([]any)
		for _, x := range vlans {
			v := x.(map[string]any)
			flags, _ := json.Marshal(v["flags"])
			lines = append(lines, fmt.Sprintf("vlan %v %v-%v %s", port["ifname"], v["vlan"], v["vlanEnd"], flags))
		}
	}
	return lines
}

// lineDiff lists the lines only in a or only in b.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range al {
		if !slices.Contains(bl, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range bl {
		if !slices.Contains(al, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// unmarked is a link's alias without netagent's ownership mark
// ("netagent", "netagent:ALIAS"), which differs by nature.
func unmarked(alias any) string {
	s, _ := alias.(string)
	if s == "netagent" {
		return ""
	}
	return strings.TrimPrefix(s, "netagent:")
}
