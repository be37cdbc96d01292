package netplan

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/internal/safefile"
)

// maxDepth bounds how deeply a document's mappings and lists nest
// (netplan's deepest key, a route's or a tunnel peer's, is 6 deep).
const maxDepth = 16

// maxNodes bounds a document's nodes, against a small file that is many
// tiny values.
const maxNodes = 200000

// doc is one parsed file: its name and its root mapping.
type doc struct {
	file string
	root *yaml.Node
}

// readDoc reads and parses file, refusing aliases and anchors, duplicate
// keys, documents too deep or too large, and anything that is not one
// mapping.
func readDoc(file string) (*doc, error) {
	data, _, err := safefile.ReadNamed(file, importer.MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &importer.Error{Refusals: []importer.Refusal{{Pos: importer.Position{File: file}, Key: "the document", Why: err.Error()}}}
	}
	d := &doc{file: file}
	if len(root.Content) == 0 {
		return d, nil // an empty file says nothing
	}
	count := 0
	if r := d.check(root.Content[0], 0, &count); r != nil {
		return nil, &importer.Error{Refusals: []importer.Refusal{*r}}
	}
	if root.Content[0].Kind != yaml.MappingNode {
		return nil, &importer.Error{Refusals: []importer.Refusal{d.refusal(root.Content[0], "the document", "is not a mapping")}}
	}
	d.root = root.Content[0]
	return d, nil
}

// check walks n: no alias or anchor (netplan has no use for them, and
// they are how a small file becomes a huge document), no duplicate key,
// at most maxDepth deep and maxNodes nodes.
func (d *doc) check(n *yaml.Node, depth int, count *int) *importer.Refusal {
	*count++
	switch {
	case n.Kind == yaml.AliasNode || n.Anchor != "":
		r := d.refusal(n, "the document", "aliases and anchors are refused")
		return &r
	case depth > maxDepth:
		r := d.refusal(n, "the document", fmt.Sprintf("nests deeper than %d levels", maxDepth))
		return &r
	case *count > maxNodes:
		r := d.refusal(n, "the document", fmt.Sprintf("has more than %d values", maxNodes))
		return &r
	}
	seen := map[string]bool{}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			if seen[c.Value] {
				r := d.refusal(c, c.Value, "duplicate key")
				return &r
			}
			seen[c.Value] = true
		}
		if r := d.check(c, depth+1, count); r != nil {
			return r
		}
	}
	return nil
}

// refusal is a refusal at n.
func (d *doc) refusal(n *yaml.Node, key, why string) importer.Refusal {
	return importer.Refusal{Pos: importer.Position{File: d.file, Line: n.Line, Column: n.Column}, Key: key, Why: why}
}

// dirRank orders the directories netplan reads: a file in /run shadows
// one of the same name in /etc, which shadows one in /lib.
func dirRank(file string) int {
	dir := filepath.Dir(file)
	switch {
	case strings.HasSuffix(dir, "/run/netplan"):
		return 3
	case strings.HasSuffix(dir, "/etc/netplan"):
		return 2
	case strings.HasSuffix(dir, "/lib/netplan"):
		return 1
	}
	return 0
}

// order is files in netplan's order: by base name, lexically; of files of
// the same base name only the one of the highest directory (run, etc,
// lib; else the last given) is read.
func order(files []string) []string {
	byBase := map[string]string{}
	for _, f := range files {
		b := filepath.Base(f)
		if old, ok := byBase[b]; !ok || dirRank(f) >= dirRank(old) {
			byBase[b] = f
		}
	}
	bases := make([]string, 0, len(byBase))
	for b := range byBase {
		bases = append(bases, b)
	}
	slices.Sort(bases)
	out := make([]string, len(bases))
	for i, b := range bases {
		out[i] = byBase[b]
	}
	return out
}

// pair is a mapping's key and value.
type pair struct{ k, v *yaml.Node }

// pairs is mapping n's entries, in order.
func pairs(n *yaml.Node) []pair {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, pair{n.Content[i], n.Content[i+1]})
	}
	return out
}
