package intent

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// An intent cannot write netagent's ownership marks: an alias that reads as
// the link mark, on any kind (on a physical interface it would make netagent
// take the NIC for its own and delete it), or a chain rule carrying the
// chain mark's comment. The schema refuses them too.
func TestValidateOwnershipMarks(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"physical alias netagent", `"interfaces": [{"name": "victim0", "type": "physical", "alias": "netagent"}]`,
			[]string{`interfaces[0].alias: "netagent" is reserved: netagent marks the links it owns with it, so netagent would take the interface for its own`}},
		{"physical alias netagent:wan", `"interfaces": [{"name": "uplink0", "type": "physical", "alias": "netagent:wan"}]`,
			[]string{`interfaces[0].alias: "netagent:wan" is reserved: netagent marks the links it owns with it, so netagent would take the interface for its own`}},
		{"bridge alias netagent:", `"interfaces": [{"name": "br0", "type": "bridge", "alias": "netagent:"}]`,
			[]string{`interfaces[0].alias: "netagent:" is reserved: netagent marks the links it owns with it, so netagent would take the interface for its own`}},
		{"alias that only starts like the mark", `"interfaces": [{"name": "e", "type": "physical", "alias": "netagent-managed uplink"}]`, nil},
		{"comment mark in a rule", `"firewall": {"chains": [{"table": "filter", "name": "A", "rules": ["-m comment --comment netagent -j ACCEPT"]}]}`,
			[]string{`firewall.chains[0].rules[0]: the comment "netagent" is reserved: netagent marks its own chains and jumps with it`}},
		{"quoted comment mark in a rule", `"firewall": {"chains": [{"table": "filter", "name": "A", "rules": ["-j ACCEPT", "-m comment --comment \"netagent:x\" -j DROP"]}]}`,
			[]string{`firewall.chains[0].rules[1]: the comment "netagent:x" is reserved: netagent marks its own chains and jumps with it`}},
		{"other comment", `"firewall": {"chains": [{"table": "filter", "name": "A", "rules": ["-m comment --comment \"from netagent\" -j ACCEPT"]}]}`, nil},
	})
	sc := loadSchema(t)
	for _, d := range []string{
		`"interfaces": [{"name": "e", "type": "physical", "alias": "netagent"}]`,
		`"interfaces": [{"name": "e", "type": "physical", "alias": "netagent:wan"}]`,
		`"firewall": {"chains": [{"table": "filter", "name": "A", "rules": ["-m comment --comment netagent -j ACCEPT"]}]}`,
	} {
		errs := sc.validateJSON([]byte(doc(d)))
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, "not matched") }) {
			t.Errorf("schema accepts %s: %q", d, errs)
		}
	}
}

// The longest alias is 246 bytes: the kernel keeps 255, and a link netagent
// creates carries "netagent:" (9 bytes) in front of it. The schema agrees.
func TestValidateAliasLength(t *testing.T) {
	for _, typ := range []string{"physical", "bridge"} {
		ok := strings.Repeat("a", 246)
		tooLong := strings.Repeat("a", 247)
		runValidateCases(t, []validateCase{
			{typ + " 246 bytes", fmt.Sprintf(`"interfaces": [{"name": "e", "type": %q, "alias": %q}]`, typ, ok), nil},
			{typ + " 247 bytes", fmt.Sprintf(`"interfaces": [{"name": "e", "type": %q, "alias": %q}]`, typ, tooLong),
				[]string{`interfaces[0].alias: is 247 bytes long, longer than 246 (the kernel's 255 less the 9 of netagent's mark "netagent:")`}},
			{typ + " 255 bytes", fmt.Sprintf(`"interfaces": [{"name": "e", "type": %q, "alias": %q}]`, typ, strings.Repeat("b", 255)),
				[]string{`interfaces[0].alias: is 255 bytes long, longer than 246 (the kernel's 255 less the 9 of netagent's mark "netagent:")`}},
		})
	}
	if MaxAlias != 246 {
		t.Errorf("MaxAlias = %d, want 246", MaxAlias)
	}
	sc := loadSchema(t)
	errs := sc.validateJSON([]byte(doc(fmt.Sprintf(`"interfaces": [{"name": "e", "type": "bridge", "alias": %q}]`, strings.Repeat("a", 247)))))
	if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, "interfaces[0].alias: maxLength 246") }) {
		t.Errorf("schema accepts a 247-byte alias: %q", errs)
	}
}
