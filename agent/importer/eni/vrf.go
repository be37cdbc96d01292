package eni

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/netagent/netagent/agent/importer"
)

// vrfOptions: vrf-table makes the interface a VRF with that table (auto:
// autoVRFTables); vrf NAME makes an interface a member (its master) of
// the VRF NAME; vrf-default-route no is what netagent does (it adds no
// route of its own to a VRF's table). Not imported: ifupdown2's move of
// the kernel's `0: lookup local` rule to priority 32765 with its first
// VRF (vrf.py _add_vrf_rules), which an intent cannot say (it deletes no
// rule of the kernel's own).
var vrfOptions = map[string]setter{
	"vrf-table": func(ifc *iface, args []string) string {
		if args[0] == "auto" && len(args) == 1 {
			ifc.vrfAuto = true
			return ""
		}
		n, err := strconv.ParseUint(args[0], 10, 32)
		if err != nil || len(args) > 1 || n == 0 || n >= 253 && n <= 255 {
			return "invalid table " + strconv.Quote(args[0]) + " (a vrf needs a table of its own: 1-252, 256-4294967295)"
		}
		ifc.vrfTable = uint32(n)
		return ""
	},
	"vrf": func(ifc *iface, args []string) string {
		if len(args) > 1 {
			return "invalid vrf: want vrf NAME"
		}
		ifc.vrf = args[0]
		return ""
	},
	"vrf-default-route": func(_ *iface, args []string) string {
		if v, ok := booleans[args[0]]; ok && !v && len(args) == 1 {
			return ""
		}
		return "vrf-default-route " + args[0] + ": the unreachable default route Cumulus' vrf helper adds to a VRF's table " +
			"(Debian's ifupdown2 has no such option and ignores it): netagent adds none; give the intent the route, or write no"
	},
}

// The tables ifupdown2 picks vrf-table auto from (vrf.py: VRF_TABLE_START,
// and _get_avail_vrf_table_id's range up to VRF_TABLE_END, excluded).
const (
	vrfAutoFirst = 1001
	vrfAutoEnd   = 5000
)

// autoVRFTables gives a VRF with vrf-table auto the table ifupdown2 picks
// at boot (its map of VRF tables, rt_tables.d/ifupdown2_vrf_map.conf, is
// removed then): the first of its range that no VRF of the file names. It
// is a warning, since a host's policy (vrf-table-id-start) or an ifreload
// since the boot may have picked another; plan --adopt shows that. With
// several, ifupdown2 numbers them in the order it brings them up, which
// the import cannot know: each is refused.
func (p *parser) autoVRFTables() {
	var autos []*iface
	var taken []uint32
	for _, name := range p.order {
		ifc := p.ifaces[name]
		if ifc.vrfAuto && !ifc.skipped {
			autos = append(autos, ifc)
		} else if ifc.vrfTable != 0 {
			taken = append(taken, ifc.vrfTable)
		}
	}
	for _, ifc := range autos {
		key := "iface " + ifc.name + ": vrf-table"
		if len(autos) > 1 {
			p.refuse(ifc, ifc.at["vrf-table"], key, fmt.Sprintf("auto, with %d VRFs of vrf-table auto: ifupdown2 numbers them from %d in the order it brings them up, which the import cannot know: write each table", len(autos), vrfAutoFirst))
			continue
		}
		t := uint32(vrfAutoFirst)
		for slices.Contains(taken, t) && t < vrfAutoEnd {
			t++
		}
		if t >= vrfAutoEnd {
			p.refuse(ifc, ifc.at["vrf-table"], key, fmt.Sprintf("auto: the VRFs of the file take every table of ifupdown2's range %d-%d", vrfAutoFirst, vrfAutoEnd-1))
			continue
		}
		ifc.vrfTable = t
		p.c.Warn(importer.Refusal{Pos: ifc.at["vrf-table"], Key: key, Object: ifc.name,
			Why: fmt.Sprintf("auto is table %d, the one ifupdown2 picks at boot (the first of its range %d-%d no other VRF of the file names); a vrf-table-id-start policy, or an ifreload since the boot, may have picked another: check ip -d link show %s", t, vrfAutoFirst, vrfAutoEnd-1, ifc.name)})
	}
}
