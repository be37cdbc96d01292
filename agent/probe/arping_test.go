package probe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/probe"
)

func TestArping(t *testing.T) {
	here, _ := pair(t)
	mustPass(t, here, "arping:"+peer4+"@pr0")
	mustFail(t, here, "arping:"+absent4+"@pr0,count=2,interval=50ms,timeout=300ms", "no ARP reply to 2 requests within 300ms")
	// A probe that cannot run is no failed probe.
	for spec, why := range map[string]string{
		"arping:" + peer4 + "@absent0": "link absent0",
		"arping:" + peer4 + "@lo":      "link lo has no Ethernet address",
	} {
		err := run(t, here, spec)
		if err == nil || errors.Is(err, probe.ErrFailed) || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want an error saying %q (not a failed probe)", spec, err, why)
		}
	}
}

// Without an IPv4 address on the link the request is an ARP probe (from
// 0.0.0.0), which the neighbour answers too.
func TestArpingWithoutAddress(t *testing.T) {
	here, _ := pair(t)
	l, err := here.NL.LinkByName("pr0")
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := here.NL.AddrList(l, 2) // AF_INET
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if err := here.NL.AddrDel(l, &a); err != nil {
			t.Fatal(err)
		}
	}
	mustPass(t, here, "arping:"+peer4+"@pr0")
}
