package oneshot

import (
	"testing"

	"github.com/netagent/netagent/agent/versions"
)

// History lists the versions oldest first, the newest marked current;
// none is an empty list (JSON []).
func TestHistory(t *testing.T) {
	sd := t.TempDir()
	if list, err := History(sd); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("none: %v, %v", list, err)
	}
	s := versions.Open(sd, 0)
	for _, doc := range []string{`{"version": 1}`, `{"version": 1, "sysctls": {"net.ipv4.ip_forward": "1"}}`} {
		if _, _, err := versions.Record(s, "test", map[string][]byte{"a.json": []byte(doc)}, versions.Any); err != nil {
			t.Fatal(err)
		}
	}
	list, err := History(sd)
	if err != nil || len(list) != 2 || list[0].Current || !list[1].Current || list[1].Number != 2 {
		t.Fatalf("%+v, %v", list, err)
	}
}
