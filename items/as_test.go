package items_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/netagent/netagent/items"
)

func TestAs(t *testing.T) {
	r := &items.Route{}
	got, err := items.As[*items.Route](r)
	if err != nil || got != r {
		t.Fatalf("As on a route: %v %v", got, err)
	}
	_, err = items.As[*items.Route](&items.Rule{})
	if !errors.Is(err, items.ErrWrongType) || !strings.Contains(err.Error(), "*items.Rule where *items.Route was expected") {
		t.Fatalf("As on a rule: %v", err)
	}
	var nilRoute *items.Route
	if _, err := items.As[*items.Route](nilRoute); !errors.Is(err, items.ErrWrongType) {
		t.Fatalf("As on a nil route: %v", err)
	}
}

func TestForwardingSysctlKeys(t *testing.T) {
	for _, tt := range []struct {
		key           string
		global, perIf string // family, "" when not
	}{
		{"net.ipv4.ip_forward", "ipv4", ""},
		{"net.ipv4.conf.all.forwarding", "ipv4", ""},
		{"net.ipv6.conf.all.forwarding", "ipv6", ""},
		{"net.ipv4.conf.eth0.forwarding", "", "ipv4"},
		{"net.ipv6.conf.eth0/100.forwarding", "", "ipv6"},
		{"net.ipv6.conf.default.forwarding", "", "ipv6"},
		{"net.ipv4.conf.eth0.rp_filter", "", ""},
		{"net.ipv6.conf.eth0.forwarding.x", "", ""},
	} {
		g, gok := items.GlobalForwardingSysctl(tt.key)
		p, pok := items.InterfaceForwardingSysctl(tt.key)
		if g != tt.global || gok != (tt.global != "") || p != tt.perIf || pok != (tt.perIf != "") {
			t.Errorf("%s: global %q %v, per-interface %q %v", tt.key, g, gok, p, pok)
		}
	}
}
