package intent

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		data string
		want []string
	}{
		{"unknown field", doc(`"interfaces": [{"name": "a", "type": "vlan", "vlan": {"parent": "b", "id": 5, "pid": 3}}]`),
			[]string{`interfaces[0].vlan: unknown field "pid"; did you mean "id"?`}},
		{"field names are case-sensitive", doc(`"Interfaces": []`),
			[]string{`unknown field "Interfaces"; did you mean "interfaces"?`}},
		{"derived fields are not JSON", doc(`"firewall": {"chains": [{"table": "nat", "name": "A", "Args": [], "Origin": {}}]}`),
			[]string{`firewall.chains[0]: unknown field "Args"`, `firewall.chains[0]: unknown field "Origin"`}},
		{"wrong types", doc(`"interfaces": [{"name": 5, "type": "physical", "mtu": "1500", "addresses": "192.0.2.1/24"},
			{"name": "b", "type": "bridge", "bridge": {"stp": "no"}}], "routes": {}`),
			[]string{`interfaces[0].name: expected a string, got a number`,
				`interfaces[0].mtu: expected an integer, got a string`,
				`interfaces[0].addresses: expected an array, got a string`,
				`interfaces[1].bridge.stp: expected a boolean, got a string`,
				`routes: expected an array, got an object`}},
		{"null", doc(`"interfaces": [{"name": "a", "type": null}], "sysctls": null`),
			[]string{`interfaces[0].type: expected a string, got null`, `sysctls: expected an object, got null`}},
		{"integers", doc(`"routes": [{"to": "default", "metric": -1, "table": 4294967296}, {"to": "default", "metric": 1.5, "table": 1e2}]`),
			[]string{`routes[0].metric: -1 is out of range 0-4294967295`,
				`routes[0].table: 4294967296 is out of range 0-4294967295`,
				`routes[1].metric: expected an integer, got 1.5`,
				`routes[1].table: expected an integer or a name, got 1e2`}},
		{"duplicate field", doc(`"interfaces": [{"name": "a", "name": "b", "type": "bridge"}]`),
			[]string{`interfaces[0]: duplicate field "name"`}},
		{"duplicate sysctl key", doc(`"sysctls": {"net.ipv4.ip_forward": "1", "net.ipv4.ip_forward": "0"}`),
			[]string{`sysctls: duplicate key "net.ipv4.ip_forward"`}},
		{"map value type", doc(`"sysctls": {"net.ipv4.ip_forward": 1}`),
			[]string{`sysctls["net.ipv4.ip_forward"]: expected a string, got a number`}},
		{"trailing data", `{"version": 1} {"version": 1}`,
			[]string{`unexpected data after the intent object at line 1, column 16`}},
		{"trailing garbage", "{\"version\": 1}\n  x",
			[]string{`unexpected data after the intent object at line 2, column 3`}},
		{"syntax error", "{\"version\": 1,\n \"interfaces\": [{\"name\": \"a\",}]}",
			[]string{`interfaces[0]: invalid JSON at line 2, column 30: invalid character '}' looking for beginning of object key string`}},
		{"truncated", `{"version": 1, "interfaces": [{"name": "a"`,
			[]string{`interfaces[0]: invalid JSON at line 1, column 43: unexpected EOF`}},
		{"empty", ``, []string{`invalid JSON at line 1, column 1: unexpected EOF`}},
		{"a typo of a field", doc(`"interfaces": [{"name": "a", "type": "bridge", "adresses": []}]`),
			[]string{`interfaces[0]: unknown field "adresses"; did you mean "addresses"?`}},
		{"YAML", "# netplan\nnetwork:\n  version: 2\n",
			[]string{"invalid JSON at line 1, column 3: invalid character '#' looking for beginning of value; intents are JSON, and this looks like YAML (netplan's YAML converts with `netagent import netplan FILE`)"}},
		{"YAML document marker", "---\nversion: 1\n",
			[]string{"invalid JSON at line 1, column 3: invalid character '-' in numeric literal; intents are JSON, and this looks like YAML (netplan's YAML converts with `netagent import netplan FILE`)"}},
		{"not YAML either", "version = 1\n", []string{`invalid JSON at line 1, column 2: invalid character 'v' looking for beginning of value`}},
		{"not an object", `[1]`, []string{`expected an object, got an array`}},
		{"version missing", `{"interfaces": []}`, []string{`version: is required (want 1)`}},
		{"version 2, shape not checked", `{"version": 2, "links": []}`, []string{`version: 2 is not supported (want 1)`}},
		{"version as a string", `{"version": "1"}`, []string{`version: expected an integer, got a string`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := Parse([]byte(tc.data))
			if in != nil {
				t.Errorf("Parse returned an intent with errors")
			}
			checkMessages(t, err, tc.want)
		})
	}
}

func TestParseDecodes(t *testing.T) {
	in := mustParse(t, string(readTestdata(t, "bonded.json")))
	want := &Intent{Version: 1, Interfaces: []Interface{
		{Name: "bond0", Type: LinkBond, Bond: &Bond{Mode: BondActiveBackup, MIIMon: Milliseconds{Count: 100}}},
		{Name: "eth1", Type: LinkPhysical, Master: "bond0"},
		{Name: "bond0.100", Type: LinkVLAN, VLAN: &VLAN{Parent: "bond0", ID: 100}, Addresses: []string{"10.100.0.1/24"}},
	}}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("Parse = %+v, want %+v", in, want)
	}
}

func TestParseManyErrorsAtOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"version": 1, "interfaces": [`)
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"name": "a", "mtu": "x"}`)
	}
	b.WriteString(`]}`)
	_, err := Parse([]byte(b.String()))
	if got := len(FieldErrors(err)); got != 50 {
		t.Errorf("got %d errors, want 50: %v", got, err)
	}
}
