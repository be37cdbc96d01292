package eni

import (
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
)

// TestMakoRegions: each template construct is one refusal at its first
// line, naming its lines; what it spans is not read.
func TestMakoRegions(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"auto eth0\n%for i in range(2):\nauto swp${i}\niface swp${i}\n  mtu 9000\n%endfor\n", "f:2:1: %for: a mako template (lines 2-6)"},
		{"% for i in range(2):\n% if i:\nauto a\n% endif\n% endfor\n", "f:1:1: %for: a mako template (lines 1-5)"},
		{"<%\n  x = 1\n%>\n", "f:1:1: <%: a mako template (lines 1-3)"},
		{"<%def name=\"br(v)\">\nauto br${v}\niface br${v}\n</%def>\n", "f:1:1: <%def: a mako template (lines 1-4)"},
		{"auto br0\niface br0\n  bridge-ports ${ports}\n", "f:3:16: ${ports}: in iface br0's stanza: a mako template (line 3)"},
		{"# <%namespace name=\"b\" file=\"/t\"/>\n", "f:1:3: <%namespace: a mako template (line 1)"},
		{"  # ${b.makebr(1096)}\n", "f:1:5: ${b.makebr(1096)}: a mako template (line 1)"},
	} {
		_, err := Parse("f", []byte(tc.src), importer.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Count(err.Error(), "a mako template") != 1 {
			t.Errorf("%q: err %v, want one refusal containing %q", tc.src, err, tc.want)
		}
	}
}

// TestMakoSkipped: under --skip-unsupported a template is left out with
// what it spans and the options after it that belong to its stanza; a
// python block leaves the stanza it is in as it is; one inside a stanza
// leaves the stanza out.
func TestMakoSkipped(t *testing.T) {
	src := "auto eth0 eth1 eth2\niface eth0\n  mtu 1400\n<%\n x = 1\n%>\n  address 192.0.2.1/24\n" +
		"%for i in range(2):\nauto swp${i}\niface swp${i}\n%endfor\n  mtu 9000\n" +
		"iface eth1\n  address 192.0.2.2/24\n  bridge-vids ${v}\niface eth2\n  address 192.0.2.3/24\n"
	res, err := Parse("f", []byte(src), importer.Options{SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ifc := range res.Intent.Interfaces {
		got = append(got, ifc.Name+" "+asJSON(ifc.Addresses)+" "+asJSON(ifc.MTU))
	}
	want := `eth0 ["192.0.2.1/24"] 1400|eth2 ["192.0.2.3/24"] 1500`
	if strings.Join(got, "|") != want {
		t.Errorf("interfaces %q, want %q", strings.Join(got, "|"), want)
	}
	if len(res.Warnings) != 3 {
		t.Errorf("warnings = %v", res.Warnings)
	}
}
