package intent

import (
	"encoding/json"
	"strings"
	"testing"
)

// "dhcp4" is true, false or the options; each form parses (true and the
// object on any interface), validates, and marshals back to itself.
func TestDHCP4Forms(t *testing.T) {
	for _, tc := range []struct {
		section string
		enabled bool
		check   func(d *DHCP4) bool
	}{
		{`true`, true, func(d *DHCP4) bool { return d.EffectiveUseRoutes() && d.EffectiveUseDNS() && d.RouteMetric == 0 }},
		{`false`, false, func(d *DHCP4) bool { return true }},
		{`{}`, true, func(d *DHCP4) bool { return d.EffectiveUseRoutes() }},
		{`{"hostname":"edge-1","clientId":"edge-1-uplink","useRoutes":false,"useDNS":false,"routeMetric":100,"vendorClass":"netagent"}`, true,
			func(d *DHCP4) bool {
				return d.Hostname == "edge-1" && d.ClientID == "edge-1-uplink" && !d.EffectiveUseRoutes() &&
					!d.EffectiveUseDNS() && d.RouteMetric == 100 && d.VendorClass == "netagent"
			}},
	} {
		data := doc(`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": ` + tc.section + `}]`)
		in := mustParse(t, data)
		if err := in.Validate(); err != nil {
			t.Errorf("%s: %v", tc.section, err)
			continue
		}
		d := in.Interfaces[0].DHCP4
		if d.Enabled() != tc.enabled || (tc.enabled && !tc.check(d)) {
			t.Errorf("%s: parsed %+v, enabled %v", tc.section, d, d.Enabled())
		}
		out, err := in.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		want := tc.section
		if want == `{}` {
			want = `true`
		}
		if !strings.Contains(string(out), `"dhcp4":`+want) {
			t.Errorf("%s: marshalled %s", tc.section, out)
		}
		if again := mustParse(t, string(out)); again.Interfaces[0].DHCP4.Enabled() != tc.enabled {
			t.Errorf("%s: round trip %s lost it", tc.section, out)
		}
	}
}

// The document without dhcp4 still takes the fast parser; one with it
// the slow one, with the same result as encoding/json.
func TestDHCP4ParsesSlowOnlyWhenPresent(t *testing.T) {
	if _, ok := parseFast([]byte(doc(`"interfaces": [{"name": "eth0", "type": "physical"}]`))); !ok {
		t.Error("an intent without dhcp4 left the fast parser")
	}
	data := doc(`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": {"routeMetric": 7}}]`)
	if _, ok := parseFast([]byte(data)); ok {
		t.Error("the fast parser took dhcp4, which it cannot decode")
	}
	var want Intent
	if err := json.Unmarshal([]byte(data), &want); err != nil {
		t.Fatal(err)
	}
	if got := mustParse(t, data); got.Interfaces[0].DHCP4.RouteMetric != 7 || want.Interfaces[0].DHCP4.RouteMetric != 7 {
		t.Errorf("parsed %+v", got.Interfaces[0].DHCP4)
	}
}

// Bad shapes are refused with their JSON paths.
func TestDHCP4Shape(t *testing.T) {
	for _, tc := range []struct{ section, want string }{
		{`"yes"`, `interfaces[0].dhcp4: expected an object, got a string`},
		{`{"hostnam": "x"}`, `interfaces[0].dhcp4: unknown field "hostnam"`},
		{`{"routeMetric": "1"}`, `interfaces[0].dhcp4.routeMetric: expected an integer, got a string`},
		{`{"useDNS": 1}`, `interfaces[0].dhcp4.useDNS: expected a boolean, got a number`},
		{`null`, `interfaces[0].dhcp4: expected an object, got null`},
	} {
		_, err := Parse([]byte(doc(`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": ` + tc.section + `}]`)))
		if got := messages(err); len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("%s: errors %q, want %q", tc.section, got, tc.want)
		}
	}
}

// Bad values are refused with their JSON paths.
func TestValidateDHCP4(t *testing.T) {
	long := strings.Repeat("a", 256)
	for _, tc := range []struct {
		doc  string
		want []string
	}{
		{`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": {"hostname": "edge_1"}}]`,
			[]string{`interfaces[0].dhcp4.hostname: "edge_1" is not a host name (labels of letters, digits and '-', at most 253 bytes)`}},
		{`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": {"hostname": "-a.b"}}]`,
			[]string{`interfaces[0].dhcp4.hostname: "-a.b" is not a host name (labels of letters, digits and '-', at most 253 bytes)`}},
		{`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": {"clientId": "` + long + `"}}]`,
			[]string{`interfaces[0].dhcp4.clientId: is 256 bytes long, longer than a DHCP option's 255`}},
		{`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": {"vendorClass": "a\tb"}}]`,
			[]string{`interfaces[0].dhcp4.vendorClass: "a\tb" has a character that is not printable ASCII`}},
		{`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": {"routeMetric": 4294967296}}]`,
			[]string{`interfaces[0].dhcp4.routeMetric: 4294967296 is out of range 0-4294967295`}},
		{`"interfaces": [{"name": "eth0", "type": "physical", "state": "down", "dhcp4": true}]`,
			[]string{`interfaces[0].dhcp4: interface "eth0" is declared down: no lease comes over a link that is down`}},
		{`"interfaces": [{"name": "br0", "type": "bridge"}, {"name": "eth0", "type": "physical", "master": "br0", "dhcp4": true}]`,
			[]string{`interfaces[1].dhcp4: interface "eth0" is a port of bridge "br0", which holds the addresses: run DHCP there`}},
		{`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": true}, {"name": "eth1", "type": "physical", "dhcp4": {"hostname": "h"}}]`,
			[]string{`interfaces[1].dhcp4.routeMetric: 0 is the metric of the lease routes of interface "eth0" too: their default routes would be one route (give each uplink its own routeMetric)`}},
	} {
		checkMessages(t, mustParse(t, doc(tc.doc)).Validate(), tc.want)
	}
	// Distinct metrics, or one uplink not using its routes, are fine.
	for _, d := range []string{
		`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": true}, {"name": "eth1", "type": "physical", "dhcp4": {"routeMetric": 200}}]`,
		`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": true}, {"name": "eth1", "type": "physical", "dhcp4": {"useRoutes": false}}]`,
		`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": true}, {"name": "eth1", "type": "physical", "dhcp4": false}]`,
	} {
		checkMessages(t, mustParse(t, doc(d)).Validate(), nil)
	}
}

// The schema takes the same forms.
func TestSchemaDHCP4(t *testing.T) {
	sc := loadSchema(t)
	for _, section := range []string{`true`, `false`, `{"hostname": "edge-1", "routeMetric": 100, "useDNS": false}`} {
		if errs := sc.validateJSON([]byte(doc(`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": ` + section + `}]`))); len(errs) > 0 {
			t.Errorf("%s: %q", section, errs)
		}
	}
	for _, tc := range []struct{ section, want string }{
		{`"yes"`, "interfaces[0].dhcp4: type"},
		{`{"hostname": "a_b"}`, "interfaces[0].dhcp4.hostname: pattern"},
		{`{"routeMetric": -1}`, "interfaces[0].dhcp4.routeMetric: minimum"},
		{`{"x": 1}`, "interfaces[0].dhcp4.x: not allowed"},
	} {
		errs := sc.validateJSON([]byte(doc(`"interfaces": [{"name": "eth0", "type": "physical", "dhcp4": ` + tc.section + `}]`)))
		if len(errs) == 0 || !strings.HasPrefix(errs[0], tc.want) {
			t.Errorf("%s: schema errors %q, want %q", tc.section, errs, tc.want)
		}
	}
}
