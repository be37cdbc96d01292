//go:build vmtest

package netns_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/test/vm"
)

// snapRig is a namespace with dummies eth1 and eth2 playing NICs, a
// state directory, and the VM's netagent binary run against them.
type snapRig struct {
	t          *testing.T
	ns         string
	dir, state string
}

func newSnapRig(t *testing.T) *snapRig {
	t.Helper()
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	tgt := testns.New(t)
	for _, nic := range []string{"eth1", "eth2"} {
		if err := tgt.NL.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: nic}}); err != nil {
			t.Fatalf("adding dummy %s: %v", nic, err)
		}
	}
	dir := t.TempDir()
	return &snapRig{t: t, ns: tgt.Name, dir: dir, state: filepath.Join(dir, "state")}
}

// run runs netagent on the namespace and its state directory.
func (r *snapRig) run(args ...string) (string, string, int) {
	r.t.Helper()
	cmd := exec.Command(vm.GuestBinary("netagent"), append([]string{"--netns", r.ns, "--state-dir", r.state}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// file writes content to name in the rig's directory (mode 0600).
func (r *snapRig) file(name, content string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// same takes a snapshot, then checks that `plan --against` it prints what
// the live plan of intent prints, byte for byte with the same exit code;
// it returns the live plan.
func (r *snapRig) same(intent string) string {
	t := r.t
	t.Helper()
	snap := filepath.Join(r.dir, "snapshot.json")
	if out, errOut, code := r.run("snapshot", "--out", snap); code != 0 {
		t.Fatalf("snapshot: exit %d: %s%s", code, out, errOut)
	}
	live, _, code := r.run("plan", intent)
	offline, errOut, ocode := r.run("plan", "--against", snap, intent)
	if live != offline || code != ocode {
		t.Errorf("plan of %s: live (exit %d) and --against (exit %d) differ:\nlive:\n%s\noffline:\n%s\n%s", filepath.Base(intent), code, ocode, live, offline, errOut)
	}
	return live
}

// TestInVMSnapshotPlanAgainstWireguardIpvlan: a WireGuard device (port,
// fwmark, two peers, one with a preshared key, endpoints, allowed IPs,
// keepalive) and two ipvlans on a NIC: `plan --against` a snapshot
// prints what the live plan prints, before the apply, after it (no
// changes: the key files the link record names are judged as they were
// when the snapshot was taken), changed (a port, a peer's allowed IPs,
// another preshared key file, the ipvlans' mode) and removed. The
// snapshot holds neither the private key nor the preshared key.
func TestInVMSnapshotPlanAgainstWireguardIpvlan(t *testing.T) {
	r := newSnapRig(t)
	key := func(name string) (string, wgtypes.Key) {
		k, err := wgtypes.GeneratePrivateKey()
		if err != nil {
			t.Fatal(err)
		}
		return r.file(name, k.String()+"\n"), k
	}
	privFile, priv := key("wg0.key")
	pskFile, psk := key("peer1.psk")
	psk2File, _ := key("peer1-new.psk")
	peer1, _ := wgtypes.GeneratePrivateKey()
	peer2, _ := wgtypes.GeneratePrivateKey()
	intent := func(name string, port int, psk, mode, allowed string) string {
		return r.file(name, strings.NewReplacer("@PRIV@", privFile, "@PSK@", psk, "@PORT@", strconv.Itoa(port), "@MODE@", mode, "@ALLOWED@", allowed,
			"@P1@", peer1.PublicKey().String(), "@P2@", peer2.PublicKey().String()).Replace(`{"version": 1, "interfaces": [
		  {"name": "eth1", "type": "physical"},
		  {"name": "wg0", "type": "wireguard", "addresses": ["10.99.0.1/24"], "wireguard": {"privateKeyFile": "@PRIV@", "listenPort": @PORT@, "fwmark": 51,
		    "peers": [{"publicKey": "@P1@", "presharedKeyFile": "@PSK@", "allowedIPs": [@ALLOWED@], "endpoint": "192.0.2.9:51820", "persistentKeepalive": 25},
		              {"publicKey": "@P2@", "allowedIPs": ["10.98.0.0/16"], "endpoint": "[2001:db8::9]:51821"}]}},
		  {"name": "iv0", "type": "ipvlan", "ipvlan": {"parent": "eth1", "mode": "@MODE@"}, "addresses": ["192.0.2.2/24"]},
		  {"name": "iv1", "type": "ipvlan", "ipvlan": {"parent": "eth1", "mode": "@MODE@"}}]}`))
	}
	first := intent("wg.json", 51820, pskFile, "l2", `"10.99.0.0/24", "2001:db8:99::/64"`)
	if live := r.same(first); !strings.Contains(live, "create interface/wg0") || !strings.Contains(live, "create interface/iv0") {
		t.Errorf("the plan makes no wg0 or iv0:\n%s", live)
	}
	if out, errOut, code := r.run("apply", first); code != 0 {
		t.Fatalf("apply: exit %d: %s%s", code, out, errOut)
	}
	if live := r.same(first); !strings.Contains(live, "no changes") {
		t.Errorf("the plan of what was applied changes something:\n%s", live)
	}
	snap, err := os.ReadFile(filepath.Join(r.dir, "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	for what, k := range map[string]wgtypes.Key{"private key": priv, "preshared key": psk} {
		if bytes.Contains(snap, []byte(k.String())) {
			t.Errorf("the snapshot holds the %s", what)
		}
	}
	for _, want := range []string{`"publicKey": "` + priv.PublicKey().String() + `"`, `"presharedKey": true`, `"privateKeyFile": "` + privFile + `"`, `"mode": "l2"`} {
		if !bytes.Contains(snap, []byte(want)) {
			t.Errorf("the snapshot lacks %s", want)
		}
	}
	r.same(intent("port.json", 51900, pskFile, "l2", `"10.99.0.0/24"`))
	r.same(intent("psk.json", 51820, psk2File, "l3", `"10.99.0.0/24", "2001:db8:99::/64"`))
	r.same(r.file("empty.json", `{"version": 1}`))
}
