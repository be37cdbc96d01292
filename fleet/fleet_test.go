package fleet

import (
	"errors"
	"testing"
)

func TestLayoutKeys(t *testing.T) {
	l := Layout{Prefix: "/na/"}
	cases := map[string]string{
		l.HostDoc("h1", "base.json"):    "/na/hosts/h1/base.json",
		l.GroupDoc("edge-eu", "a.json"): "/na/groups/edge-eu/a.json",
		l.Status("h1"):                  "/na/status/h1",
		Layout{}.Host("h2"):             "/netagent/hosts/h2",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if s := l.Source("/na/groups/edge-eu/a.json"); s != "groups/edge-eu/a.json" {
		t.Errorf("Source: %q", s)
	}
	for _, k := range []string{"/na/status/h1", "/other/hosts/h/d", "/na/hosts/h", "/na/hosts/h/d/e"} {
		if s := l.Source(k); s != "" {
			t.Errorf("Source(%q) = %q, want none", k, s)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "a/b", "a\x00"} {
		if err := CheckName("host", bad); !errors.Is(err, ErrInvalidName) {
			t.Errorf("CheckName(%q) = %v", bad, err)
		}
	}
	if err := CheckName("host", "edge-01.example"); err != nil {
		t.Error(err)
	}
}

func TestLabels(t *testing.T) {
	if k, v, err := ParseLabel("site=fra-1"); err != nil || k != "site" || v != "fra-1" {
		t.Errorf("ParseLabel: %q %q %v", k, v, err)
	}
	if _, v, err := ParseLabel("canary="); err != nil || v != "" {
		t.Errorf("empty value: %q %v", v, err)
	}
	for _, bad := range []string{"site", "=x", "-a=b", "a b=c", "a=b c", "a=\x1b[0m"} {
		if _, _, err := ParseLabel(bad); err == nil {
			t.Errorf("ParseLabel(%q) accepted", bad)
		}
	}
	many := map[string]string{}
	for i := range MaxLabels + 1 {
		many[string(rune('a'+i%26))+string(rune('a'+i/26))] = "x"
	}
	if err := CheckLabels(many); !errors.Is(err, ErrInvalidName) {
		t.Errorf("CheckLabels of %d: %v", len(many), err)
	}
}
