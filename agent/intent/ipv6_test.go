package intent

import (
	"strings"
	"testing"
)

// The ipv6 section parses with its defaults and marshals back.
func TestIPv6Section(t *testing.T) {
	in := mustParse(t, doc(`"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"acceptRA": true, "acceptRAPrefixes": false, "dhcp6": true}}]`))
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	v := in.Interfaces[0].IPv6
	if !v.AcceptRA || !v.DHCP6 || !v.EffectiveAcceptRADefRoute() || v.EffectiveAcceptRAPrefixes() {
		t.Errorf("parsed %+v", v)
	}
	out, err := in.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"ipv6":{"acceptRA":true,"acceptRAPrefixes":false,"dhcp6":true}`) {
		t.Errorf("marshalled %s", out)
	}
	if got := v.RenderedSysctls(); len(got) != len(IPv6SysctlParams) {
		t.Errorf("rendered sysctls %v", got)
	}
	if got := (&IPv6{DHCP6: true}).RenderedSysctls(); len(got) != 1 || got[0] != "disable_ipv6" {
		t.Errorf("dhcp6 alone renders %v", got)
	}
}

// Bad ipv6 sections are errors naming their JSON path.
func TestIPv6Rejects(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want []string
	}{
		{`"interfaces": [{"name": "eth0", "type": "physical"}, {"name": "eth1", "type": "physical", "ipv6": {"acceptRADefRoute": false}}]`,
			[]string{"interfaces[1].ipv6.acceptRADefRoute: needs acceptRA"}},
		{`"interfaces": [{"name": "eth1", "type": "physical", "state": "down", "ipv6": {"acceptRA": true}}]`,
			[]string{`interfaces[0].ipv6.acceptRA: interface "eth1" is declared down: no router advertisement or DHCPv6 reply comes over a link that is down`}},
		{`"interfaces": [{"name": "br0", "type": "bridge"}, {"name": "eth1", "type": "physical", "master": "br0", "ipv6": {"dhcp6": true}}]`,
			[]string{`interfaces[1].ipv6.dhcp6: interface "eth1" is a port of bridge "br0", which holds the addresses: configure IPv6 there`}},
		{`"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"acceptRA": true}}], "sysctls": {"net.ipv6.conf.eth0.accept_ra": "0"}`,
			[]string{`sysctls["net.ipv6.conf.eth0.accept_ra"]: is set by interfaces[0].ipv6: leave it out of the sysctls`}},
		{`"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"dhcp6": true}}], "sysctls": {"net.ipv6.conf.eth0.disable_ipv6": "1"}`,
			[]string{`sysctls["net.ipv6.conf.eth0.disable_ipv6"]: is set by interfaces[0].ipv6: leave it out of the sysctls`}},
		{`"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"acceptRA": true}}], "sysctls": {"net.ipv6.conf.all.disable_ipv6": "1"}`,
			[]string{`interfaces[0].ipv6: IPv6 autoconfiguration of "eth0" needs IPv6, but sysctls["net.ipv6.conf.all.disable_ipv6"] disables it`}},
		{`"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"acceptRA": "yes"}}]`, nil},
	} {
		in, err := Parse([]byte(doc(tc.doc)))
		if tc.want == nil {
			if err == nil || !strings.Contains(err.Error(), "interfaces[0].ipv6.acceptRA") {
				t.Errorf("%s: parse error %v, want one naming interfaces[0].ipv6.acceptRA", tc.doc, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		checkMessages(t, in.Validate(), tc.want)
	}
}
