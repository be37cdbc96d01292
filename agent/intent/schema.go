package intent

import (
	"bytes"
	_ "embed"
)

// The field reference of docs/intent.md is made from schema.json's
// descriptions (TestIntentDocIsCurrent fails when it is stale).
//go:generate go run ../../internal/docgen intent -schema schema.json -page ../../docs/intent.md

//go:embed schema.json
var schema []byte

// Schema returns the JSON Schema (draft 2020-12) of the intent format, for
// editors and for tools that check intents before they reach the agent. It
// checks structure, types, enums, ranges and patterns; Validate checks
// everything else. Every call returns a fresh copy.
func Schema() []byte {
	return bytes.Clone(schema)
}
