package importer

import (
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
)

// TestLeaveOutDangling: under SkipUnsupported, what names an interface
// left out goes too, and what named that, each with a warning.
func TestLeaveOutDangling(t *testing.T) {
	in := &intent.Intent{Version: intent.Version,
		Interfaces: []intent.Interface{
			{Name: "eth0", Type: intent.LinkPhysical, Master: "br0"},
			{Name: "eth1", Type: intent.LinkPhysical, Addresses: []string{"192.0.2.1/24"}},
		},
		Routes: []intent.Route{{To: "198.51.100.0/24", Dev: "eth0"}, {To: "203.0.113.0/24", Via: "192.0.2.9"}},
	}
	c := NewCollector(Options{SkipUnsupported: true})
	c.Unsupported(Refusal{Pos: Position{File: "f", Line: 3, Column: 1}, Key: "br0", Why: "refused", Object: "br0"})
	c.LeaveOutDangling(in, "f")
	res, err := c.Finish(in, "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Interfaces) != 1 || in.Interfaces[0].Name != "eth1" || len(in.Routes) != 1 || in.Routes[0].Via != "192.0.2.9" {
		t.Errorf("left: %+v %+v", in.Interfaces, in.Routes)
	}
	var got []string
	for _, w := range res.Warnings[1:] {
		got = append(got, w.Error())
	}
	want := `f: interface eth0: names "br0" (at interfaces[0].master), which was left out|` +
		`f: route to 198.51.100.0/24: names "eth0" (at routes[0].dev), which was left out`
	if strings.Join(got, "|") != want {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.ReplaceAll(want, "|", "\n"))
	}
}

// TestLeaveOutDanglingOnlyWhenSkipping: without SkipUnsupported, or with
// nothing left out, a dangling name stays for Finish to report.
func TestLeaveOutDanglingOnlyWhenSkipping(t *testing.T) {
	for _, opts := range []Options{{}, {SkipUnsupported: true}} {
		in := &intent.Intent{Version: intent.Version, Interfaces: []intent.Interface{{Name: "eth0", Type: intent.LinkPhysical, Master: "br0"}}}
		c := NewCollector(opts)
		c.LeaveOutDangling(in, "f")
		if _, err := c.Finish(in, "f"); err == nil || !strings.Contains(err.Error(), `interface "br0" is not defined`) {
			t.Errorf("%+v: err %v", opts, err)
		}
	}
}
