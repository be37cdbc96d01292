package firewall

import (
	"encoding/json"

	"github.com/netagent/netagent/internal/jsonstr"
)

// The records file is about 100 bytes a rule (1 MB at 10k rules), written
// after every batch that writes a chain; encoding/json took 3-7 ms of an
// initial apply of 10k rules for it. appendRecords writes the same bytes
// as json.Marshal(recordsOnDisk{...}), each record's part made once
// (chainRecord.json) and kept while the record lives, so that a write
// after a change of one chain encodes that chain only.

// appendRecords appends the records file holding parts (each a record's
// JSON object) to b.
func appendRecords(b []byte, parts [][]byte) []byte {
	b = append(b, `{"chains":[`...)
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p...)
	}
	return append(b, "]}"...)
}

// appendRecordFile appends f as json.Marshal writes it.
func appendRecordFile(b []byte, f *recordFile) ([]byte, error) {
	b = append(b, `{"family":`...)
	b = jsonstr.Append(b, f.Family)
	b = append(b, `,"table":`...)
	b = jsonstr.Append(b, f.Table)
	b = append(b, `,"chain":`...)
	b = jsonstr.Append(b, f.Chain)
	b = appendJSONStrings(b, `,"intendedRules":`, f.IntendedRules)
	b = appendJSONStrings(b, `,"kernelRules":`, f.KernelRules)
	for _, old := range []struct {
		key   string
		rules [][]string
	}{{"intended", f.Intended}, {"kernel", f.Kernel}} {
		if len(old.rules) == 0 {
			continue // omitempty
		}
		data, err := json.Marshal(old.rules)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"`+old.key+`":`...), data...)
	}
	return append(b, '}'), nil
}

// jsonSize is about the length of f's JSON: exact when no string needs
// escaping and f has no fields of older versions.
func (f *recordFile) jsonSize() int {
	n := len(`{"family":"","table":"","chain":"","intendedRules":[],"kernelRules":[]}`) +
		len(f.Family) + len(f.Table) + len(f.Chain)
	for _, list := range [][]string{f.IntendedRules, f.KernelRules} {
		for _, s := range list {
			n += len(s) + 3
		}
	}
	return n
}

// appendJSONStrings appends key and list as a JSON array, nothing for an
// empty list (omitempty).
func appendJSONStrings(b []byte, key string, list []string) []byte {
	if len(list) == 0 {
		return b
	}
	b = append(b, key...)
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, s)
	}
	return append(b, ']')
}
