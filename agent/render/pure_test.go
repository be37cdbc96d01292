package render

import (
	"os/exec"
	"strings"
	"testing"
)

// Rendering is pure: the package and everything it imports stay away from
// netlink, the configurators, iptables and namespaces. (The unit tests
// above run without privileges and without a kernel to talk to.)
func TestRenderIsPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"vishvananda/netlink", "vishvananda/netns", "go-iptables",
			"netagent/configurators", "netagent/reconciler", "golang.org/x/sys/unix", "os/exec"} {
			if strings.Contains(dep, banned) {
				t.Errorf("agent/render depends on %s", dep)
			}
		}
	}
}
