package snapshot

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/configurators/nftables"
)

// Bounds of a document Read accepts.
const (
	MaxSize      = 256 << 20 // bytes of the document
	MaxRecords   = 1024
	maxRecordLen = 64 << 20
	maxName      = 15 // IFNAMSIZ-1
	maxText      = 256
)

// PathError is a document's field that is wrong, named by its JSON path.
type PathError struct {
	Path string // "links[2].mtu"
	Err  error
}

func (e *PathError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *PathError) Unwrap() error { return e.Err }

func bad(path string, format string, args ...any) error {
	return &PathError{Path: path, Err: fmt.Errorf(format, args...)}
}

// Read parses and checks a document (untrusted): at most MaxSize bytes,
// known fields only, Version, and every field (check).
func Read(r io.Reader) (*Document, error) { return readAtMost(r, MaxSize) }

// readAtMost is Read of a document of at most limit bytes.
func readAtMost(r io.Reader, limit int) (*Document, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("reading the snapshot: %w", err)
	}
	if len(data) > limit {
		return nil, fmt.Errorf("the snapshot is larger than %d bytes", limit)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d Document
	if err := dec.Decode(&d); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, bad(te.Field, "want %s, not a JSON %s", te.Type, te.Value)
		}
		return nil, fmt.Errorf("the snapshot is not a JSON document: %w", err)
	}
	if dec.More() {
		return nil, errors.New("the snapshot has more than one JSON document")
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	return &d, nil
}

// check checks every field of d.
func (d *Document) check() error {
	if d.Version != Version {
		return bad("version", "version %d is not supported (want %d)", d.Version, Version)
	}
	for p, s := range map[string]string{"netns": d.Netns, "identity.bootId": d.Identity.BootID, "identity.netns": d.Identity.Netns, "identity.nsId": d.Identity.NsID} {
		if len(s) > maxText {
			return bad(p, "longer than %d bytes", maxText)
		}
	}
	idx, names, err := d.checkLinks()
	if err != nil {
		return err
	}
	for i := range d.Links {
		if err := d.Links[i].checkRefs(fmt.Sprintf("links[%d]", i), idx); err != nil {
			return err
		}
	}
	if err := d.checkL3(idx, names); err != nil {
		return err
	}
	return d.checkRest()
}

// checkLinks checks each link alone and returns the links by index and
// by name.
func (d *Document) checkLinks() (map[int]*Link, map[string]bool, error) {
	idx, names := map[int]*Link{}, map[string]bool{}
	lo := false
	for i := range d.Links {
		l, p := &d.Links[i], fmt.Sprintf("links[%d]", i)
		if err := l.check(p); err != nil {
			return nil, nil, err
		}
		if idx[l.Index] != nil {
			return nil, nil, bad(p+".index", "ifindex %d is twice in the snapshot", l.Index)
		}
		if names[l.Name] {
			return nil, nil, bad(p+".name", "%q is twice in the snapshot", l.Name)
		}
		if (l.Kind == "loopback") != (l.Index == 1) || l.Kind == "loopback" && l.Name != "lo" {
			return nil, nil, bad(p, "lo, ifindex 1, is the only loopback link")
		}
		lo = lo || l.Kind == "loopback"
		idx[l.Index], names[l.Name] = l, true
	}
	if !lo {
		return nil, nil, bad("links", "no lo")
	}
	return idx, names, nil
}

var kinds = map[string]bool{"loopback": true, "physical": true, "veth": true, "dummy": true, "bridge": true, "macvlan": true, "vxlan": true,
	"bond": true, "vlan": true, "vrf": true, "gre": true, "ipip": true, "sit": true, "ip6tnl": true, "ipvlan": true, "wireguard": true}

// tunnels are the tunnel kinds a snapshot holds settings of.
var tunnels = map[string]bool{"gre": true, "ipip": true, "sit": true, "ip6tnl": true}

// masters are the kinds that have ports.
var masters = map[string]bool{"bridge": true, "bond": true, "vrf": true}

func (l *Link) check(p string) error {
	switch {
	case l.Index < 1 || l.Index > 1<<30:
		return bad(p+".index", "ifindex %d is out of range", l.Index)
	case l.Name == "" || len(l.Name) > maxName || strings.ContainsAny(l.Name, "/: \t\n") || l.Name == "." || l.Name == "..":
		return bad(p+".name", "%q is not a link name", l.Name)
	case l.Fallback && (!link.IsFallbackDevice(l.Name, l.Kind) || l.Master != 0 || l.Parent != 0 || l.Port != nil):
		return bad(p+".fallback", "%s of kind %q is no tunnel module's fallback device, or has a master or parent", l.Name, truncate(l.Kind))
	case !kinds[l.Kind] && !l.Fallback:
		return bad(p+".kind", "kind %q is not one a snapshot loads (loopback, physical, veth, dummy, bridge, macvlan, vxlan, bond, vlan, vrf, gre, ipip, sit, ip6tnl, ipvlan, wireguard)", l.Kind)
	case l.MTU < 0 || l.MTU > 1<<20:
		return bad(p+".mtu", "MTU %d is out of range", l.MTU)
	case len(l.Alias) > maxText:
		return bad(p+".alias", "longer than %d bytes", maxText)
	case (l.Bridge != nil) != (l.Kind == "bridge"):
		return bad(p+".bridge", "settings of a bridge are there exactly for a bridge")
	case (l.Macvlan != nil) != (l.Kind == "macvlan"):
		return bad(p+".macvlan", "settings of a macvlan are there exactly for a macvlan")
	case (l.Vxlan != nil) != (l.Kind == "vxlan"):
		return bad(p+".vxlan", "settings of a VXLAN are there exactly for a VXLAN")
	case (l.Bond != nil) != (l.Kind == "bond"):
		return bad(p+".bond", "settings of a bond are there exactly for a bond")
	case (l.Vlan != nil) != (l.Kind == "vlan"):
		return bad(p+".vlan", "settings of a VLAN are there exactly for a VLAN")
	case (l.Vrf != nil) != (l.Kind == "vrf"):
		return bad(p+".vrf", "settings of a VRF are there exactly for a VRF")
	case (l.Ipvlan != nil) != (l.Kind == "ipvlan"):
		return bad(p+".ipvlan", "settings of an ipvlan are there exactly for an ipvlan")
	case (l.Wireguard != nil) != (l.Kind == "wireguard"):
		return bad(p+".wireguard", "settings of a WireGuard device are there exactly for one")
	case (l.Tunnel != nil) != (tunnels[l.Kind] && !l.Fallback):
		return bad(p+".tunnel", "settings of a tunnel are there exactly for a tunnel (not a fallback device)")
	case l.Parent != 0 && l.Kind != "veth" && !lowered[l.Kind] && l.Tunnel == nil, lowered[l.Kind] && l.Parent == 0:
		return bad(p+".parent", "only a veth (its peer), a macvlan, an ipvlan and a VLAN (its lower link, required) and a tunnel (its lower device) have a parent")
	case l.Port != nil && l.Master == 0:
		return bad(p+".port", "only a bridge port has port settings")
	case l.Port != nil && (l.Port.Cost > 65535 || l.Port.Priority != nil && *l.Port.Priority > 63):
		return bad(p+".port", "cost 0-65535 and priority 0-63")
	case l.PeerElsewhere && l.Kind != "veth":
		return bad(p+".peerElsewhere", "only a veth has a peer")
	case !l.PeerElsewhere && (l.PeerNetns != "" || l.PeerName != "" || l.PeerUp):
		return bad(p+".peerNetns", "only a veth whose peer is elsewhere has a peer namespace, name and state")
	case l.PeerName != "" && (len(l.PeerName) > maxName || strings.ContainsAny(l.PeerName, "/: \t\n")):
		return bad(p+".peerName", "%q is not a link name", l.PeerName)
	case l.PeerNetns != "" && (len(l.PeerNetns) > maxText || strings.ContainsAny(l.PeerNetns, "/\x00") || l.PeerNetns == "." || l.PeerNetns == ".."):
		return bad(p+".peerNetns", "%q is not a namespace name", l.PeerNetns)
	}
	if l.MAC != "" {
		if _, err := net.ParseMAC(l.MAC); err != nil {
			return bad(p+".mac", "%q is not a MAC address", l.MAC)
		}
	}
	if l.Macvlan != nil && modeOf(l.Macvlan.Mode) == 0 {
		return bad(p+".macvlan.mode", "%q is not a macvlan mode", l.Macvlan.Mode)
	}
	if l.Ethtool != nil {
		if err := l.Ethtool.check(p + ".ethtool"); err != nil {
			return err
		}
	}
	if err := l.checkKind(p); err != nil {
		return err
	}
	if v := l.Vxlan; v != nil {
		switch {
		case v.VNI < 0 || v.VNI >= 1<<24:
			return bad(p+".vxlan.vni", "VNI %d is out of range", v.VNI)
		case v.Port < 0 || v.Port > 65535:
			return bad(p+".vxlan.port", "port %d is out of range", v.Port)
		case v.Group != "" && net.ParseIP(v.Group) == nil:
			return bad(p+".vxlan.group", "%q is not an IP address", v.Group)
		case v.Local != "" && net.ParseIP(v.Local) == nil:
			return bad(p+".vxlan.local", "%q is not an IP address", v.Local)
		}
	}
	return nil
}

// checkRefs checks the links l names.
func (l *Link) checkRefs(p string, idx map[int]*Link) error {
	if l.Master != 0 {
		m := idx[l.Master]
		if m == nil || !masters[m.Kind] || m == l {
			return bad(p+".master", "ifindex %d is not a bridge, bond or VRF of the snapshot", l.Master)
		}
		if l.Port != nil && m.Kind != "bridge" {
			return bad(p+".port", "only a bridge port has port settings")
		}
	}
	switch {
	case l.Bond != nil && l.Bond.Primary != 0 && (idx[l.Bond.Primary] == nil || idx[l.Bond.Primary].Master != l.Index):
		return bad(p+".bond.primary", "ifindex %d is not a port of this bond", l.Bond.Primary)
	case (lowered[l.Kind] || l.Tunnel != nil && l.Parent != 0) && (idx[l.Parent] == nil || idx[l.Parent] == l):
		return bad(p+".parent", "ifindex %d is not another link of the snapshot", l.Parent)
	case l.Kind == "veth" && !l.PeerElsewhere && (idx[l.Parent] == nil || idx[l.Parent].Kind != "veth" || idx[l.Parent].Parent != l.Index):
		return bad(p+".parent", "ifindex %d is not this veth's peer in the snapshot", l.Parent)
	case l.Vxlan != nil && l.Vxlan.Dev != 0 && idx[l.Vxlan.Dev] == nil:
		return bad(p+".vxlan.dev", "ifindex %d is not a link of the snapshot", l.Vxlan.Dev)
	}
	return nil
}

// checkL3 checks the addresses, routes, rules and neighbours.
func (d *Document) checkL3(idx map[int]*Link, names map[string]bool) error {
	for i, a := range d.Addresses {
		p := fmt.Sprintf("addresses[%d]", i)
		if !names[a.Dev] {
			return bad(p+".dev", "%q is not a link of the snapshot", a.Dev)
		}
		if _, err := netip.ParsePrefix(a.Prefix); err != nil {
			return bad(p+".prefix", "%q is not an address with its prefix length", a.Prefix)
		}
		if _, err := netip.ParseAddr(a.Peer); a.Peer != "" && err != nil {
			return bad(p+".peer", "%q is not an address", a.Peer)
		}
		if len(a.Label) > maxName {
			return bad(p+".label", "longer than %d bytes", maxName)
		}
	}
	for i, m := range d.Routes {
		links, err := l3.CheckRouteMsg(m)
		if err != nil {
			return bad(fmt.Sprintf("routes[%d]", i), "not a route's rtnetlink message: %v", err)
		}
		for _, index := range links {
			if idx[index] == nil {
				return bad(fmt.Sprintf("routes[%d]", i), "ifindex %d is not a link of the snapshot", index)
			}
		}
	}
	for i, m := range d.Rules {
		if err := l3.CheckRuleMsg(m); err != nil {
			return bad(fmt.Sprintf("rules[%d]", i), "not a rule's rtnetlink message: %v", err)
		}
	}
	for i, n := range d.Neighbours {
		p := fmt.Sprintf("neighbours[%d]", i)
		if !names[n.Dev] {
			return bad(p+".dev", "%q is not a link of the snapshot", n.Dev)
		}
		if _, err := netip.ParseAddr(n.IP); err != nil {
			return bad(p+".ip", "%q is not an address", n.IP)
		}
		if _, err := parseLLAddr(n.MAC); n.MAC != "" && err != nil {
			return bad(p+".mac", "%q is not a link-layer address", truncate(n.MAC))
		}
	}
	return nil
}

// checkRest checks the iptables tables, the sysctls, nf_tables and the
// records.
func (d *Document) checkRest() error {
	for fam := range d.IPTables {
		if fam != "ipv4" && fam != "ipv6" {
			return bad("iptables", "%q is not a family (ipv4, ipv6)", fam)
		}
	}
	for p, v := range d.Sysctls {
		if clean := path.Clean(p); clean != p || !strings.HasPrefix(p, "/proc/sys/net/") {
			return bad("sysctls", "%q is not a file under /proc/sys/net", p)
		}
		if len(v) > 4096 {
			return bad("sysctls."+p, "longer than 4096 bytes")
		}
	}
	if err := d.checkNftables(); err != nil {
		return err
	}
	if len(d.Records) > MaxRecords {
		return bad("records", "more than %d records", MaxRecords)
	}
	seen := map[string]bool{}
	for i, r := range d.Records {
		p := fmt.Sprintf("records[%d]", i)
		if !recordPath(r.Path) || seen[r.Path] {
			return bad(p+".path", "%q is not a path inside a state directory, or is twice", r.Path)
		}
		if len(r.Content) > maxRecordLen {
			return bad(p+".content", "longer than %d bytes", maxRecordLen)
		}
		seen[r.Path] = true
	}
	return nil
}

// recordPath reports whether p is a clean relative path of at most 8
// parts, of names with no control characters, that is not the lock.
func recordPath(p string) bool {
	if p == "" || path.Clean(p) != p || path.IsAbs(p) || p == "." || strings.HasPrefix(p, "../") || p == ".." || p == "lock" {
		return false
	}
	if strings.Count(p, "/") >= 8 || len(p) > 1024 {
		return false
	}
	return !strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' })
}

// ethtoolGroups are the groups a link's ethtool may have.
var ethtoolGroups = map[string]bool{"channels": true, "rings": true, "coalesce": true, "pause": true, "link": true, "wake-on-lan": true}

// maxEthtoolNames bounds each list and map of a link's ethtool.
const maxEthtoolNames = 512

func (e *Ethtool) check(p string) error {
	for name, list := range map[string][]string{"active": e.Active, "changeable": e.Changeable, "fixed": e.Fixed} {
		if err := checkNames(p+"."+name, list); err != nil {
			return err
		}
	}
	for g, v := range e.Groups {
		gp := p + ".groups." + g
		if !ethtoolGroups[g] {
			return bad(p+".groups", "%q is not an ethtool group", truncate(g))
		}
		if len(v.Cur) > maxEthtoolNames || len(v.Max) > maxEthtoolNames || len(v.Sets) > maxEthtoolNames || len(v.Allowed) > maxEthtoolNames {
			return bad(gp, "more than %d settings", maxEthtoolNames)
		}
		for _, m := range []map[string][]string{v.Sets, v.Allowed} {
			for k, list := range m {
				if err := checkNames(gp+"."+truncate(k), append([]string{k}, list...)); err != nil {
					return err
				}
			}
		}
		for _, m := range []map[string]uint32{v.Cur, v.Max} {
			for k := range m {
				if err := checkNames(gp, []string{k}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func checkNames(p string, names []string) error {
	if len(names) > maxEthtoolNames {
		return bad(p, "more than %d names", maxEthtoolNames)
	}
	for _, n := range names {
		if n == "" || len(n) > 64 || strings.ContainsFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return bad(p, "%q is not an ethtool name", truncate(n))
		}
	}
	return nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// checkNftables checks the nftables section (nftables.State.Check),
// which a document of this version has.
func (d *Document) checkNftables() error {
	if d.Nftables == nil {
		return bad("nftables", "missing")
	}
	err := d.Nftables.Check()
	var se *nftables.StateError
	if errors.As(err, &se) {
		return &PathError{Path: "nftables." + se.Path, Err: se.Err}
	}
	return err
}

// lowered are the kinds that have a lower link (Parent).
var lowered = map[string]bool{"macvlan": true, "vlan": true, "ipvlan": true}

// checkKind checks a bond's, VLAN's and VRF's settings.
func (l *Link) checkKind(p string) error {
	if b := l.Bond; b != nil {
		switch {
		case netlink.StringToBondMode(b.Mode) == netlink.BOND_MODE_UNKNOWN:
			return bad(p+".bond.mode", "%q is not a bond mode", truncate(b.Mode))
		case b.Miimon < 0 || b.Miimon > 1<<30 || b.MinLinks < 0 || b.MinLinks > 1<<30:
			return bad(p+".bond", "miimon and minLinks are out of range")
		case b.LacpRate != "" && netlink.StringToBondLacpRate(b.LacpRate) == netlink.BOND_LACP_RATE_UNKNOWN:
			return bad(p+".bond.lacpRate", "%q is not a LACP rate", truncate(b.LacpRate))
		case b.XmitHashPolicy != "" && netlink.StringToBondXmitHashPolicy(b.XmitHashPolicy) == netlink.BOND_XMIT_HASH_POLICY_UNKNOWN:
			return bad(p+".bond.xmitHashPolicy", "%q is not a transmit hash policy", truncate(b.XmitHashPolicy))
		case b.Primary < 0:
			return bad(p+".bond.primary", "ifindex %d is out of range", b.Primary)
		}
	}
	if v := l.Vlan; v != nil {
		if v.ID < 0 || v.ID >= 4095 {
			return bad(p+".vlan.id", "VLAN id %d is out of range", v.ID)
		}
		if netlink.StringToVlanProtocol(v.Protocol) == netlink.VLAN_PROTOCOL_UNKNOWN {
			return bad(p+".vlan.protocol", "%q is not 802.1Q or 802.1ad", truncate(v.Protocol))
		}
	}
	if l.Vrf != nil && l.Vrf.Table == 0 {
		return bad(p+".vrf.table", "a VRF has a table")
	}
	if v := l.Ipvlan; v != nil {
		if _, _, ok := link.IpvlanOf(v.Mode, v.Flag); !ok {
			return bad(p+".ipvlan", "mode %q flag %q: want l2, l3 or l3s and bridge, private or vepa", truncate(v.Mode), truncate(v.Flag))
		}
	}
	if l.Wireguard != nil {
		return l.Wireguard.check(p + ".wireguard")
	}
	if l.Tunnel != nil {
		return l.Tunnel.check(p+".tunnel", l.Kind)
	}
	return nil
}

// check checks a tunnel of kind: addresses of its family, GRE's keys,
// ip6tnl's encapsulation limit.
func (t *Tunnel) check(p, kind string) error {
	for name, s := range map[string]string{"local": t.Local, "remote": t.Remote} {
		if s == "" {
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Is4() == (kind == "ip6tnl") || a.Zone() != "" {
			return bad(p+"."+name, "%q is not an address of a %s tunnel", truncate(s), kind)
		}
	}
	switch {
	case (t.IKey != 0 || t.OKey != 0) && kind != "gre":
		return bad(p+".ikey", "only a GRE tunnel has keys")
	case t.EncapLimit != 0 && kind != "ip6tnl":
		return bad(p+".encapLimit", "only an ip6tnl tunnel has an encapsulation limit")
	case t.PMTUDisc > 1 || t.PMTUDisc != 0 && kind == "ip6tnl":
		return bad(p+".pmtudisc", "0 or 1, and none for ip6tnl")
	}
	return nil
}

// parseLLAddr parses a neighbour's link-layer address: a MAC, or of a
// tunnel its remote IPv4 or IPv6 address, as colon-separated bytes (1 to
// 32 of them, as the kernel's MAX_ADDR_LEN).
func parseLLAddr(s string) (net.HardwareAddr, error) {
	parts := strings.Split(s, ":")
	if len(parts) > 32 {
		return nil, errors.New("longer than 32 bytes")
	}
	out := make(net.HardwareAddr, len(parts))
	for i, p := range parts {
		b, err := hex.DecodeString(p)
		if err != nil || len(b) != 1 {
			return nil, fmt.Errorf("byte %d is not two hex digits", i)
		}
		out[i] = b[0]
	}
	return out, nil
}
