package eni

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/netagent/netagent/agent/intent"
)

// bridgeVLANs are an interface's bridge VLAN options: on a bridge,
// vlanAware and the defaults of its ports (vids, pvid); on a port, its
// own (vids, pvid, access, allow-untagged).
type bridgeVLANs struct {
	vlanAware bool
	vids      []int // nil: not given
	pvid      int   // 0: not given
	access    int   // 0: not given
	noUntag   bool  // bridge-allow-untagged no
}

var bridgeVLANOptions = map[string]setter{
	"bridge-vlan-aware":     func(ifc *iface, a []string) string { return setBool(&ifc.vlanAware, a) },
	"bridge-vids":           (*iface).setVIDs,
	"bridge-trunk":          (*iface).setVIDs, // ifupdown2's alias
	"bridge-pvid":           func(ifc *iface, a []string) string { return setVID(&ifc.pvid, a) },
	"bridge-access":         func(ifc *iface, a []string) string { return setVID(&ifc.access, a) },
	"bridge-allow-untagged": (*iface).setAllowUntagged,
}

// bridgeVLANKeys are the options above, in the order a refusal names them.
var bridgeVLANKeys = []string{"bridge-vids", "bridge-trunk", "bridge-pvid", "bridge-access", "bridge-allow-untagged"}

// booleans are ifupdown2's words for yes and no (utils._string_values).
var booleans = map[string]bool{"on": true, "yes": true, "1": true, "off": false, "no": false, "0": false}

func setBool(b *bool, args []string) string {
	v, ok := booleans[args[0]]
	if !ok || len(args) > 1 {
		return "invalid value " + strconv.Quote(strings.Join(args, " ")) + " (want yes or no)"
	}
	*b = v
	return ""
}

func setVID(vid *int, args []string) string {
	n, err := strconv.Atoi(args[0])
	if err != nil || len(args) > 1 || n < 1 || n > 4094 {
		return "invalid VLAN " + strconv.Quote(strings.Join(args, " ")) + " (want one VID, 1-4094)"
	}
	*vid = n
	return ""
}

// vidSep splits bridge-vids as ifupdown2 does: blanks and commas.
var vidSep = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\s,]+`) })

// setVIDs reads bridge-vids: VIDs and ranges (10 20-30,40).
func (ifc *iface) setVIDs(args []string) string {
	ifc.vids = []int{}
	for _, w := range vidSep().Split(strings.Join(args, " "), -1) {
		if w == "" {
			continue
		}
		from, to, ok := intent.BridgeVLAN{VIDs: w}.Range()
		if !ok {
			return "invalid VLAN " + strconv.Quote(w) + " (want a VID or a range, 1-4094)"
		}
		for v := from; v <= to; v++ {
			ifc.vids = append(ifc.vids, v)
		}
	}
	return ""
}

func (ifc *iface) setAllowUntagged(args []string) string {
	var allow bool
	why := setBool(&allow, args)
	ifc.noUntag = !allow
	return why
}

// portVLANs is the VLAN membership ifupdown2 gives port (nil: no stanza)
// of the VLAN-aware bridge br: the port's bridge-access (that VLAN only,
// PVID and untagged), or its bridge-vids (else the bridge's) tagged and
// its bridge-pvid (else the bridge's, else 1) as PVID untagged, none
// with bridge-allow-untagged no. nil: the kernel's default (PVID 1).
func portVLANs(br, port *iface) []intent.BridgeVLAN {
	var own bridgeVLANs
	if port != nil {
		own = port.bridgeVLANs
	}
	if own.access != 0 {
		return []intent.BridgeVLAN{{VID: own.access, PVID: true, Untagged: true}}
	}
	vids := own.vids
	if vids == nil {
		vids = br.vids
	}
	pvid := 0
	if !own.noUntag {
		pvid = firstNonZero(own.pvid, br.pvid, 1)
	}
	if len(vids) == 0 && pvid == 1 {
		return nil
	}
	var out []intent.BridgeVLAN
	if pvid != 0 {
		out = append(out, intent.BridgeVLAN{VID: pvid, PVID: true, Untagged: true})
	}
	return append(out, vidRanges(vids, pvid)...)
}

func firstNonZero(xs ...int) int {
	for _, x := range xs {
		if x != 0 {
			return x
		}
	}
	return 0
}

// vidRanges are vids but skip as tagged VLANs, in ranges.
func vidRanges(vids []int, skip int) []intent.BridgeVLAN {
	var set [4096]bool
	for _, v := range vids {
		set[v] = v != skip
	}
	var out []intent.BridgeVLAN
	for v := 1; v <= 4094; v++ {
		if !set[v] {
			continue
		}
		end := v
		for end < 4094 && set[end+1] {
			end++
		}
		if end == v {
			out = append(out, intent.BridgeVLAN{VID: v})
		} else {
			out = append(out, intent.BridgeVLAN{VIDs: fmt.Sprintf("%d-%d", v, end)})
		}
		v = end
	}
	return out
}

// checkVLANOptions refuses bridge VLAN options where ifupdown2 ignores
// them: on an interface that is not a port of a VLAN-aware bridge (nor
// such a bridge, for bridge-vids and bridge-pvid).
func (p *parser) checkVLANOptions(ifc *iface, awarePort bool) {
	for _, key := range bridgeVLANKeys {
		pos, ok := ifc.at[key]
		switch {
		case !ok, awarePort, ifc.bridge && ifc.vlanAware && (key == "bridge-vids" || key == "bridge-trunk" || key == "bridge-pvid"):
			continue
		}
		p.refuse(ifc, pos, "iface "+ifc.name+": "+key, "ifupdown2 applies it only to a bridge-vlan-aware bridge's ports (and their defaults on the bridge): without one it does nothing; remove it")
	}
}

// vlanAwarePorts are the ports of the VLAN-aware bridges.
func (p *parser) vlanAwarePorts() map[string]bool {
	out := map[string]bool{}
	for _, name := range p.order {
		if br := p.ifaces[name]; br.bridge && br.vlanAware {
			for _, port := range br.ports {
				out[port] = true
			}
		}
	}
	return out
}
