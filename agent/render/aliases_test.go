package render

import (
	"strings"
	"testing"
)

// Issue 7: net.ipv4.ip_forward and net.ipv4.conf.all.forwarding are one
// kernel value. Set from two files (as the daemon merges them), both are
// rejected, each naming the other's file, and nothing is rendered.
func TestLoadRejectsSysctlAliasesAcrossFiles(t *testing.T) {
	g, err := Load(map[string][]byte{
		"10-router.json": []byte(`{"version": 1, "sysctls": {"net.ipv4.ip_forward": "1"}}`),
		"20-host.json":   []byte(`{"version": 1, "sysctls": {"net.ipv4.conf.all.forwarding": "0"}}`),
	})
	if g != nil || err == nil {
		t.Fatalf("Load = %v, %v; want an error and no graph", g, err)
	}
	for _, want := range []string{
		`10-router.json: sysctls["net.ipv4.ip_forward"]: is the same kernel value as net.ipv4.conf.all.forwarding (at sysctls["net.ipv4.conf.all.forwarding"] in 20-host.json)`,
		`20-host.json: sysctls["net.ipv4.conf.all.forwarding"]: is the same kernel value as net.ipv4.ip_forward (at sysctls["net.ipv4.ip_forward"] in 10-router.json)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
