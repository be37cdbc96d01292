package oneshot

import (
	"slices"
	"testing"
)

// The intent diff matches list objects by identity and reports changed
// fields with their paths, added and removed objects, and map keys.
func TestIntentDiff(t *testing.T) {
	a := `{"version":1,"interfaces":[{"name":"lan0","type":"veth","mtu":1400},{"name":"old0","type":"bridge"}],
	  "routes":[{"to":"10.0.0.0/8","via":"192.0.2.1"},{"to":"10.0.0.0/8","via":"192.0.2.9","metric":5}],
	  "sysctls":{"net.ipv4.ip_forward":"1"}}`
	b := `{"version":1,"interfaces":[{"name":"new0","type":"bridge"},{"name":"lan0","type":"veth","mtu":1500}],
	  "routes":[{"to":"10.0.0.0/8","via":"192.0.2.2"},{"to":"10.0.0.0/8","via":"192.0.2.9","metric":5}],
	  "sysctls":{"net.ipv4.ip_forward":"0"},"firewall":{"chains":[{"table":"filter","name":"IN"}]}}`
	changes, err := intentDiff([]byte(a), []byte(b))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.String())
	}
	want := []string{
		`+ firewall: {"chains":[{"name":"IN","table":"filter"}]}`,
		`~ interfaces[lan0].mtu: 1400 -> 1500`,
		`- interfaces[old0]: {"name":"old0","type":"bridge"}`,
		`+ interfaces[new0]: {"name":"new0","type":"bridge"}`,
		`~ routes[10.0.0.0/8].via: "192.0.2.1" -> "192.0.2.2"`,
		`~ sysctls.net.ipv4.ip_forward: "1" -> "0"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("diff:\n%q\nwant:\n%q", got, want)
	}
	if same, _ := intentDiff([]byte(a), []byte(a)); len(same) != 0 {
		t.Errorf("diff of an intent with itself: %v", same)
	}
}
