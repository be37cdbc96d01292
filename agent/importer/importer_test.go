package importer

import (
	"errors"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
)

func TestRefusalNamesFileLineColumnKeyAndWhy(t *testing.T) {
	for _, tc := range []struct {
		r    Refusal
		want string
	}{
		{Refusal{Pos: Position{File: "a.yaml", Line: 3, Column: 5}, Key: "network.wifis", Why: "wifi"}, "a.yaml:3:5: network.wifis: wifi"},
		{Refusal{Pos: Position{File: "interfaces", Line: 7}, Key: "post-up", Why: "a command"}, "interfaces:7: post-up: a command"},
		{Refusal{Pos: Position{File: "f"}, Key: "k", Why: "w"}, "f: k: w"},
	} {
		if got := tc.r.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestCollectorRefusesOrSkips(t *testing.T) {
	unsupported := Refusal{Pos: Position{File: "f", Line: 1, Column: 1}, Key: "wifis", Why: "wifi"}
	invalid := Refusal{Pos: Position{File: "f", Line: 2, Column: 3}, Key: "mtu", Why: "not a number"}
	valid := &intent.Intent{Version: intent.Version}

	c := NewCollector(Options{})
	if c.Unsupported(unsupported) {
		t.Fatal("without SkipUnsupported, Unsupported says to leave the object out")
	}
	if _, err := c.Finish(valid, "f"); !refuses(err, unsupported) {
		t.Fatalf("Finish = %v, want the refusal %v", err, unsupported)
	}

	c = NewCollector(Options{SkipUnsupported: true})
	if !c.Unsupported(unsupported) {
		t.Fatal("with SkipUnsupported, Unsupported does not leave the object out")
	}
	res, err := c.Finish(valid, "f")
	if err != nil || len(res.Warnings) != 1 || res.Warnings[0] != unsupported {
		t.Fatalf("Finish = %+v, %v; want one warning %v", res, err, unsupported)
	}

	c.Invalid(invalid) // never skipped, even with SkipUnsupported
	if _, err := c.Finish(valid, "f"); !refuses(err, invalid) {
		t.Fatalf("Finish = %v, want the refusal %v", err, invalid)
	}
}

func TestFinishValidatesTheIntent(t *testing.T) {
	bad := &intent.Intent{Version: intent.Version, Interfaces: []intent.Interface{{Name: "br0", Type: "bridge", MTU: -1}}}
	_, err := NewCollector(Options{}).Finish(bad, "interfaces")
	var ie *Error
	if !errors.As(err, &ie) || len(ie.Refusals) != 1 || ie.Refusals[0].Pos.File != "interfaces" {
		t.Fatalf("Finish of an invalid intent = %v, want one refusal at the file", err)
	}
}

func TestEncodeParsesBack(t *testing.T) {
	in := &intent.Intent{Version: intent.Version, Interfaces: []intent.Interface{{Name: "br0", Type: "bridge", Addresses: []string{"192.0.2.1/24"}}}}
	data, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), "}\n") {
		t.Errorf("Encode does not end in a newline: %q", data)
	}
	back, err := intent.Parse(data)
	if err != nil {
		t.Fatalf("Parse(Encode(in)): %v\n%s", err, data)
	}
	again, _ := Encode(back)
	if string(again) != string(data) {
		t.Errorf("Encode(Parse(Encode(in))) differs:\n%s\n%s", again, data)
	}
}

func refuses(err error, r Refusal) bool {
	var ie *Error
	return errors.As(err, &ie) && len(ie.Refusals) == 1 && ie.Refusals[0] == r
}
