package corpus_test

import (
	"slices"
	"strings"
)

// vmCaseFiles lists the corpus files that need bonding, 802.1Q or bridge
// VLAN filtering, which this host's kernel lacks: they run in the VM
// (corpus_vm_test.go, which embeds them).
func vmCaseFiles() []string {
	return []string{
		"netplan-bonding-router.json",
		"netplan-vlan.json",
		"nmstate-bond-bridge-vlan.json",
		"nmstate-linux-bridge-vlan-filtering.json",
		"systemd-vlan-on-bond.json",
		"ifupdown2-bond-lacp.json",
	}
}

// lineDiff lists the lines only in a (-) and only in b (+).
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	for _, l := range al {
		if !slices.Contains(bl, l) {
			out.WriteString("- " + l + "\n")
		}
	}
	for _, l := range bl {
		if !slices.Contains(al, l) {
			out.WriteString("+ " + l + "\n")
		}
	}
	return out.String()
}
