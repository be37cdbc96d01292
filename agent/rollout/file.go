package rollout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/safefile"
)

// ReadFile reads a rollout document and the intent file it names
// (relative to the document's directory unless absolute), both bounded,
// and validates them. It returns the spec and the intent as compact JSON.
func ReadFile(path string) (*Spec, []byte, error) {
	raw, _, err := safefile.ReadNamed(path, MaxSpecBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("reading rollout document %s: %w", path, err)
	}
	spec, err := ParseSpec(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	file := spec.Intent
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(path), file)
	}
	data, _, err := safefile.ReadNamed(file, MaxIntentBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: intent: reading %s: %w", path, file, err)
	}
	if _, err := intent.Parse(data); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	compact := &bytes.Buffer{}
	if err := json.Compact(compact, data); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	return spec, compact.Bytes(), nil
}
