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
		{"dns:example.org", "dns:example.org"},
		{"dns:Example.ORG.", "dns:Example.ORG"},
		{"dns:example.org@192.0.2.53", "dns:example.org@192.0.2.53:53"},
		{"dns:example.org@192.0.2.53:5353,addr=192.0.2.10", "dns:example.org@192.0.2.53:5353,addr=192.0.2.10"},
		{"dns:example.org@2001:db8::53", "dns:example.org@[2001:db8::53]:53"},
		{"dns:example.org@[2001:db8::53]", "dns:example.org@[2001:db8::53]:53"},
		{"dns:_sip._udp.example.org,timeout=1s,addr=2001:db8::1", "dns:_sip._udp.example.org,addr=2001:db8::1,timeout=1s"},
		{"http://192.0.2.1/health", "http://192.0.2.1/health"},
		{"http://[2001:db8::1]:8080/", "http://[2001:db8::1]:8080/"},
		{"https://example.org/health?full=1,status=2xx", "https://example.org/health?full=1"},
		{"https://example.org/,status=204,body=ok=1,ca=/etc/ca.pem,addr=192.0.2.1,timeout=5s", "https://example.org/,status=204,body=ok=1,ca=/etc/ca.pem,addr=192.0.2.1,timeout=5s"},
		{"http://192.0.2.1,status=3xx", "http://192.0.2.1,status=3xx"},
		{"arping:192.0.2.1@eth0", "arping:192.0.2.1@eth0"},
		{"arping:192.0.2.1@eth0,count=1,timeout=1s", "arping:192.0.2.1@eth0,count=1,timeout=1s"},
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
		{"", "want ping:HOST, tcp:HOST:PORT, dns:NAME[@SERVER]"},
		{"192.0.2.1", "want ping:HOST, tcp:HOST:PORT, dns:NAME[@SERVER]"},
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
		{"dns:example.org,timeout=2h", `option timeout: "2h" is not a positive duration of at most 1h0m0s`},
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
		{"dns:", "no name"},
		{"dns:@192.0.2.53", "no name"},
		{"dns:exa mple.org", `character ' '`},
		{"dns:a..b", "a label is empty"},
		{"dns:" + strings.Repeat("a", 64) + ".org", "longer than 63"},
		{"dns:" + strings.Repeat("a.", 127) + "org", "at most 253"},
		{"dns:example.org@ns.example", `server: host "ns.example" is not an IP address`},
		{"dns:example.org@192.0.2.53:0", "a port from 1 to 65535"},
		{"dns:example.org@0.0.0.0", "not a unicast address"},
		{"dns:example.org,addr=example.net", "option addr"},
		{"dns:example.org,count=2", `unknown option "count" (want one of timeout, addr)`},
		{"http:", "names no host"},
		{"http:///path", "names no host"},
		{"https://user:pw@example.org/", "credentials in a probe are refused"},
		{"https://example.org/#2xx", "a fragment is never sent"},
		{"http://example.org:0/", `port "0" is not a number from 1 to 65535`},
		{"http://exa_mple!.org/", `character '!'`},
		{"http://example.org/,status=2x", `"2x" is neither a class (2xx) nor a code (204)`},
		{"http://example.org/,status=600", "neither a class"},
		{"http://example.org/,status=20a", "neither a class"},
		{"http://example.org/,body=", "option body: empty"},
		{"http://example.org/,ca=/etc/ca.pem", "a CA file only goes with an https URL"},
		{"https://example.org/,ca=ca.pem", `"ca.pem" is not an absolute path`},
		{"https://example.org/,count=1", `unknown option "count" (want one of timeout, addr, status, body, ca)`},
		{"arping:192.0.2.1", "want arping:ADDR@DEV"},
		{"arping:192.0.2.1@", "want arping:ADDR@DEV"},
		{"arping:@eth0", "no host"},
		{"arping:192.0.2.1@a/b", `"a/b" is not a link name`},
		{"arping:192.0.2.1@" + strings.Repeat("e", 16), "is not a link name"},
		{"arping:2001:db8::1@eth0", "IPv4 addresses only: probe an IPv6 neighbour with ping:2001:db8::1%eth0"},
		{"arping:192.0.2.1@eth0,size=1", `unknown option "size" (want one of count, interval, timeout)`},
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
