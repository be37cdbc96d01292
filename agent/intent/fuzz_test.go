package intent

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseValidate checks that no input makes Parse, Validate or Merge
// panic, that every error they return is a list of *FieldError, and that
// Marshal writes every parsed route as json.Marshal does.
func FuzzParseValidate(f *testing.F) {
	f.Add(readTestdata(f, "gateway.json"))
	f.Add(readTestdata(f, "bonded.json"))
	f.Add([]byte(`{"version": 1, "interfaces": [{"name": "a", "type": "vlan", "vlan": {"parent": "a", "id": 0}}]}`))
	f.Add([]byte(`{"version": 1, "routes": [{"to": "default", "via": "fe80::1"}], "rules": [{"priority": 1}]}`))
	f.Add([]byte(`{"version": 1, "firewall": {"chains": [{"table": "nat", "name": "A", "rules": ["'"]}]}}`))
	f.Add([]byte(`{"version": 1, "interfaces": [{"name": "a", "type": "bond", "master": "b"}, {"name": "b", "type": "bridge", "master": "a"}]}`))
	f.Add([]byte(nftPriorities(`-150`, `"filter"`)))
	f.Add([]byte(`{"version": 1, "interfaces": [{"name": "e", "type": "physical", "adresses": []}, {"name": "b", "type": "bridge", "mtu": 0}],
		"routes": [{"to": "10.0.0.0/8", "dev": "e"}, {"to": "x", "metric": "1"}, {"to": "default", "dev": "b"}], "dns": {"servers": 1}}`))
	f.Add([]byte(`{"version": 1, "nftables": {"tables": [{"family": "inet", "name": "t", "sets": [{"name": "s", "type": "ipv4_addr", "elements": ["10.0.0.1", "10.0.0.0"]}],
		"chains": [{"name": "c", "rules": [{"saddr": "@s", "mark": 7, "ctState": ["new"], "verdict": "drop"}]}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastMatchesSlow(t, data)
		in, err := Parse(data)
		if err != nil {
			checkFieldErrorsOnly(t, err)
			if part := ParsePartial(data, err); part != nil { // what validate judges besides the shape errors
				checkFieldErrorsOnly(t, part.Validate())
			}
			return
		}
		checkFieldErrorsOnly(t, in.Validate())
		for i := range in.Routes {
			want, _ := json.Marshal(&in.Routes[i])
			if got := in.Routes[i].appendJSON(nil); string(got) != string(want) {
				t.Fatalf("routes[%d]: Marshal writes %s, json.Marshal %s", i, got, want)
			}
		}
		one, err := Merge(map[string]*Intent{"a": in})
		checkFieldErrorsOnly(t, err)
		checkFieldErrorsOnly(t, one.Validate())
		merged, err := Merge(map[string]*Intent{"a": in, "b": in})
		checkFieldErrorsOnly(t, err)
		checkFieldErrorsOnly(t, merged.Validate())
	})
}

// checkFieldErrorsOnly fails unless err is nil or made of *FieldError.
func checkFieldErrorsOnly(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error is not joined: %v", err)
	}
	for _, e := range joined.Unwrap() {
		fe, ok := e.(*FieldError)
		if !ok {
			t.Fatalf("error %T is not a *FieldError: %v", e, e)
		}
		if strings.HasPrefix(fe.Msg, errDecodeAfterShape) {
			t.Fatalf("the shape check missed what Decode refused: %v", fe)
		}
	}
}

// checkFastMatchesSlow fails if parseFast accepts data that parseSlow
// refuses, or decodes it otherwise.
func checkFastMatchesSlow(t *testing.T, data []byte) {
	t.Helper()
	fast, ok := parseFast(data)
	if !ok {
		return
	}
	slow, err := parseSlow(data)
	if err != nil {
		t.Fatalf("parseFast accepted what parseSlow refuses: %v\n%s", err, data)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("parseFast decoded\n%+v\nparseSlow\n%+v\nfrom %s", fast, slow, data)
	}
}
