package netplan

import (
	"path/filepath"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/importertest"
)

// packageExamples are netplan.io's examples, read where Debian installs
// them (scripts/setup.sh installs netplan.io; never copied into the
// repository: GPL).
const packageExamples = "/usr/share/doc/netplan/examples"

// examplePins are the outcome of importing each package example: "" it
// imports, else where and at which key the first refusal is. A change of
// the importer that changes one, or an example the table lacks, fails
// TestPackageExamplesPinned: the table (and the oracle's outcome table)
// then says what changed.
var examplePins = map[string]string{
	"bonding.yaml":                               "",
	"bonding_router.yaml":                        "37:9 gratuitious-arp", // the bond's num_grat_arp: not in the intent's bond
	"bridge.yaml":                                "",
	"bridge_vlan.yaml":                           "",
	"dhcp.yaml":                                  "",
	"dhcp_wired8021x.yaml":                       "7:7 network.ethernets.enp3s0.auth",
	"direct_connect_gateway.yaml":                "",
	"direct_connect_gateway_ipv6.yaml":           "",
	"infiniband.yaml":                            "9:7 network.ethernets.ib0.infiniband-mode",
	"ipv6_tunnel.yaml":                           "",
	"loopback_interface.yaml":                    "",
	"modem.yaml":                                 "3:13 network.renderer",
	"network_manager.yaml":                       "3:13 network.renderer",
	"offload.yaml":                               "",
	"openvswitch.yaml":                           "4:5 network.openvswitch.protocols",
	"route_metric.yaml":                          "",
	"source_routing.yaml":                        "",
	"sriov.yaml":                                 "7:7 network.ethernets.eno1.embedded-switch-mode",
	"sriov_vlan.yaml":                            "8:7 network.ethernets.enp1s16f1.link",
	"static.yaml":                                "",
	"static_multiaddress.yaml":                   "",
	"static_singlenic_multiip_multigateway.yaml": "",
	"vlan.yaml":                                  "",
	"vrf.yaml":                                   "",
	"vxlan.yaml":                                 "27:7 network.tunnels.vxlan1005.neigh-suppress", // the bridge port's neigh_suppress
	"windows_dhcp_server.yaml":                   "",
	"wireguard.yaml":                             "7:12 key", // an inline private key: the intent holds no keys
	"wireless.yaml":                              "5:5 network.wifis.wlp2s0b1",
	"wpa_enterprise.yaml":                        "4:5 network.wifis.wl0",
}

// TestPackageExamplesPinned imports each of netplan.io's examples: it
// imports or is refused as examplePins says, every refusal with its line,
// and with --skip-unsupported each imports (the rest of the file, what
// depended on a refused device left out with it).
func TestPackageExamplesPinned(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(packageExamples, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no netplan examples in %s (scripts/setup.sh installs netplan.io): %v", packageExamples, err)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	refused := importertest.CheckPins(t, packageExamples, names, examplePins, func(f string, opts importer.Options) error {
		_, err := Import([]string{f}, opts)
		return err
	})
	t.Logf("%d of %d netplan examples refused", refused, len(files))
}
