package metrics

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseText reads metrics in the text format into a map from each sample's
// name with its labels, as the text shows them
// (`netagent_items{state="failed"}`), to its value. It is for tests and
// scripts: comments are skipped, timestamps are not allowed.
func ParseText(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("line %d: %q: no value", n, line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}
