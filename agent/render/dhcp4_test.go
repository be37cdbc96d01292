package render

import (
	"testing"

	"github.com/netagent/netagent/agent/intent"
)

// Until the lease items exist, an interface with dhcp4 is refused with
// its path, not rendered without its address; dhcp4: false renders.
func TestRenderRefusesDHCP4NotYet(t *testing.T) {
	in, err := intent.Parse([]byte(`{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "dhcp4": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Render(in)
	fe := intent.FieldErrors(err)
	if g != nil || len(fe) != 1 || fe[0].Path != "interfaces[0].dhcp4" {
		t.Fatalf("Render: graph %v, errors %v; want the dhcp4 path refused", g != nil, err)
	}
	in, err = intent.Parse([]byte(`{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "dhcp4": false}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(in); err != nil {
		t.Errorf("dhcp4 false: %v", err)
	}
}
