//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// adoptOps are the operations and problems a plan or an apply prints
// with --json, one line each: "op item [adopt] [: error]", and
// "! item: reason".
func adoptOps(t *testing.T, res cliResult) []string {
	t.Helper()
	var doc struct {
		Operations []struct{ Op, Item, Adopt, Error string }
		Problems   []struct{ Item, Reason string }
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, res)
	}
	var out []string
	for _, o := range doc.Operations {
		s := o.Op + " " + o.Item
		if o.Adopt != "" {
			s += " [adopt " + o.Adopt + "]"
		}
		if o.Error != "" {
			s += ": " + o.Error
		}
		out = append(out, s)
	}
	for _, p := range doc.Problems {
		out = append(out, "! "+p.Item+": "+strings.TrimPrefix(strings.TrimPrefix(p.Reason, "predicted to fail: "), "failed: "))
	}
	slices.Sort(out)
	return out
}

// adoptAgreeing runs plan --adopt --json and apply --adopt --json of file
// (each exiting with code) and returns apply's operations (adoptOps),
// failing the test if they are not the ones plan predicted, or if ip
// monitor saw a deletion during the apply.
func (e *cliEnv) adoptAgreeing(code int, file string) []string {
	t := e.t
	t.Helper()
	planned := adoptOps(t, e.mustRun(code, "plan", "--adopt", "--json", file))
	stop := adoptMonitor(t, e.tgt.Name, e.ip)
	applied := adoptOps(t, e.mustRun(code, "apply", "--adopt", "--json", file))
	if deleted, _ := adoptDeletions(stop()); len(deleted) > 0 {
		t.Errorf("ip monitor during apply --adopt: deletions %q", deleted)
	}
	if !slices.Equal(planned, applied) {
		t.Errorf("plan --adopt predicted:\n%s\napply --adopt did:\n%s", strings.Join(planned, "\n"), strings.Join(applied, "\n"))
	}
	return applied
}

// A sysctl has no mark in the kernel, yet a value someone else chose is
// adopted as the rest: plan --adopt says "adopt (mark only)" for a value
// already there (ip_forward, an interface's arp_ignore at the kernel's
// default) and "adopt and modify" for another (rp_filter 2, the intent's
// 1), apply --adopt says the same, writes only rp_filter, and records the
// found values; a second apply writes nothing, and removing the intent
// gives every value back as found (rp_filter 2).
func TestAgentCLIAdoptSysctls(t *testing.T) {
	e := cliNewEnv(t)
	e.exec("sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.conf.uplink0.rp_filter=2")
	file := e.writeFile("sysctls.json", `{"version": 1,
	 "interfaces": [{"name": "uplink0", "type": "physical"}],
	 "sysctls": {"net.ipv4.ip_forward": "1", "net.ipv4.conf.uplink0.rp_filter": "1", "net.ipv4.conf.uplink0.arp_ignore": "0"}}`)
	want := []string{
		"create sysctl/net.ipv4.conf.uplink0.arp_ignore [adopt mark only]",
		"create sysctl/net.ipv4.conf.uplink0.rp_filter [adopt modify]",
		"create sysctl/net.ipv4.ip_forward [adopt mark only]",
	}
	if got := adoptOps(t, e.mustRun(0, "plan", "--adopt", "--json", file)); !slices.Equal(got, want) {
		t.Errorf("plan --adopt:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if plain := e.mustRun(0, "plan", file); strings.Contains(plain.stdout, "adopt") || strings.Count(plain.stdout, "create sysctl/") != 3 {
		t.Errorf("a plan without --adopt:\n%s\nwant three creates", plain.stdout)
	}
	if got := adoptOps(t, e.mustRun(0, "apply", "--adopt", "--json", file)); !slices.Equal(got, want) {
		t.Errorf("apply --adopt:\n%s\nwant as planned:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sysctl := func(key string) string { return strings.TrimSpace(e.exec("sysctl", "-n", key)) }
	if v := sysctl("net.ipv4.conf.uplink0.rp_filter"); v != "1" {
		t.Errorf("rp_filter after the adoption: %s, want 1", v)
	}
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
	e.mustRun(0, "apply", e.writeFile("empty.json", `{"version": 1}`))
	for key, v := range map[string]string{"net.ipv4.ip_forward": "1", "net.ipv4.conf.uplink0.rp_filter": "2", "net.ipv4.conf.uplink0.arp_ignore": "0"} {
		if got := sysctl(key); got != v {
			t.Errorf("%s after the intent went: %s, want %s as found", key, got, v)
		}
	}
}

// An address someone else made that differs from the intent's in what
// the kernel changes only by a delete and an add (an IPv4 label, a
// point-to-point peer) is not adopted: plan --adopt predicts the very
// failure apply --adopt then has (the create refused naming what differs
// and why, what depends on it blocked; both exit 1), and apply deletes
// nothing (ip monitor) and leaves the kernel as it was. Before, plan said
// "adopt and modify" and apply failed: deleting the last IPv4 address of
// the link would have flushed the old tool's routes through it.
func TestAgentCLIAdoptRefusesWhatOnlyARecreateChanges(t *testing.T) {
	e := cliNewEnv(t)
	for _, args := range [][]string{
		{"addr", "add", "192.0.2.10/24", "dev", "uplink0", "label", "uplink0:old"},
		{"route", "add", "172.30.0.0/16", "via", "192.0.2.1", "dev", "uplink0", "proto", "static"},
		{"addr", "add", "10.9.0.1", "peer", "10.9.0.2/32", "dev", "uplink0"},
	} {
		e.ip(args...)
	}
	file := e.writeFile("adopt.json", `{"version": 1,
	 "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24", "10.9.0.1/32"]}],
	 "routes": [{"to": "172.30.0.0/16", "via": "192.0.2.1", "dev": "uplink0"}]}`)
	before := e.stableSnapshot()
	applied := e.adoptAgreeing(1, file)
	for _, want := range []string{
		"create address/uplink0/192.0.2.10/24: adding address uplink0/192.0.2.10/24: object exists and is not owned by netagent: " +
			"the address is on the interface without netagent's IFA_PROTO mark, with label uplink0:old and scope global (the intent's: label uplink0, scope global): " +
			"the kernel changes an address's peer, label and scope only by deleting and re-adding it, and --adopt never deletes someone else's address",
		"create address/uplink0/10.9.0.1/32: adding address uplink0/10.9.0.1/32: object exists and is not owned by netagent: " +
			"the address is on the interface without netagent's IFA_PROTO mark, with peer 10.9.0.2 (the intent's: none):",
		"! route/main 172.30.0.0/16 metric 0: waiting for address/uplink0/192.0.2.10/24",
	} {
		if !slices.ContainsFunc(applied, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("apply --adopt lacks %q:\n%s", want, strings.Join(applied, "\n"))
		}
	}
	if after := e.stableSnapshot(); after != before {
		t.Errorf("the refused adoption changed the kernel:\n%s", lineDiff(before, after))
	}
	t.Logf("plan --adopt and apply --adopt agree on %d lines", len(applied))
}

// import kernel --ethtool takes a NIC's ethtool settings at their current
// values (what is on, not what was asked for: a TSO that its checksum
// offload holds off is imported off): on a veth whose peer is in another namespace (the namespace's
// NIC, imported as physical), rx-gro turned on and tx-checksum-ip-generic
// turned off with ethtool -K are in the intent; the veth has no permanent
// MAC, so it gets no match (it is taken by its name). plan --adopt on the namespace lists only adoptions (the ethtool
// settings are there: no operation); applied to a fresh namespace with
// such a NIC the intent gives it the same features (ethtool -k), a second
// apply writes nothing, and removing the intent gives the fresh NIC its
// own features back.
func TestImportKernelEthtoolRoundTrip(t *testing.T) {
	nic := func(e *kimportEnv) {
		e.ip("link", "add", "up0", "type", "veth", "peer", "name", "up0-far", "netns", e.peer.tgt.Name)
		e.peer.ip("link", "set", "up0-far", "up")
	}
	a := newKimportEnv(t)
	nic(a)
	a.ip("link", "set", "up0", "up")
	a.ip("addr", "add", "10.77.0.1/24", "dev", "up0")
	a.exec("ethtool", "-K", "up0", "rx-gro", "on", "tx-checksum-ip-generic", "off")
	res := a.mustRun(0, "import", "kernel", "--ethtool")
	for _, want := range []string{`"ethtool": {`, `"rx-gro": true`, `"tx-checksum-ip-generic": false`, `"10.77.0.1/24"`} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("import kernel --ethtool lacks %s:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, `"match"`) {
		t.Errorf("import kernel --ethtool has a match for a veth:\n%s", res.stdout)
	}
	if n := strings.Count(res.stderr, "warning:"); n != 0 {
		t.Errorf("%d warnings, want none:\n%s", n, res.stderr)
	}
	file := a.writeFile("imported.json", res.stdout)
	for _, op := range adoptOps(t, a.mustRun(0, "plan", "--adopt", "--json", file)) {
		if !strings.HasSuffix(op, "[adopt mark only]") || strings.Contains(op, "ethtool") {
			t.Errorf("plan --adopt of the import: %q, want adoptions only, and no ethtool operation", op)
		}
	}
	b := newKimportEnv(t)
	nic(b)
	// What is on, not what was asked: a's TSO is "off [requested on]"
	// (its checksum offload is off), which netagent imports as off.
	requested := regexp.MustCompile(` \[requested (on|off)\]`)
	features := func(e *kimportEnv) string { return requested.ReplaceAllString(e.exec("ethtool", "-k", "up0"), "") }
	fresh := features(b)
	b.mustRun(0, "apply", b.writeFile("imported.json", res.stdout))
	if got, want := features(b), features(a); got != want {
		t.Errorf("the fresh NIC's features after the apply:\n%s", lineDiff(want, got))
	}
	if again := b.mustRun(0, "apply", file); !strings.Contains(again.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", again)
	}
	b.mustRun(0, "apply", b.writeFile("empty.json", `{"version": 1}`))
	if got := features(b); got != fresh {
		t.Errorf("the fresh NIC's features after the intent went:\n%s", lineDiff(fresh, got))
	}
}

// A link someone else made that differs from the intent's in what the
// kernel changes only by deleting and re-creating it (a VXLAN's VNI, a
// veth's peer) is not adopted: plan --adopt predicts the very failure apply --adopt then
// has (the create refused naming the link, the VNIs and why; the address
// on it blocked; both exit 1), and apply deletes nothing (ip monitor) and
// leaves the kernel as it was. Before, plan said "adopt and modify" and
// apply deleted the old tool's VXLAN and created the intent's.
func TestAgentCLIAdoptRefusesALinkOnlyARecreateChanges(t *testing.T) {
	e := cliNewEnv(t)
	e.ip("link", "add", "vx0", "type", "vxlan", "id", "100", "local", "192.0.2.10", "remote", "192.0.2.20", "dstport", "4789", "dev", "uplink0")
	e.ip("link", "add", "va0", "type", "veth", "peer", "name", "vb0")
	file := e.writeFile("adopt.json", `{"version": 1,
	 "interfaces": [{"name": "uplink0", "type": "physical"}, {"name": "va0", "type": "veth", "veth": {"peer": "vc0"}},
	  {"name": "vx0", "type": "vxlan", "vxlan": {"vni": 200, "local": "192.0.2.10", "remote": "192.0.2.20", "port": 4789, "parent": "uplink0"}, "addresses": ["10.5.0.1/24"]}]}`)
	before := e.stableSnapshot()
	applied := e.adoptAgreeing(1, file)
	for _, want := range []string{
		"create interface/vx0: creating vxlan vx0: link exists and is not owned by netagent, as vxlan vni 100",
		"! address/vx0/10.5.0.1/24: waiting for interface/vx0",
		"create interface/va0: creating veth va0: link exists and is not owned by netagent, as veth peer vb0 (the intent's: veth peer vc0)",
	} {
		if !slices.ContainsFunc(applied, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("apply --adopt lacks %q:\n%s", want, strings.Join(applied, "\n"))
		}
	}
	if !slices.ContainsFunc(applied, func(s string) bool {
		return strings.Contains(s, "(the intent's: vxlan vni 200") && strings.Contains(s, "--adopt never deletes someone else's link")
	}) {
		t.Errorf("apply --adopt does not say what differs and why:\n%s", strings.Join(applied, "\n"))
	}
	if after := e.stableSnapshot(); after != before {
		t.Errorf("the refused adoption changed the kernel:\n%s", lineDiff(before, after))
	}
	t.Logf("plan --adopt and apply --adopt agree on %d lines: %s", len(applied), strings.Join(applied, " | "))
}
