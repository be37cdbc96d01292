package intent

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// goEnums lists the values of every enumerated string type, which the
// schema's enums must equal.
var goEnums = map[reflect.Type][]string{
	reflect.TypeFor[LinkType]():       enumStrings(linkTypes),
	reflect.TypeFor[LinkState]():      enumStrings(linkStates),
	reflect.TypeFor[DriftPolicy]():    enumStrings(driftPolicies),
	reflect.TypeFor[BondMode]():       enumStrings(bondModes),
	reflect.TypeFor[LACPRate]():       enumStrings(lacpRates),
	reflect.TypeFor[XmitHashPolicy](): enumStrings(hashPolicies),
	reflect.TypeFor[VLANProtocol]():   enumStrings(vlanProtos),
	reflect.TypeFor[MacvlanMode]():    enumStrings(macvlanModes),
	reflect.TypeFor[IP6TnlMode]():     enumStrings(ip6tnlModes),
	reflect.TypeFor[IpvlanMode]():     enumStrings(ipvlanModes),
	reflect.TypeFor[IpvlanFlag]():     enumStrings(ipvlanFlags),
	reflect.TypeFor[RouteType]():      enumStrings(routeTypes),
	reflect.TypeFor[RoutePref]():      enumStrings(routePrefs),
	reflect.TypeFor[RuleAction]():     enumStrings(ruleActions),
	reflect.TypeFor[Scope]():          enumStrings(scopes),
	reflect.TypeFor[Family]():         enumStrings(families),
	reflect.TypeFor[ChainFamily]():    enumStrings(chainFams),
	reflect.TypeFor[FirewallTable]():  enumStrings(fwTables),
	reflect.TypeFor[BuiltinChain]():   enumStrings(builtins),
	reflect.TypeFor[Duplex]():         enumStrings(duplexes),
	reflect.TypeFor[WakeOnLanMode]():  enumStrings(wakeOnLanModes),
}

func enumStrings[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	slices.Sort(out)
	return out
}

// TestSchemaMatchesTypes walks the Go types and the schema side by side:
// at every level the JSON property names must be the same sets, each
// property must have the JSON type its Go type decodes from, enums must
// list the Go values, and integer bounds must fit the Go type.
func TestSchemaMatchesTypes(t *testing.T) {
	sc := loadSchema(t)
	sc.compare(t, reflect.TypeFor[Intent](), sc.root, "intent")
}

// errorReporter is what the comparison reports to: a *testing.T, or a
// recorder in the test that shows it catches an undocumented field.
type errorReporter interface {
	Errorf(format string, args ...any)
}

func (sc *schemaChecker) compare(t errorReporter, typ reflect.Type, s any, path string) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	m, ok := sc.resolve(s).(map[string]any)
	if !ok {
		t.Errorf("%s: schema is not an object", path)
		return
	}
	if reflect.PointerTo(typ).Implements(numberOrName) { // a number or a name (NftPriority, Centiseconds)
		if !reflect.DeepEqual(m["type"], []any{"integer", "string"}) {
			t.Errorf("%s: schema type is %v, Go type %v decodes from an integer or a string", path, m["type"], typ)
		}
		return
	}
	if reflect.PointerTo(typ).Implements(boolOrObject) && reflect.DeepEqual(m["type"], []any{"boolean", "object"}) {
		sc.compareStruct(t, typ, m, path) // "dhcp4": true or {...}
		return
	}
	if got, want := m["type"], jsonTypeName(typ); got != want {
		t.Errorf("%s: schema type is %v, Go type %v decodes from %s", path, got, typ, want)
		return
	}
	switch typ.Kind() {
	case reflect.Struct:
		sc.compareStruct(t, typ, m, path)
	case reflect.Map:
		sc.compare(t, typ.Elem(), m["additionalProperties"], path+"{}")
	case reflect.Slice:
		sc.compare(t, typ.Elem(), m["items"], path+"[]")
	case reflect.String:
		compareEnum(t, typ, m, path)
	case reflect.Bool:
	default:
		compareBounds(t, typ, m, path)
	}
}

func (sc *schemaChecker) compareStruct(t errorReporter, typ reflect.Type, m map[string]any, path string) {
	if m["additionalProperties"] != false {
		t.Errorf("%s: additionalProperties is not false", path)
	}
	props, _ := m["properties"].(map[string]any)
	var goNames []string
	for f := range fieldsOf(typ) {
		goNames = append(goNames, f.name)
		if ps, ok := props[f.name]; ok {
			sc.compare(t, f.typ, ps, path+"."+f.name)
		} else {
			t.Errorf("%s: Go field %q is not in the schema", path, f.name)
		}
	}
	for name := range props {
		if !slices.Contains(goNames, name) {
			t.Errorf("%s: schema property %q is not a Go field", path, name)
		}
	}
}

// jsonTypeName returns the JSON Schema type a Go type decodes from.
func jsonTypeName(typ reflect.Type) string {
	switch typ.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	}
	return "integer"
}

func compareEnum(t errorReporter, typ reflect.Type, m map[string]any, path string) {
	values, isEnum := goEnums[typ]
	switch {
	case typ.Name() != "string" && !isEnum:
		t.Errorf("%s: enum type %v is not in goEnums", path, typ)
	case isEnum && m["enum"] == nil:
		t.Errorf("%s: Go type %v is an enum, the schema has none", path, typ)
	case isEnum && !slices.Equal(sortedStrings(m["enum"].([]any)), values):
		t.Errorf("%s: schema enum %v, Go values %v", path, m["enum"], values)
	case !isEnum && m["enum"] != nil:
		t.Errorf("%s: schema has an enum, Go type %v has no values", path, typ)
	}
}

func compareBounds(t errorReporter, typ reflect.Type, m map[string]any, path string) {
	if _, ok := m["const"]; ok {
		return
	}
	lo, hi := float64(math.MinInt64), float64(math.MaxInt64)
	if typ.Kind() >= reflect.Uint && typ.Kind() <= reflect.Uint64 {
		lo, hi = 0, float64(uint64(1)<<typ.Bits()-1)
	} else if typ.Bits() < 64 {
		lo, hi = -float64(int64(1)<<(typ.Bits()-1)), float64(int64(1)<<(typ.Bits()-1)-1)
	}
	if min, ok := m["minimum"].(float64); !ok || min < lo {
		t.Errorf("%s: schema minimum %v is missing or below the Go type's %v", path, m["minimum"], lo)
	}
	if max, ok := m["maximum"].(float64); ok && max > hi {
		t.Errorf("%s: schema maximum %v is above the Go type's %v", path, max, hi)
	}
}

// TestSchemaObjectsAreClosed checks that every object schema in the file
// that declares properties has additionalProperties false.
func TestSchemaObjectsAreClosed(t *testing.T) {
	sc := loadSchema(t)
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "object" && v["properties"] != nil && v["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties is not false", path)
			}
			for k, sub := range v {
				walk(sub, path+"/"+k)
			}
		case []any:
			for _, sub := range v {
				walk(sub, path+"/[]")
			}
		}
	}
	walk(sc.root, "#")
	if got := sc.root["$schema"]; got != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", got)
	}
}

func TestSchemaAcceptsExamples(t *testing.T) {
	sc := loadSchema(t)
	for _, name := range []string{"gateway.json", "bonded.json"} {
		if errs := sc.validateJSON(readTestdata(t, name)); len(errs) > 0 {
			t.Errorf("%s: %s", name, strings.Join(errs, "\n"))
		}
	}
}

func TestSchemaRejects(t *testing.T) {
	sc := loadSchema(t)
	cases := []struct{ name, doc, want string }{
		{"version", `{"version": 2}`, "version: const"},
		{"unknown field", doc(`"links": []`), "links: not allowed"},
		{"vlan id", doc(`"interfaces": [{"name": "v", "type": "vlan", "vlan": {"parent": "e", "id": 5000}}]`), "interfaces[0].vlan.id: maximum 4094"},
		{"vlan section on a bridge", doc(`"interfaces": [{"name": "b", "type": "bridge", "vlan": {"parent": "e", "id": 5}}]`), "interfaces[0]: not matched"},
		{"vlan without its section", doc(`"interfaces": [{"name": "v", "type": "vlan"}]`), `interfaces[0]: required "vlan" is missing`},
		{"mac on physical", doc(`"interfaces": [{"name": "e", "type": "physical", "mac": "02:00:00:00:00:01"}]`), "interfaces[0].mac: not allowed"},
		{"name", doc(`"interfaces": [{"name": "br/lan", "type": "bridge"}]`), "interfaces[0].name: pattern"},
		{"lacpRate", doc(`"interfaces": [{"name": "b", "type": "bond", "bond": {"mode": "active-backup", "lacpRate": "fast"}}]`), "interfaces[0].bond.mode: const"},
		{"forwardDelay with stp", doc(`"interfaces": [{"name": "b", "type": "bridge", "bridge": {"stp": true, "forwardDelay": 100}}]`), "interfaces[0].bridge.forwardDelay: not matched"},
		{"remote and group", doc(`"interfaces": [{"name": "v", "type": "vxlan", "vxlan": {"vni": 1, "remote": "192.0.2.1", "group": "239.1.1.1"}}]`), "interfaces[0].vxlan: not matched"},
		{"blackhole with via", doc(`"routes": [{"to": "203.0.113.0/24", "type": "blackhole", "via": "192.0.2.1"}]`), "routes[0].via: not allowed"},
		{"unicast without via or dev", doc(`"routes": [{"to": "203.0.113.0/24"}]`), "routes[0]: anyOf: no match"},
		{"reserved table", doc(`"routes": [{"to": "default", "dev": "e", "table": 255}]`), "routes[0].table: not matched"},
		{"rule without family", doc(`"rules": [{"priority": 1, "table": 100}]`), `rules[0]: required "family" is missing`},
		{"sysctl key", doc(`"sysctls": {"kernel.panic": "1"}`), "sysctls.kernel.panic: pattern"},
		{"jumpFrom", doc(`"firewall": {"chains": [{"table": "filter", "name": "A", "jumpFrom": "PREROUTING"}]}`), "firewall.chains[0].jumpFrom: enum"},
		{"position without jumpFrom", doc(`"firewall": {"chains": [{"table": "filter", "name": "A", "position": 2}]}`), `firewall.chains[0]: dependentRequired by position "jumpFrom" is missing`},
		{"chain name", doc(`"firewall": {"chains": [{"table": "filter", "name": "FORWARD"}]}`), "firewall.chains[0].name: not matched"},
		{"empty rule", doc(`"firewall": {"chains": [{"table": "filter", "name": "A", "rules": [" "]}]}`), "firewall.chains[0].rules[0]: pattern"},
	}
	for _, tc := range cases {
		errs := sc.validateJSON([]byte(tc.doc))
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, tc.want) }) {
			t.Errorf("%s: schema errors %q, want one starting with %q", tc.name, errs, tc.want)
		}
	}
}

func TestSchemaIsACopy(t *testing.T) {
	s := Schema()
	s[0] = 'x'
	if Schema()[0] != '{' {
		t.Error("Schema returned the embedded bytes themselves")
	}
}
