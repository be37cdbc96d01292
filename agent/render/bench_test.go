package render

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkLoad100kRoutes is what `netagent validate` does with one file
// of 100k routes over one link (parse, merge, validate, render).
func BenchmarkLoad100kRoutes(b *testing.B) {
	var s strings.Builder
	s.WriteString(`{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "addresses": ["10.0.0.1/8"]}], "routes": [`)
	for i := range 100_000 {
		if i > 0 {
			s.WriteString(",")
		}
		v := i * 16
		fmt.Fprintf(&s, `{"to": "172.%d.%d.%d/28", "via": "10.0.0.254", "dev": "eth0", "metric": 100}`, 16+v>>16, v>>8&255, v&255)
	}
	s.WriteString(`]}`)
	files := map[string][]byte{"routes.json": []byte(s.String())}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(files); err != nil {
			b.Fatal(err)
		}
	}
}
