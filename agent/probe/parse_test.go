package probe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/probe"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"ping:192.0.2.1", "ping:192.0.2.1"},
		{"ping:2001:db8::1", "ping:2001:db8::1"},
		{"ping:[2001:db8::1]", "ping:2001:db8::1"},
		{"ping:::ffff:192.0.2.1", "ping:192.0.2.1"},
		{"ping:fe80::1%eth0", "ping:fe80::1%eth0"},
		{"ping:192.0.2.1,count=3,interval=200ms,timeout=2s", "ping:192.0.2.1"},
		{"ping:192.0.2.1,timeout=5s,count=1", "ping:192.0.2.1,count=1,timeout=5s"},
		{"ping:192.0.2.1,interval=1s", "ping:192.0.2.1,interval=1s"},
		{"tcp:192.0.2.1:22", "tcp:192.0.2.1:22"},
		{"tcp:[2001:db8::1]:22", "tcp:[2001:db8::1]:22"},
		{"tcp:[fe80::1%eth0]:179,timeout=500ms", "tcp:[fe80::1%eth0]:179,timeout=500ms"},
	} {
		p, err := probe.Parse(tc.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.spec, err)
			continue
		}
		if got := p.String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.spec, got, tc.want)
		}
		if q, err := probe.Parse(p.String()); err != nil || q.String() != p.String() {
			t.Errorf("%q does not parse back to itself: %v, %v", p.String(), q, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"", "want ping:HOST or tcp:HOST:PORT"},
		{"192.0.2.1", "want ping:HOST or tcp:HOST:PORT"},
		{"icmp:192.0.2.1", `unknown kind "icmp"`},
		{"ping:", "no host"},
		{"ping:router.example", `host "router.example" is not an IP address (probes resolve no names)`},
		{"ping:192.0.2.300", "is not an IP address"},
		{"ping:0.0.0.0", "not a unicast address"},
		{"ping:ff02::1", "not a unicast address"},
		{"ping:192.0.2.1%eth0", "is not an IP address"},
		{"ping:::ffff:192.0.2.1%eth0", "a zone only goes with an IPv6 address"},
		{"ping:192.0.2.1,count=0", `option count: "0" is not a number from 1 to 100`},
		{"ping:192.0.2.1,count=many", "option count"},
		{"ping:192.0.2.1,timeout=2", `option timeout: "2" is not a positive duration`},
		{"ping:192.0.2.1,interval=-1s", "option interval"},
		{"ping:192.0.2.1,size=64", `unknown option "size" (want one of count, interval, timeout)`},
		{"ping:192.0.2.1,count", `option "count": want KEY=VALUE`},
		{"ping:192.0.2.1,count=1,count=2", `option "count" given twice`},
		{"tcp:192.0.2.1", "want tcp:HOST:PORT"},
		{"tcp:192.0.2.1:", `port "" is not a number`},
		{"tcp:192.0.2.1:0", `port "0" is not a number from 1 to 65535`},
		{"tcp:192.0.2.1:65536", `port "65536"`},
		{"tcp:192.0.2.1:ssh", `port "ssh"`},
		{"tcp:2001:db8::1:22", "an IPv6 address goes in brackets: tcp:[ADDR]:PORT"},
		{"tcp:router.example:22", "probes resolve no names"},
		{"tcp:192.0.2.1:22,count=3", `unknown option "count" (want one of timeout)`},
	} {
		_, err := probe.Parse(tc.spec)
		if !errors.Is(err, probe.ErrSpec) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"`+tc.spec+`"`) {
			t.Errorf("Parse(%q) = %v, want ErrSpec naming the spec and saying %q", tc.spec, err, tc.want)
		}
	}
}

func TestParseAllJoinsErrors(t *testing.T) {
	ps, err := probe.ParseAll([]string{"ping:192.0.2.1", "ping:bad", "tcp:192.0.2.1:22", "tcp:x"})
	if len(ps) != 2 || err == nil || !strings.Contains(err.Error(), `"ping:bad"`) || !strings.Contains(err.Error(), `"tcp:x"`) {
		t.Errorf("ParseAll = %v, %v; want the 2 good probes and both bad specs named", ps, err)
	}
}
