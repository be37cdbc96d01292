package intent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestParseFastTakesValidFiles checks that the one-pass parser takes the
// valid intents of the tests and the corpus, as parseSlow decodes them.
func TestParseFastTakesValidFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	corpus, _ := filepath.Glob("../../test/corpus/*.json")
	files = append(files, corpus...)
	files = append(files, "../../examples/nftables-edge.json")
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	docs := map[string][]byte{
		"big":     bigIntent(50),
		"escapes": []byte(`{"version": 1, "interfaces": [{"name": "e\u0074h0", "type": "physical", "alias": "caf\u00e9 \"x\"", "mtu": 9000}], "sysctls": {"net.ipv4.ip_forward": "1"}}`),
		"utf8":    []byte("{\"version\": 1, \"interfaces\": [{\"name\": \"eth0\", \"type\": \"physical\", \"alias\": \"café\"}]}"),
		"empty":   []byte(`{"version":1,"interfaces":[],"sysctls":{},"firewall":{}}`),
		// An nftables priority, a number or a name, through its own
		// UnmarshalJSON.
		"priorities": []byte(nftPriorities(`-150`, `"filter"`, `"sr\u0063nat"`, `0`)),
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = data
	}
	for name, data := range docs {
		if _, err := parseSlow(data); err != nil {
			continue // an invalid file of the corpus
		}
		if _, ok := parseFast(data); !ok {
			t.Errorf("%s: parseFast refused a valid document", name)
		}
		checkFastMatchesSlow(t, data)
	}
}

// TestParseFastRefusesWhatSlowRefuses checks, on documents that each break
// one rule, that the one-pass parser leaves them to the slow path.
func TestParseFastRefusesWhatSlowRefuses(t *testing.T) {
	const ok = `{"version": 1, "routes": [{"to": "10.0.0.0/8", "dev": "eth0", "metric": 5}]}`
	bad := []string{
		``, `{`, `[]`, `null`, ok + `x`, ok + `{}`, strings.Replace(ok, `}]}`, `}],}`, 1),
		strings.Replace(ok, `"version": 1`, `"version": 2`, 1),
		strings.Replace(ok, `"version": 1`, `"version": 1.0`, 1),
		strings.Replace(ok, `"version": 1, `, ``, 1),
		strings.Replace(ok, `"metric": 5`, `"metric": -1`, 1),
		strings.Replace(ok, `"metric": 5`, `"metric": 4294967296`, 1),
		strings.Replace(ok, `"metric": 5`, `"metric": 5.5`, 1),
		strings.Replace(ok, `"metric": 5`, `"metric": 5e0`, 1),
		strings.Replace(ok, `"metric": 5`, `"metric": 05`, 1),
		strings.Replace(ok, `"metric": 5`, `"metric": "5"`, 1),
		strings.Replace(ok, `"metric": 5`, `"metric": null`, 1),
		strings.Replace(ok, `"metric": 5`, `"metric": 5, "metric": 6`, 1),
		strings.Replace(ok, `"metric": 5`, `"Metric": 5`, 1),
		strings.Replace(ok, `"metric": 5`, `"color": 5`, 1),
		strings.Replace(ok, `"dev": "eth0"`, `"dev": "eth0`, 1),
		strings.Replace(ok, `"dev": "eth0"`, "\"dev\": \"et\x01h0\"", 1),
		strings.Replace(ok, `"dev": "eth0"`, `"dev": true`, 1),
		strings.Replace(ok, `"dev": "eth0"`, `"onlink": tru`, 1),
		strings.Replace(ok, `"dev": "eth0"`, `"onlink": 1`, 1),
		strings.Replace(ok, `"routes": [`, `"routes": [,`, 1),
		`{"version": 1, "sysctls": {"a": "1", "a": "2"}}`,
		`{"version": 1, "sysctls": {"a": 1}}`,
		`{"version": 1, "interfaces": [{"name": "b", "type": "bond", "bond": null}]}`,
		`{"version": 1, "interfaces": [{"name": "b", "type": "bond", "bond": []}]}`,
		`{"version": 1, "firewall": {"chains": {}}}`,
		nftPriorities(`null`), nftPriorities(`1.5`), nftPriorities(`true`), nftPriorities(`[]`), nftPriorities(`{}`), nftPriorities(`1e2`),
	}
	for _, doc := range bad {
		if _, err := parseSlow([]byte(doc)); err == nil {
			t.Errorf("parseSlow took %s", doc)
		}
		if _, ok := parseFast([]byte(doc)); ok {
			t.Errorf("parseFast took %s", doc)
		}
	}
}

// nftPriorities is an intent of one nftables table with a base chain of
// each priority given (JSON).
func nftPriorities(prios ...string) string {
	var chains []string
	for i, p := range prios {
		chains = append(chains, `{"name": "c`+strconv.Itoa(i)+`", "type": "filter", "hook": "input", "priority": `+p+`}`)
	}
	return `{"version": 1, "nftables": {"tables": [{"family": "inet", "name": "t", "chains": [` + strings.Join(chains, ", ") + `]}]}}`
}
