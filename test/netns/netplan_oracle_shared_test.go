package netns_test

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/netplan"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/dnsmasqtest"
)

// What the netplan oracle on the host (TestNetplanOracle) and in the VM
// (TestInVMNetplanOracle) share: the examples, which of them the host
// can hold, how networkd runs on what netplan renders, and the
// normalizing of leased addresses and the kernel's rule priorities.

// netplanExamples are netplan.io's examples, read where Debian installs
// them (never copied into the repository: GPL).
const netplanExamples = "/usr/share/doc/netplan/examples/*.yaml"

// netplanNotOnHost says why in cannot be applied on this host ("": it can).
func netplanNotOnHost(in *intent.Intent) string {
	for _, ifc := range in.Interfaces {
		switch {
		case ifc.Type != intent.LinkPhysical && ifc.Type != intent.LinkBridge:
			return "the host kernel has no " + string(ifc.Type)
		case ifc.IPv6 != nil && (ifc.IPv6.AcceptRA || ifc.IPv6.DHCP6):
			return "RA or DHCPv6: no IPv6 router here"
		case ifc.Ethtool != nil:
			return "offloads: networkd sets them by udev, absent here"
		case ifc.Match != nil:
			return "a match: the veths stand-ins have random MACs"
		}
	}
	return ""
}

// netplanDHCP reports whether an interface of in asks for DHCPv4: then
// every NIC's veth has a DHCP server at its far end (a bridge's port
// carries its bridge's lease).
func netplanDHCP(in *intent.Intent) bool {
	return slices.ContainsFunc(in.Interfaces, func(ifc intent.Interface) bool { return ifc.DHCP4.Enabled() })
}

// networkdScript runs systemd-networkd in a private mount namespace (a
// tmpfs /run holding the generated files, /sys read-only: a container
// without udev) until every link a .network file names (its [Match]
// Name=) is configured (networkd's own state file says so: a DHCP link
// once it has its lease), then kills it (SIGKILL: stopped, networkd
// would release its leases and remove their addresses; the kernel is
// compared as a running networkd holds it). It waits 30 s, or $2
// quarters of a second.
const networkdScript = `set -e
mount -t tmpfs tmpfs /run
mkdir -p /run/systemd/network /run/systemd/netif
cp "$1"/* /run/systemd/network/
chown -R systemd-network:systemd-network /run/systemd/netif
names=$(sed -n 's/^Name=//p' /run/systemd/network/*.network | sort -u)
mount -o remount,ro /sys
/lib/systemd/systemd-networkd >/dev/null 2>&1 & pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for i in $(seq 1 ${2:-120}); do
	pending=
	for n in $names; do
		f=/run/systemd/netif/links/$(cat /sys/class/net/$n/ifindex 2>/dev/null || true)
		grep -qs -e ADMIN_STATE=configured "$f" || pending="$pending $n"
	done
	[ -z "$pending" ] && break
	sleep 0.25
done
kill -9 $pid; wait $pid || true
[ -z "$pending" ] || { echo "networkd did not configure$pending"; cat /run/systemd/netif/links/*; exit 1; }
`

// leased is an address, or "leased" for one of the DHCP servers' range
// (each client is given its own).
func leased(addr any) any {
	a, err := netip.ParseAddr(fmt.Sprint(addr))
	if err == nil && a.Compare(dnsmasqtest.RangeFirst) >= 0 && a.Compare(dnsmasqtest.RangeLast) <= 0 {
		return "leased"
	}
	return addr
}

// autoPriorities reports whether in has rules netplan gave no priority:
// the kernel numbers them (32765 and down) in the order they are added,
// which is networkd's order of its links there and the intent's here, so
// their priorities are compared as the kernel's choice, not as numbers.
func autoPriorities(in *intent.Intent) bool {
	for _, r := range in.Rules {
		if r.Priority > 32700 && r.Priority < 32766 {
			return true
		}
	}
	return false
}

// notConverged is what apply's report says of what it could not do.
func notConverged(report string) string {
	var out []string
	for _, l := range strings.Split(report, "\n") {
		if strings.Contains(l, "no lease") || strings.Contains(l, "failed:") || strings.Contains(l, "blocked:") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return strings.Join(out, "; ")
}

// netplanImportOrRefusal imports file; when the importer refuses it, it
// returns no intent and the table's line: "refused at FILE:LINE: key:
// why" (its first refusal, which must have a line).
func netplanImportOrRefusal(t *testing.T, file string) (*intent.Intent, string) {
	res, err := netplan.Import([]string{file}, importer.Options{})
	var ie *importer.Error
	switch {
	case errors.As(err, &ie):
		r := ie.Refusals[0]
		if r.Pos.Line == 0 {
			t.Errorf("%s: refused without a line: %v", file, err)
		}
		return nil, fmt.Sprintf("refused at %s:%d: %s: %s", filepath.Base(file), r.Pos.Line, r.Key, r.Why)
	case err != nil:
		t.Errorf("%s: %v", file, err)
		return nil, "error: " + err.Error()
	}
	return res.Intent, ""
}
