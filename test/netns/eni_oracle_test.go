//go:build !vmtest

package netns_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/eni"
)

// eniOwnCases are small files of this test's own (the examples are GPL
// and read from the cache), each of which netagent can express. A case is
// its interfaces file and the files it sources, in one directory whose
// path replaces @DIR@. Bridge VLANs are not among them: the host kernel
// has no VLAN filtering (ip link ... vlan_filtering 1 is refused: EOPNOTSUPP),
// nor bonds, 802.1Q VLANs and VRFs, so TestInVMENIOracle compares those
// with ifupdown2 in the VM (and agent/importer/eni's TestExpectedIntents
// checks them against intents written by hand).
var eniOwnCases = map[string]map[string]string{
	// alias: the rest of the line (quotes kept, $IFACE replaced), on a NIC
	// and on a bridge (whose kernel alias carries netagent's mark:
	// eniState strips it).
	"own:alias": {"interfaces": "auto eth0 br0\niface eth0\n  address 192.0.2.10/24\n  alias \"uplink 1\"\n" +
		"iface br0\n  bridge-ports eth1\n  alias lan of $IFACE\n  address 198.51.100.1/24\n"},
	"own:static": {"interfaces": "auto eth0\niface eth0 inet static\n  address 192.0.2.10\n  netmask 255.255.255.0\n  gateway 192.0.2.1\n  mtu 1400\n"},
	"own:bridge": {"interfaces": "auto br0\niface br0 inet static\n  bridge-ports eth1 \\\n    eth2\n  bridge-stp off\n  address 198.51.100.1/24\niface br0 inet static\n  address 2001:db8::1/64\n"},
	"own:vxlan": {"interfaces": "auto eth0 vx0 vx1\niface eth0 inet static\n  address 192.0.2.1/24\n" +
		"iface vx0\n  vxlan-id 100\n  vxlan-local-tunnelip 192.0.2.1\n  vxlan-svcnodeip 192.0.2.2\n  vxlan-port 4790\n  vxlan-learning no\n" +
		"iface vx1\n  vxlan-id 200\n  vxlan-mcastgrp 239.1.1.1\n  vxlan-physdev eth0\n"},
	"own:vxlan-bridge": {"interfaces": "auto br0 vx0\niface br0\n  bridge-ports vx0 eth1\n  address 198.51.100.1/24\n" +
		"iface vx0\n  vxlan-id 1100\n  vxlan-local-tunnelip 192.0.2.1\n  vxlan-svcnodeip 192.0.2.9\n  mtu 1400\n"},
	// Relative to the working directory, which both run in (eniCase).
	"own:source-relative": {
		"interfaces":       "source parts/*.cfg\n",
		"parts/uplink.cfg": "auto eth0\niface eth0 inet static\n  address 192.0.2.10/24\n  gateway 192.0.2.1\n",
		"parts/ignored":    "auto eth9\niface eth9 inet static\n  address 203.0.113.1/24\n",
	},
	"own:source": {
		"interfaces":     "auto eth0\niface eth0 inet static\n  address 192.0.2.10/24\nsource @DIR@/interfaces.d/*\n",
		"interfaces.d/a": "auto br0\niface br0\n  bridge-ports eth1\n  address 198.51.100.1/24\n",
		"interfaces.d/b": "iface eth0\n  mtu 1400\n",
	},
}

// TestENIOracle: for each of ifupdown2's examples and each own case,
// netagent import eni either refuses it (with its line) or, applied in one
// namespace, gives the kernel state ifupdown2's ifup -a gives in another.
func TestENIOracle(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(eniCache, "usr/share/doc/ifupdown2/examples/*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no ifupdown2 examples in %s (run scripts/setup.sh): %v", eniCache, err)
	}
	sub, _ := filepath.Glob(filepath.Join(eniCache, "usr/share/doc/ifupdown2/examples/*/*"))
	files = append(files, sub...)
	var table []string
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.IsDir() || strings.HasSuffix(f, ".py") || strings.HasSuffix(f, ".sh") {
			continue
		}
		table = append(table, eniCase(t, strings.TrimPrefix(f, eniCache+"/usr/share/doc/ifupdown2/examples/"), f))
	}
	for _, name := range slices.Sorted(maps.Keys(eniOwnCases)) {
		table = append(table, eniCase(t, name, eniWriteCase(t, eniOwnCases[name])))
	}
	t.Logf("ENI oracle outcomes:\n%s", strings.Join(table, "\n"))
}

// eniCase runs one file; the outcome is a line of the table. Own cases
// must agree.
func eniCase(t *testing.T, name, file string) string {
	res, err := eniImport(t, file)
	if err != nil {
		ie, ok := err.(*importer.Error)
		if !ok {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.HasPrefix(name, "own:") {
			t.Errorf("%s refused: %v", name, err)
		}
		r := ie.Refusals[0]
		return fmt.Sprintf("%-55s refused at line %d (%s: %s; %d refusals)", name, r.Pos.Line, r.Key, r.Why, len(ie.Refusals))
	}
	if eniVLANFiltering(res.Intent) && !eniHostVLANFiltering(t) {
		if strings.HasPrefix(name, "own:") {
			t.Errorf("%s needs VLAN filtering, which the host kernel has not", name)
		}
		return fmt.Sprintf("%-55s imports (%d interfaces), not compared: a VLAN-aware bridge, and the host kernel has no VLAN filtering", name, len(res.Intent.Interfaces))
	}
	old, ours := cliNewEnv(t), cliNewEnv(t)
	for _, e := range []*cliEnv{old, ours} {
		eniStandIns(e, res.Intent)
	}
	eniIfup(t, old, file)
	path := ours.writeIntent("intent.json", res.Intent)
	ours.mustRun(0, "apply", path)
	a, b := eniState(old), eniState(ours)
	if a != b {
		t.Errorf("%s: kernels differ\nifupdown2:\n%s\nnetagent:\n%s", name, a, b)
		return fmt.Sprintf("%-55s differs", name)
	}
	return fmt.Sprintf("%-55s agrees", name)
}

// eniImport imports file in its directory, where ifupdown2 runs too (a
// relative source is relative to the working directory).
func eniImport(t *testing.T, file string) (*importer.Result, error) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(filepath.Dir(file)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := os.Chdir(wd); err != nil {
			t.Fatal(err)
		}
	}()
	return eni.Import(file, importer.Options{})
}

// eniHostVLANFiltering reports whether the kernel makes a bridge with VLAN
// filtering (this host's does not: EOPNOTSUPP), in a namespace of its own.
func eniHostVLANFiltering(t *testing.T) bool {
	e := cliNewEnv(t)
	err := exec.Command("ip", "-n", e.tgt.Name, "link", "add", "vfprobe", "type", "bridge", "vlan_filtering", "1").Run()
	return err == nil
}

// eniIfup runs ifupdown2's ifup -a -i FILE from the cache in e's
// namespace, in a private mount namespace with /run, /etc/network and
// /var/tmp (ifupdown2's state_dir) on tmpfs and /etc/iproute2 under a
// tmpfs overlay (its VRF table map): nothing of the host is written.
func eniIfup(t *testing.T, e *cliEnv, file string) {
	script := `set -e
mount -t overlay overlay -o lowerdir=$C/usr/share:/usr/share /usr/share
mount -t tmpfs none /run
mount -t tmpfs none /etc/network
mount -t tmpfs none /var/tmp
mkdir -p /run/eni-ipr/u /run/eni-ipr/w
mount -t overlay overlay -o lowerdir=/etc/iproute2,upperdir=/run/eni-ipr/u,workdir=/run/eni-ipr/w /etc/iproute2
mkdir -p /etc/network/ifupdown2 /run/network /run/eni-bin
cp -r $C/etc/network/ifupdown2/. /etc/network/ifupdown2/
ln -s /usr/share/ifupdown2/ifupdown2 /run/eni-bin/ifup
/usr/bin/python3 /run/eni-bin/ifup -a -i "$F"`
	cmd := exec.Command("ip", "netns", "exec", e.tgt.Name, "unshare", "-m", "--propagation", "private", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "C="+eniCache, "F="+file)
	cmd.Dir = filepath.Dir(file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ifup -a -i %s: %v\n%s", file, err, out)
	}
}
