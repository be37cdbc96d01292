package eni

import "strconv"

// vrfOptions: vrf-table makes the interface a VRF with that table; vrf
// NAME makes an interface a member (its master) of the VRF NAME. Not
// imported: ifupdown2's move of the kernel's `0: lookup local` rule to
// priority 32765 with its first VRF (vrf.py _add_vrf_rules), which an
// intent cannot say (it deletes no rule of the kernel's own).
var vrfOptions = map[string]setter{
	"vrf-table": func(ifc *iface, args []string) string {
		if args[0] == "auto" {
			return "ifupdown2 picks a free table at ifup time (from its vrf-table range); netagent needs the table: write its number"
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
}
