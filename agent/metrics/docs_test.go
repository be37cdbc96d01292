package metrics

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
)

// daemonDoc lists every metric: the daemon's and the rollout controller's.
const daemonDoc = "../../docs/daemon.md"

// registered are the names of the metrics of every collector and Desc the
// value v (a *Metrics, a *Rollouts) holds in its fields: what its
// registry serves, vectors without series included.
func registered(t *testing.T, v any) []string {
	t.Helper()
	descs := make(chan *prometheus.Desc, 64)
	rv := reflect.ValueOf(v).Elem()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		switch x := f.Interface().(type) {
		case *prometheus.Registry:
		case prometheus.Collector:
			x.Describe(descs)
		case *prometheus.Desc:
			descs <- x
		}
	}
	close(descs)
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	seen := map[string]bool{}
	var names []string
	for d := range descs {
		m := fq.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	return names
}

// TestDocsListEveryMetric: docs/daemon.md has a table row for every
// metric the daemon and the rollout controller register.
func TestDocsListEveryMetric(t *testing.T) {
	data, err := os.ReadFile(daemonDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	names := append(registered(t, New()), registered(t, NewRollouts())...)
	if len(names) < 19 {
		t.Fatalf("found only %d metrics: %q", len(names), names)
	}
	for _, n := range names {
		if !strings.Contains(doc, "| `"+n+"` |") {
			t.Errorf("docs/daemon.md has no row for the metric %s", n)
		}
	}
}
