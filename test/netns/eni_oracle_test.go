//go:build !vmtest

package netns_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/eni"
)

// eniCache is where scripts/setup.sh unpacks ifupdown2 (never installed).
const eniCache = "/var/cache/netagent-ifupdown2"

// eniOwnCases are small files of this test's own (the examples are GPL
// and read from the cache), each of which netagent can express.
var eniOwnCases = map[string]string{
	"own:static": "auto eth0\niface eth0 inet static\n  address 192.0.2.10\n  netmask 255.255.255.0\n  gateway 192.0.2.1\n  mtu 1400\n",
	"own:bridge": "auto br0\niface br0 inet static\n  bridge-ports eth1 \\\n    eth2\n  bridge-stp off\n  address 198.51.100.1/24\niface br0 inet static\n  address 2001:db8::1/64\n",
}

// TestENIOracle: for each of ifupdown2's examples and each own case,
// netagent import eni either refuses it (with its line) or, applied in one
// namespace, gives the kernel state ifupdown2's ifup -a gives in another.
func TestENIOracle(t *testing.T) {
	var table []string
	for _, c := range eniFiles(t) {
		table = append(table, eniCase(t, c[0], c[1]))
	}
	t.Logf("ENI oracle outcomes:\n%s", strings.Join(table, "\n"))
}

// eniCase runs one file; the outcome is a line of the table. Own cases
// must agree.
func eniCase(t *testing.T, name, file string) string {
	res, err := eni.Import(file, importer.Options{})
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
	if diff := oracleCompare(t, eniCaseOf(name, file, res.Intent)); diff != "" {
		t.Errorf("%s: kernels differ (-: ifupdown2 only, +: netagent only):\n%s", name, diff)
		return fmt.Sprintf("%-55s differs", name)
	}
	return fmt.Sprintf("%-55s agrees", name)
}

// eniIfup runs ifupdown2's ifup -a -i FILE from the cache in e's
// namespace, in a private mount namespace with /run and /etc/network on
// tmpfs: its state and the host's /etc/network are never touched.
func eniIfup(t *testing.T, e *cliEnv, file string) {
	script := `set -e
mount -t overlay overlay -o lowerdir=$C/usr/share:/usr/share /usr/share
mount -t tmpfs none /run
mount -t tmpfs none /etc/network
mkdir -p /etc/network/ifupdown2 /run/network /run/eni-bin
cp -r $C/etc/network/ifupdown2/. /etc/network/ifupdown2/
ln -s /usr/share/ifupdown2/ifupdown2 /run/eni-bin/ifup
/usr/bin/python3 /run/eni-bin/ifup -a -i "$F"`
	cmd := exec.Command("ip", "netns", "exec", e.tgt.Name, "unshare", "-m", "--propagation", "private", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "C="+eniCache, "F="+file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ifup -a -i %s: %v\n%s", file, err, out)
	}
}
