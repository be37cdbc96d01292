package intent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Parse decodes one intent file strictly. Before decoding, it checks the
// document's shape against the Go types and reports every problem at once,
// each with its JSON path: syntax errors, values of the wrong JSON type
// (null included), integers out of range for their field, unknown fields
// (matched case-sensitively), fields given twice in one object, and data
// after the top-level object. The version must be Version; a document of
// another version is rejected with that error alone.
//
// Parse checks the shape only; call Validate (on the merged intent, when
// there are several files) for the meaning.
func Parse(data []byte) (*Intent, error) {
	if len(data) > MaxDocumentSize {
		return nil, errors.Join(&FieldError{Msg: fmt.Sprintf("the document is %d bytes: %v", len(data), errTooLarge)})
	}
	if in, ok := parseFast(data); ok {
		return in, nil
	}
	return parseSlow(data)
}

// parseSlow is Parse in three passes over data: the version, the shape
// (every problem, with its path), then encoding/json. It decides what
// Parse accepts and says why it refuses; parseFast takes the documents it
// accepts, in one pass.
func parseSlow(data []byte) (*Intent, error) {
	if err := checkVersion(data); err != nil {
		return nil, err
	}
	if err := checkShape(data); err != nil {
		return nil, err
	}
	var in Intent
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		// The shape check should have caught anything Decode refuses; the
		// fuzz test looks for this message.
		return nil, errors.Join(&FieldError{Msg: fmt.Sprintf("%s: %v", errDecodeAfterShape, err)})
	}
	return &in, nil
}

// checkVersion rejects a document whose top-level version is a number other
// than Version, or missing. Anything it cannot read is left to checkShape.
func checkVersion(data []byte) error {
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) != nil {
		return nil
	}
	raw, ok := probe["version"]
	if !ok {
		return errors.Join(fieldError(Origin{Path: "version"}, "is required (want %d)", Version))
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil || n.String() == strconv.Itoa(Version) {
		return nil
	}
	return errors.Join(fieldError(Origin{Path: "version"}, "%s is not supported (want %d)", n, Version))
}
