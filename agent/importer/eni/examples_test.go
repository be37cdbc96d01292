package eni

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/importertest"
)

// packageExamples are ifupdown2's examples, in the package scripts/setup.sh
// unpacks (never installed; never copied into the repository: GPL).
const packageExamples = "/var/cache/netagent-ifupdown2/usr/share/doc/ifupdown2/examples"

// examplePins are the outcome of importing each package example (its
// path under packageExamples): "" it imports, else where and at which
// key the first refusal is. A change of the importer that changes one,
// or an example the table lacks, fails TestPackageExamplesPinned.
var examplePins = map[string]string{
	"interfaces":                                                "69:5 iface br2000: mstpctl-treeprio", // mstpd's, and 12.0.0.4/24 on swp30 and br0
	"interfaces_bridge_igmp_mstp":                               "17:12 iface br-300: mstpctl-maxage",
	"interfaces_bridge_template_func":                           "20:3 <%namespace",
	"interfaces_bridge_vlan_bond_vxlan_vrf":                     "7:1 <%",
	"interfaces_with_template":                                  "15:1 %for",
	"mgmt-vrf":                                                  "13:5 iface mgmt: address", // 127.0.0.1/8 on the VRF
	"batman_adv/interfaces_batman":                              "9:7 iface bat0: batman-ifaces",
	"vlan_aware_bridges/interfaces.basic":                       "",
	"vlan_aware_bridges/interfaces.vlan_prune_and_access_ports": "17:7 iface swp1: mstpctl-portadminedge",
	"vlan_aware_bridges/interfaces.with_bonds":                  "62:1 %for",
	"vlan_aware_bridges/interfaces.with_clag":                   "32:7 iface spine-bond: clag-id",
}

// TestPackageExamplesPinned imports each of ifupdown2's example
// interfaces files (not its scripts): it imports or is refused as
// examplePins says, every refusal with its line and why, and with
// --skip-unsupported each imports.
func TestPackageExamplesPinned(t *testing.T) {
	files := packageExampleFiles(t)
	refused := importertest.CheckPins(t, packageExamples, files, examplePins, func(f string, opts importer.Options) error {
		_, err := Import(f, opts)
		return err
	})
	t.Logf("%d of %d ifupdown2 examples refused", refused, len(files))
}

// packageExampleFiles are the example files, one directory deep, without
// the scripts (.py, .sh), relative to packageExamples.
func packageExampleFiles(t *testing.T) []string {
	top, err := filepath.Glob(filepath.Join(packageExamples, "*"))
	if err != nil || len(top) == 0 {
		t.Fatalf("no ifupdown2 examples in %s (scripts/setup.sh unpacks ifupdown2 there): %v", packageExamples, err)
	}
	sub, _ := filepath.Glob(filepath.Join(packageExamples, "*", "*"))
	var out []string
	for _, f := range append(top, sub...) {
		if st, err := os.Stat(f); err != nil || st.IsDir() || strings.HasSuffix(f, ".py") || strings.HasSuffix(f, ".sh") {
			continue
		}
		out = append(out, strings.TrimPrefix(f, packageExamples+"/"))
	}
	return out
}
